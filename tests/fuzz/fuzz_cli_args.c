/* fuzz_cli_args.c - libFuzzer harness: npu_args_parse (sw/cli/args.c) on arbitrary argv.
 * The input is split at NUL bytes into up to 63 arguments after "npu". Checks: no crash, no
 * sanitizer report, the return code is 0 or 2, and a rejected command line has a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1), *argv[65];
    int argc = 0;
    npu_args_t a;
    char err[256];
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = 0;
    argv[argc++] = (char *)"npu";
    for (size_t i = 0; i <= size && argc < 64;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    err[0] = 0;
    int rc = npu_args_parse(argc, argv, "fuzz", &a, err, sizeof err);
    if (rc != 0 && rc != 2)
        abort();
    if (rc == 2 && !err[0])
        abort(); /* bad input must come with a message */
    if (rc == 0 && a.cmd == NPU_CMD_GEMM && (a.m < 1 || a.n < 1 || a.k < 1 || a.m > NPU_ARGS_MAX_DIM))
        abort(); /* accepted dimensions must be valid */
    free(buf);
    return 0;
}
