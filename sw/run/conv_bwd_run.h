/*
 * conv_bwd_run.h - the fused convolution backward (`npu conv --kernel bwd`, conv_bwd.h): dX and dW
 * of one layer in one program that reads each dY element from DRAM once. Lays the tensors out in
 * DRAM, plans and emits, runs, compares dX and dW bit-exactly with the golden models (int16
 * operands, int32 wrap-around: npu_conv_dx_golden, npu_conv_dw_golden) and checks every counter:
 * the program's own accounting (npu_check_counters, npu_check_array_counters), MACs = the ecoflow
 * dX MACs + the ecoflow dW MACs (npu_conv_macs), macs_zero = their structural zeros (0), and the
 * DY read bytes = one read of the dense dY tensor (less when some dY rows meet only padding: no
 * kernel reads them) and every tag's bytes = the plan's.
 *
 * For the trainer (fit.c) the call replacing npu_conv_run_io(.., NPU_CONV_DX, ..) and
 * npu_conv_run_io(.., NPU_CONV_DW, ..) of a layer is
 *     npu_conv_bwd_io_t io = {X, Wt, dY, dX, dW, 0};
 *     npu_conv_bwd_run(cfg, sim, &layer, seed, max_cycles, &io, &rep);
 * with rep.rc == NPU_GEMM_PASS, dX in [batch][H][W][C] and dW in [KH][KW][F][C] (int32). A layer
 * the fused kernel does not take (rep.rc == NPU_GEMM_HOST_ERROR, rep.msg names the limit: see
 * npu_conv_bwd_plan) runs as the two kernels instead (npu_conv_bwd_supported says which).
 * int16 configurations only.
 */
#ifndef NPU_CONV_BWD_RUN_H
#define NPU_CONV_BWD_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_layer.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"
#include "ref/conv_golden.h"

typedef struct npu_conv_bwd_report {
    int rc;                       /* NPU_GEMM_* (runtime.h) */
    char msg[256];                /* first failure, "" if none */
    uint64_t cycles, exec_busy;   /* counter cycles; array-busy cycles (sum busy_<mode>) */
    uint64_t macs, macs_zero;     /* measured */
    npu_conv_macs_t expect_dx, expect_dw; /* npu_conv_macs(ECOFLOW) of dX and dW */
    uint64_t rd[NPU_NUM_TAGS], wr[NPU_NUM_TAGS];           /* measured DMA bytes per tag */
    uint64_t plan_rd[NPU_NUM_TAGS], plan_wr[NPU_NUM_TAGS]; /* what the plan moves */
    uint64_t comp_rd[NPU_NUM_TAGS], comp_wr[NPU_NUM_TAGS]; /* each tensor once */
    size_t insns;
    int units;                    /* dX units (bands x c-block groups) */
    uint64_t cnt[NPU_NUM_COUNTERS];
} npu_conv_bwd_report_t;

/* The caller's tensors (each input may be NULL: seeded as npu_conv_operands does; outputs may be
 * NULL). X [batch][H][W][C], Wt [KH][KW][F][C], dY [batch][OH][OW][F] int16; dX [batch][H][W][C],
 * dW [KH][KW][F][C] int32. filled: set when dX and dW were written (the run completed). */
typedef struct npu_conv_bwd_io {
    const int16_t *X, *Wt, *dY;
    int32_t *dX, *dW;
    int filled;
} npu_conv_bwd_io_t;

/* 1 if the fused kernel plans layer c at cfg, else 0 with the limit in msg. */
int npu_conv_bwd_supported(const npu_cfg_t *cfg, const npu_conv_t *c, char *msg, size_t n);

/* Runs the fused backward of layer c (io may be NULL: seeded operands) and checks it (above).
 * Returns rep->rc. */
int npu_conv_bwd_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, uint64_t seed,
                     uint64_t max_cycles, npu_conv_bwd_io_t *io, npu_conv_bwd_report_t *rep);

#endif
