/* perf_log.c - one CSV line of exact figures per program run; see perf_log.h. */
#include "run/perf_log.h"

#include <stdio.h>

#include "hw/npu_defs.h"

uint64_t npu_prog_hash(const npu_insn_t *prog, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w < 4; w++)
            for (int b = 0; b < 4; b++) {
                h ^= (prog[i].w[w] >> (8 * b)) & 0xFFu;
                h *= 0x100000001b3ull;
            }
    return h;
}

const char *npu_perf_log_header(void)
{
    return "prog_hash,insns,state,cycles,macs,"
           "rd_prog,rd_x,rd_w,rd_y,rd_dy,rd_dx,rd_dw,rd_partial,"
           "wr_x,wr_w,wr_y,wr_dy,wr_dx,wr_dw,wr_partial";
}

int npu_perf_log_append(const char *path, const npu_insn_t *prog, size_t n, unsigned state,
                        const uint64_t *cnt)
{
    FILE *f = fopen(path, "a");
    uint64_t macs = 0;
    if (!f)
        return -1;
    if (ftell(f) == 0)
        fprintf(f, "%s\n", npu_perf_log_header());
    for (int i = 0; i < 4; i++)
        macs += cnt[NPU_CNT_macs_core0 + i];
    fprintf(f, "%016llx,%zu,%u,%llu,%llu", (unsigned long long)npu_prog_hash(prog, n), n, state,
            (unsigned long long)cnt[NPU_CNT_cycles], (unsigned long long)macs);
    for (int t = 0; t < NPU_NUM_TAGS; t++) /* program bytes read: the fetch is part of the cost */
        fprintf(f, ",%llu", (unsigned long long)cnt[NPU_CNT_dram_rd_prog + t]);
    for (int t = 1; t < NPU_NUM_TAGS; t++) /* nothing writes the program */
        fprintf(f, ",%llu", (unsigned long long)cnt[NPU_CNT_dram_wr_prog + t]);
    fputc('\n', f);
    return fclose(f) == 0 ? 0 : -1;
}
