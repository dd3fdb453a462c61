/*
 * prog_locate.h - the first-divergence locator of a GEMM program (docs/compiler.md "Locator"):
 * where in a program of npu_gemm_emit (any policy) an element C[row][col] was produced. The t-th
 * STORE of tag C stores output tile t; the DRAINs just before it move the tile's n-blocks from
 * the OBUF to the SPM; the WAVEs before them whose OBUF window holds the element's OBUF row
 * wrote it (one per k-block, possibly in different modes).
 */
#ifndef NPU_PROG_LOCATE_H
#define NPU_PROG_LOCATE_H

#include <stddef.h>

#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "hw/isa.h"
#include "hw/npu_cfg.h"

typedef struct npu_gemm_loc {
    int m_tile, n_tile, n_block;  /* output tile (Mt x Nt) and its 2S-column block */
    long store_pc, drain_pc;      /* instruction indices (-1: not found) */
    long wave_pc[2];              /* first and last WAVE that wrote the element's OBUF row */
    int waves;                    /* WAVEs that wrote it (k-blocks) */
    unsigned modes;               /* bit m set: a wave in mode m (NPU_MODE_*) wrote it */
    unsigned obuf_row;            /* OBUF row of the element in the last wave */
    unsigned skinny_hi;           /* skinny drain: the element is in the OBUF row's high lanes */
    int set;                      /* row set (npu_wave_sets) of the last wave that wrote it */
    unsigned cores;               /* bit c: core c's outputs hold it (FW: both cores of the
                                     column; HSW: one; VSW: the set's two; ISW: one) */
} npu_gemm_loc_t;

/* Fills *loc for C[row][col]; returns 0, or -1 if the program has no such element. Renders
 * "tile (mi,ni) n-block j: STORE #s, DRAIN #d, 2 WAVEs #w0..#w1 in FW+HSW, OBUF row r, core 1 (row
 * set 0)" into buf when buf is not NULL. */
int npu_prog_locate_gemm(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                    const npu_insn_t *prog, size_t n, int row, int col, npu_gemm_loc_t *loc,
                    char *buf, size_t bufn);

#endif
