/* fcov_report.c - merges functional coverage files written by the runtime (NPU_FCOV=<file>, see
 * sw/run/fcov.h) and prints the cover-point table and its holes.
 *   build/fcov_report [--require-all] FILE...
 * Exit status: 0; 1 with --require-all when a point has no hit; 2 on a bad or unreadable file. */
#include <stdio.h>
#include <string.h>

#include "run/fcov.h"

int main(int argc, char **argv)
{
    npu_fcov_t c;
    int require = 0, files = 0;
    memset(&c, 0, sizeof c);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--require-all")) {
            require = 1;
            continue;
        }
        if (npu_fcov_read(argv[i], &c) != 0) {
            fprintf(stderr, "fcov_report: cannot read %s (missing or not a coverage file)\n", argv[i]);
            return 2;
        }
        files++;
    }
    if (!files) {
        fprintf(stderr, "usage: fcov_report [--require-all] FILE...\n");
        return 2;
    }
    npu_fcov_print(&c, stdout);
    return require && npu_fcov_hit_points(&c) < npu_fcov_points() ? 1 : 0;
}
