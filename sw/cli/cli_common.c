/* cli_common.c - what several `npu` commands share; see commands.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "model/topology.h"
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

int npu_cli_gemm_dram_check(const npu_cfg_t *cfg, const npu_args_t *a, int M, int N, int K,
                            char *why, size_t n)
{
    uint64_t dram = (uint64_t)1 << cfg->dram_addr_bits;
    uint64_t need = npu_gemm_tensor_bytes(cfg, M, N, K, a->trans_a, a->trans_b, npu_args_gemm_modes(a));
    if (need == 0) {
        snprintf(why, n, "no tiling fits config %s", cfg->name);
        return NPU_GEMM_HOST_ERROR;
    }
    if (need <= dram)
        return NPU_GEMM_PASS;
    /* "at least": the tensors alone; the program would come on top */
    snprintf(why, n, "needs at least %llu bytes of DRAM for its program and tensors; the DRAM "
             "holds %llu bytes", (unsigned long long)need, (unsigned long long)dram);
    return NPU_GEMM_NO_FIT;
}

int npu_cli_gemm_fits(const npu_cfg_t *cfg, const npu_args_t *a)
{
    char why[200];
    if (npu_cli_gemm_dram_check(cfg, a, a->m, a->n, a->k, why, sizeof why) == NPU_GEMM_PASS)
        return 0;
    fprintf(stderr, "npu: gemm M=%d N=%d K=%d %s%s (config %s, DRAM_ADDR_BITS = %d)\n", a->m,
            a->n, a->k, strncmp(why, "needs", 5) ? ": " : "", why, cfg->name,
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

npu_sim_t *npu_cli_open_sim(const npu_cfg_t *cfg, const npu_args_t *a, const npu_dram_timing_t *t)
{
    char msg[256];
    npu_sim_t *sim = npu_sim_open(t);
    if (!sim) {
        fprintf(stderr, "npu: cannot open the simulator\n");
        return NULL;
    }
    if (npu_sim_beat_bytes() != (unsigned)npu_cfg_beat(cfg) ||
        npu_check_hw(cfg, sim, msg, sizeof msg) != 0) {
        if (npu_sim_beat_bytes() != (unsigned)npu_cfg_beat(cfg))
            snprintf(msg, sizeof msg, "the simulator's beat is %u bytes, config '%s' needs %d",
                     npu_sim_beat_bytes(), cfg->name, npu_cfg_beat(cfg));
        fprintf(stderr, "npu: %s; use build/<config>/npu, built for that configuration\n", msg);
        npu_sim_close(sim);
        return NULL;
    }
    if (a->trace && npu_sim_trace(sim, a->trace, a->trace_start, a->trace_end) != 0) {
        fprintf(stderr, "npu: cannot trace to %s (is this build compiled with tracing?)\n",
                a->trace);
        npu_sim_close(sim);
        return NULL;
    }
    return sim;
}

int npu_cli_load_topology(const npu_args_t *a, int batch, npu_topology_t *t)
{
    char msg[256];
    int rc = npu_topo_load(a->topology, batch, t, msg, sizeof msg);
    for (const char *w = t->warn; *w;) { /* one stderr line per warning */
        const char *e = strchr(w, '\n');
        int len = e ? (int)(e - w) : (int)strlen(w);
        fprintf(stderr, "npu: --topology %s: %.*s\n", a->topology, len, w);
        w += len + (e != NULL);
    }
    if (rc != 0)
        fprintf(stderr, "npu: --topology %s: %s\n", a->topology, msg);
    return rc;
}
