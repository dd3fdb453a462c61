/*
 * conv_run.h - the convolution driver: one kernel (fwd, dX, dW) of one layer under one
 * dataflow (zeropad, ecoflow) on the NPU, laid out in DRAM, planned (conv_plan.h), emitted
 * (conv_emit.h), run, compared bit-exactly with the golden model (conv_golden.h; at a bf16
 * config the order-matched conv_golden_bf16.h in the program's order, conv_bf16.h) and every
 * counter checked: the program's own accounting (npu_check_counters, npu_check_array_counters),
 * the MACs against npu_conv_macs() (total; macs_zero = the structural zeros: the data has none).
 */
#ifndef NPU_CONV_RUN_H
#define NPU_CONV_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "ref/conv_golden.h"
#include "compile/conv/conv_layer.h"
#include "compile/conv/conv_plan.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"

typedef struct npu_conv_report {
    int rc;                     /* NPU_GEMM_* codes from runtime.h: PASS, MISMATCH, COUNTERS, NPU_ERROR, TIMEOUT, HOST_ERROR */
    char msg[256];              /* first failure, "" if none */
    int kernel, dataflow;
    uint64_t cycles;            /* counter cycles of the program(s) */
    uint64_t exec_busy;         /* array-busy cycles (sum busy_<mode>) */
    uint64_t macs, macs_zero;   /* measured: sum macs_core*, macs_zero */
    npu_conv_macs_t expect;     /* npu_conv_macs() */
    uint64_t dram_rd_bytes, dram_wr_bytes;        /* measured, DMA only (program excluded) */
    uint64_t plan_rd_bytes, plan_wr_bytes;        /* what the plan implies */
    uint64_t compulsory_rd_bytes, compulsory_wr_bytes; /* each tensor once */
    size_t insns; int bands;    /* bands: units over all parts */
    int parts;                  /* the layer's parts (conv_split.h), 1 when it plans whole */
    uint64_t cnt[NPU_NUM_COUNTERS];
} npu_conv_report_t;

/* Seeds X, Wt, dY from seed (bf16 configs: npu_conv_operands_bf16; no zero values, so macs_zero counts only structural zeros), runs the
 * kernel on the NPU, compares bit-exact with the golden model, checks counters (npu_check_counters,
 * npu_check_array_counters, macs vs expect.total, macs_zero vs expect.zero). */
int npu_conv_run(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel, int dataflow,
                 uint64_t seed, uint64_t max_cycles, npu_conv_report_t *rep);
/* The same with planner options (bands, block groups); opts may be NULL. */
int npu_conv_run_opts(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                      int dataflow, const npu_conv_plan_opts_t *opts, uint64_t seed,
                      uint64_t max_cycles, npu_conv_report_t *rep);
/* A kernel's tensors from and to the caller (npu conv --x/--w/--dy/--out/--save): inputs that are
 * not NULL replace the seeded ones (same layouts as npu_conv_operands: X b*H*W*C, Wt KH*KW*F*C
 * (depthwise KH*KW*C), dY b*OH*OW*F); out and golden, when not NULL, receive the NPU's result and
 * the golden model's, rows x cols as npu_conv_out_shape gives them. With caller data, zeros in it
 * add zero-operand MACs: macs_zero is then checked as at least the formula's structural zeros. */
typedef struct npu_conv_io {
    const int16_t *X, *Wt, *dY;
    int32_t *out, *golden;
    int filled;               /* set when out and golden were written (the run completed) */
} npu_conv_io_t;
/* The kernel's result as the host reads it: rows x cols (fwd b*OH*OW x F, dX b*H*W x C, dW
 * KH*KW*F x C, depthwise dW KH*KW x C). */
void npu_conv_out_shape(const npu_conv_t *c, int kernel, int *rows, int *cols);
/* npu_conv_run with the caller's tensors (io may be NULL: npu_conv_run). */
int npu_conv_run_io(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel,
                    int dataflow, uint64_t seed, uint64_t max_cycles, npu_conv_io_t *io,
                    npu_conv_report_t *rep);
/* npu_conv_run_io with planner options (opts and io may be NULL). */
int npu_conv_run_opts_io(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_conv_t *c, int kernel, int dataflow,
                         const npu_conv_plan_opts_t *opts, uint64_t seed, uint64_t max_cycles, npu_conv_io_t *io,
                         npu_conv_report_t *rep);
/* The NPU_GEMM_* outcome of npu_run_program's return run_rc (NPU_RUN_*), the reason in msg (the
 * RTL assertion's message, the NPU error with its pc and info); shared with conv_bwd_run.c. */
struct npu_run_result;
/* A run's figures for a report: cycles, array-busy cycles (sum busy_<mode>), MACs (sum
 * macs_core*), zero-operand MACs. */
typedef struct npu_conv_sums { uint64_t cycles, exec_busy, macs, macs_zero; } npu_conv_sums_t;
npu_conv_sums_t npu_conv_run_sums(const uint64_t *cnt);
int npu_conv_run_outcome(npu_sim_t *sim, int run_rc, const struct npu_run_result *rr, char *msg, size_t n);
const char *npu_conv_kernel_name(int kernel);   /* "fwd" "dx" "dw" */
const char *npu_conv_dataflow_name(int df);     /* "zeropad" "ecoflow" */
int npu_conv_kernel_parse(const char *s); int npu_conv_dataflow_parse(const char *s); /* -1 if bad */

/* Seeded nonzero int16 values (xorshift64, seed 0 replaced by a constant), in storage order:
 * X (b*H*W*C), Wt (dense golden layout), dY (b*OH*OW*F), one stream in that order. */
void npu_conv_operands(const npu_conv_t *c, uint64_t seed, int16_t *X, int16_t *Wt, int16_t *dY);

#endif
