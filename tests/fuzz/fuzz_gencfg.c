/* fuzz_gencfg.c - libFuzzer harness: the configuration-file parser and checks of
 * sw/tools/gencfg.c (gencfg_check) on arbitrary bytes, and for accepted configurations the
 * generators of npu_params.h, npu_params.vh, verilator.f and npu_defs.vh (into memory).
 * gencfg reports errors on stderr: run with -close_fd_mask=2 (the Makefile does). */
#define GENCFG_NO_MAIN
#include "../../sw/tools/gencfg.c"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size ? size : 1, "r");
    if (!f)
        return 0;
    if (!size) { /* fmemopen needs a buffer: an empty file is an unread one */
        fclose(f);
        f = fopen("/dev/null", "r");
        if (!f)
            return 0;
    }
    int errs = gencfg_check(f, "fuzz.cfg");
    fclose(f);
    if (errs == 0) {
        struct buf b = {0, 0, 0};
        gen_params_h(&b);
        b.n = 0;
        gen_params_vh(&b);
        b.n = 0;
        gen_verilator_f(&b);
        b.n = 0;
        gen_defs_vh(&b);
        free(b.p);
    }
    return 0;
}
