/* fuzz_isa.c - libFuzzer harness: the instruction decoder, encoder and disassembler (sw/hw/isa.c)
 * and the program's expected counters (npu_prog_expect) on arbitrary 16-byte words. Checks:
 * decode(w) succeeds exactly for known opcodes; a decoded word re-encodes (npu_encode) to a
 * word that decodes to the same fields; the disassembly is NUL-terminated in any buffer size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hw/isa.h"
#include "npu_params.h"
#include "prog/prog_expect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t n = size / 16;
    npu_insn_t *p = calloc(n ? n : 1, sizeof *p);
    if (!p)
        return 0;
    for (size_t i = 0; i < n; i++) {
        for (int w = 0; w < 4; w++)
            p[i].w[w] = (uint32_t)data[16 * i + 4 * w] | (uint32_t)data[16 * i + 4 * w + 1] << 8 |
                        (uint32_t)data[16 * i + 4 * w + 2] << 16 | (uint32_t)data[16 * i + 4 * w + 3] << 24;
        npu_fields_t f, g;
        npu_insn_t re;
        int known = npu_op_queue(npu_insn_op(&p[i])) != 0;
        int rc = npu_decode(&p[i], &f);
        if ((rc == 0) != known)
            abort();
        if (rc == 0) {
            if (npu_encode(&f, &re) != 0)
                abort(); /* every decoded field fits its width */
            if (npu_decode(&re, &g) != 0 || memcmp(&f, &g, sizeof f) != 0)
                abort(); /* decode(encode(decode(w))) == decode(w) */
        }
        char line[300];
        size_t cap = 1 + (size ? data[0] % sizeof line : 0);
        memset(line, 'x', sizeof line);
        int len = npu_disasm(&p[i], line, cap);
        if (len < 0 || memchr(line, 0, cap) == NULL)
            abort();
        if (cap == sizeof line && (size_t)len < cap && strlen(line) != (size_t)len)
            abort();
        npu_wave_sets_t ws;
        npu_wave_sets(f.mode & 3u, f.m, &ws);
        (void)npu_mode_fits(f.mode & 3u, f.k, f.n, 1u + (data[0] & 31u));
    }
    npu_cfg_t cfg = NPU_CFG_INIT;
    npu_prog_expect_t e;
    npu_prog_expect(&cfg, p, n < 4 ? n : 4, &e); /* its cost grows with rows x bursts */
    free(p);
    return 0;
}
