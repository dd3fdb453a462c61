/* cli_common.c - what several `npu` commands share; see commands.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "ref/golden.h"
#include "run/runtime.h"

npu_dram_timing_t npu_cli_dram_timing(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_dram_timing_t t;
    memset(&t, 0, sizeof t);
    t.bytes_per_cycle = a->dram_bw_set ? a->dram_bw : (double)cfg->dram_bw;
    t.latency = a->dram_latency_set ? a->dram_latency : (unsigned)cfg->dram_latency;
    t.burst_cost = (unsigned)cfg->dram_burst_cost;
    t.stall_pct = a->stall_pct;
    t.seed = a->seed;
    return t;
}

int npu_cli_gemm_fits(const npu_cfg_t *cfg, const npu_args_t *a)
{
    uint64_t dram = (uint64_t)1 << cfg->dram_addr_bits;
    uint64_t need = npu_gemm_dram_need(cfg, a->m, a->n, a->k, a->trans_a, a->trans_b, a->policy,
                                       dram);
    if (need == 0) {
        fprintf(stderr, "npu: gemm M=%d N=%d K=%d: no tiling fits config %s\n", a->m, a->n, a->k,
                cfg->name);
        return -1;
    }
    if (need <= dram)
        return 0;
    /* "at least": beyond the DRAM the program is not emitted, only the tensors are counted */
    fprintf(stderr, "npu: gemm M=%d N=%d K=%d needs at least %llu bytes of DRAM for its program "
            "and tensors; config %s's DRAM holds %llu bytes (DRAM_ADDR_BITS = %d)\n", a->m, a->n,
            a->k, (unsigned long long)need, cfg->name, (unsigned long long)dram,
            cfg->dram_addr_bits);
    return -1;
}

int npu_cli_random_inputs(const npu_args_t *a, int16_t **A, int16_t **B)
{
    size_t na = (size_t)a->m * (size_t)a->k, nb = (size_t)a->k * (size_t)a->n;
    *A = malloc(na * sizeof **A);
    *B = malloc(nb * sizeof **B);
    if (!*A || !*B) {
        fprintf(stderr, "npu: out of memory for the inputs\n");
        free(*A);
        free(*B);
        return -1;
    }
    npu_random_operands(a->m, a->n, a->k, a->seed, *A, *B);
    return 0;
}
