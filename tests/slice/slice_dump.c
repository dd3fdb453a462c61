/* slice_dump.c - prints what the C slicing stage chooses, one line per query read from stdin,
 * for the independent reference tests/slice/ref_slice.py to check (make slice-check).
 *
 * Query lines (config small's parameters unless S= etc. are changed by a "cfg" line):
 *   cfg S BANKS BANK_WORDS OBUF_ROWS MAX_BURST DRAM_BW LATENCY BURST_COST MAX_OUTSTANDING
 *   gemm MODE M N K
 *   conv MODE KERNEL C H W F KH KW STRIDE PAD DIL BATCH       (KERNEL fwd | dx | dw)
 * Answer per query: "visited V fitting F evaluated E best SPLIT ORDER BAND T0,T1,.. CYCLES_Q16 BYTES
 * second ..." (BAND: 0 none, else the banded input + 1, slice.h)
 * or "error MESSAGE". MODE is burst or noburst.
 */
#include <stdio.h>
#include <string.h>

#include "compile/slice/slice.h"

static void print_plan(const npu_slice_plan_t *p)
{
    printf(" %d %d %d ", p->split, p->order, p->cband ? 3 : p->band); /* 3: A's band and C's */
    for (int d = 0; d < p->nd; d++)
        printf("%s%lld", d ? "," : "", (long long)p->tile[d]);
    printf(" %llu %llu", (unsigned long long)p->cycles,
           (unsigned long long)(p->t[0].b.bytes + p->t[1].b.bytes + p->t[2].b.bytes));
}

static int kind_of(const char *s)
{
    return !strcmp(s, "fwd") ? NPU_SLICE_FWD : !strcmp(s, "dx") ? NPU_SLICE_DX : !strcmp(s, "dw") ? NPU_SLICE_DW : -1;
}

int main(void)
{
    npu_cfg_t cfg = {"small", 8, 4, 1024, 256, 8, 16, 8, 15, 24, 16, 4, 20000, 32, 30, 4, 0, 1, 0, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
    char line[512], w0[16], mode[16], kname[16], msg[200];
    while (fgets(line, sizeof line, stdin)) {
        npu_slice_result_t r;
        npu_slice_cost_t k;
        npu_conv_t c;
        int M, N, K, rc = -1;
        if (sscanf(line, "%15s", w0) != 1)
            continue;
        if (!strcmp(w0, "cfg")) {
            sscanf(line, "%*s %d %d %d %d %d %d %d %d %d", &cfg.s, &cfg.spm_banks, &cfg.spm_bank_words,
                   &cfg.obuf_rows, &cfg.max_burst_beats, &cfg.dram_bw, &cfg.dram_latency,
                   &cfg.dram_burst_cost, &cfg.max_outstanding);
            continue;
        }
        memset(&c, 0, sizeof c);
        if (!strcmp(w0, "gemm") && sscanf(line, "%*s %15s %d %d %d", mode, &M, &N, &K) == 4) {
            k = npu_slice_cost_default(&cfg, npu_slice_mode_parse(mode));
            k.runner = 1;
            rc = npu_slice_gemm(&cfg, &k, M, N, K, &r, msg, sizeof msg);
        } else if (!strcmp(w0, "conv") &&
                   sscanf(line, "%*s %15s %15s %d %d %d %d %d %d %d %d %d %d", mode, kname, &c.C, &c.H, &c.W,
                          &c.F, &c.KH, &c.KW, &c.stride, &c.pad, &c.dil, &c.batch) == 12) {
            k = npu_slice_cost_default(&cfg, npu_slice_mode_parse(mode));
            k.runner = 1;
            rc = npu_slice_conv(&cfg, &k, &c, kind_of(kname), &r, msg, sizeof msg);
        } else {
            snprintf(msg, sizeof msg, "bad query");
        }
        if (rc != 0) {
            printf("error %s\n", msg);
            continue;
        }
        printf("visited %llu fitting %llu evaluated %llu best", (unsigned long long)r.visited,
               (unsigned long long)r.fitting, (unsigned long long)r.evaluated);
        print_plan(&r.best);
        printf(" second");
        if (r.fitting > 1)
            print_plan(&r.second);
        printf("\n");
    }
    return 0;
}
