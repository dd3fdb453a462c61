/* cmd_slice.c - `npu slice`: the slicing stage's choice for a GEMM or a convolution kernel, under
 * the burst-aware and the bytes-only cost (compile/slice, docs/compiler.md "Slicing"). A view of
 * the model: the emitters do not take its plan yet, so nothing runs on the RTL here. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "compile/conv/conv_layer.h"
#include "compile/slice/slice.h"

static const char *const k_split[NPU_SLICE_SPLITS] = {"by filters/columns (N)", "by rows (M)",
                                                      "2x2"};
static const char *const k_tensor[NPU_SLICE_TENSORS] = {"in0", "in1", "out"};

static double q16(uint64_t x) { return (double)x / 65536.0; }

static void print_plan(const char *what, const npu_slice_plan_t *p)
{
    printf("  %-7s split %s, loops", what, k_split[p->split]);
    for (int i = 0; i < p->nd; i++)
        printf(" %s", p->dim_name[p->loop[i]]);
    printf(", tiles");
    for (int d = 0; d < p->nd; d++)
        printf(" %s=%lld", p->dim_name[d], (long long)p->tile[d]);
    printf("\n          %.0f cycles predicted (compute %.0f, transfers %.0f), %llu steps\n",
           q16(p->cycles), q16(p->compute), q16(p->transfer), (unsigned long long)p->steps);
    for (int t = 0; t < NPU_SLICE_TENSORS; t++)
        printf("          %-3s %6llu transfers %10llu bytes %8llu bursts %7llu beats\n",
               k_tensor[t], (unsigned long long)p->t[t].loads,
               (unsigned long long)p->t[t].b.bytes, (unsigned long long)p->t[t].b.bursts,
               (unsigned long long)p->t[t].b.beats);
}

/* One search under one cost mode: 0, or -1 after printing why on stderr. */
static int search(const npu_cfg_t *cfg, const npu_args_t *a, const npu_conv_t *c, int kind,
                  int mode)
{
    npu_slice_cost_t k = npu_slice_cost_default(cfg, mode);
    npu_slice_result_t r;
    char msg[200];
    int rc = c ? npu_slice_conv(cfg, &k, c, kind, &r, msg, sizeof msg)
               : npu_slice_gemm(cfg, &k, a->m, a->n, a->k, &r, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "npu: slice (%s): %s\n", npu_slice_mode_name(mode), msg);
        return -1;
    }
    printf("%s cost: %llu candidates, %llu fit, %llu costed step by step\n",
           npu_slice_mode_name(mode), (unsigned long long)r.visited,
           (unsigned long long)r.fitting, (unsigned long long)r.evaluated);
    print_plan("best", &r.best);
    if (r.fitting > 1)
        print_plan("runner", &r.second);
    return 0;
}

/* The kernels of --kernel (fwd when absent; all: fwd, dx, dw) into kinds; returns the count. */
static int kinds_of(const char *kernel, int *kinds)
{
    static const char *const names[3] = {"fwd", "dx", "dw"};
    int n = 0;
    for (int i = 0; i < 3; i++)
        if ((!kernel && i == 0) || (kernel && (!strcmp(kernel, "all") || !strcmp(kernel, names[i]))))
            kinds[n++] = NPU_SLICE_FWD + i;
    return n;
}

int npu_cmd_slice(const npu_cfg_t *cfg, const npu_args_t *a)
{
    static const char *const kname[] = {"gemm", "fwd", "dx", "dw"};
    npu_conv_t conv;
    char msg[200];
    int kinds[3] = {NPU_SLICE_GEMM}, nk = 1;
    if (a->conv) {
        if (strchr(a->conv, ';')) {
            fprintf(stderr, "npu: slice --conv takes one layer, not a list\n");
            return NPU_EXIT_USAGE;
        }
        if (npu_conv_parse(a->conv, &conv, msg, sizeof msg) != 0) {
            fprintf(stderr, "npu: slice --conv: %s\n", msg);
            return NPU_EXIT_USAGE;
        }
        nk = kinds_of(a->kernel, kinds);
    }
    for (int i = 0; i < nk; i++) {
        if (a->conv)
            printf("npu slice conv %s %s (config %s)\n", a->conv, kname[kinds[i]], cfg->name);
        else
            printf("npu slice gemm M=%d N=%d K=%d (config %s)\n", a->m, a->n, a->k, cfg->name);
        if (search(cfg, a, a->conv ? &conv : NULL, kinds[i], NPU_SLICE_BURST) != 0 ||
            search(cfg, a, a->conv ? &conv : NULL, kinds[i], NPU_SLICE_NOBURST) != 0)
            return NPU_EXIT_FAIL;
    }
    return NPU_EXIT_PASS;
}
