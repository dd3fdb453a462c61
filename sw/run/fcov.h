/*
 * fcov.h - functional coverage of NPU runs (issue 6). Every WAVE a completed run executed hits
 * one cover point  mode x pass x edge x fan-out x DRAM stall:
 *   mode     FW / VSW / HSW / ISW, the WAVE's mode;
 *   pass     fwd / dx / dw: the tag of the STORE that takes the WAVE's results to the DRAM (WAVE ->
 *            the next DRAIN reading its OBUF rows -> the next STORE reading that DRAIN's first SPM
 *            word; tag Y = fwd, DX = dx, DW = dw). Results that leave under another tag
 *            (PARTIAL spills) or never leave are no pass and hit nothing;
 *   edge     the WAVE's tile is partial: k or n below what its mode holds (FW 2S x 2S, HSW
 *            S x 2S, VSW 2S x S, ISW S x S) or a window start k_lo > 0;
 *   fan-out  cores each SPM read of its stationary tile reaches: 2 (FW, VSW), 4 (HSW, ISW), 1 (an
 *            ISW bank loaded by per-core masked LDWs: the independent cores of 1G4C);
 *   stall    the DRAM model stalled during the run (npu_sim_dram_stats stall_cycles > 0).
 * The valid points are the crosses of (FW,2) (VSW,2) (HSW,4) (ISW,4) (ISW,1) with 3 passes, 2
 * edge values and 2 stall values: 60. With NPU_FCOV=<file> in the environment, npu_run_program
 * appends the points of every run that ended DONE to <file> ("fcov mode pass edge fanout stall
 * count" lines, one write per run, so parallel jobs may share the file); `make regress` collects
 * them and build/fcov_report prints the table and the holes.
 */
#ifndef NPU_FCOV_H
#define NPU_FCOV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hw/isa.h"
#include "hw/npu_cfg.h"

enum { NPU_FCOV_FWD = 0, NPU_FCOV_DX = 1, NPU_FCOV_DW = 2, NPU_FCOV_PASSES = 3 };
enum { NPU_FCOV_FAN1 = 0, NPU_FCOV_FAN2 = 1, NPU_FCOV_FAN4 = 2, NPU_FCOV_FANS = 3 };

typedef struct npu_fcov {
    uint64_t hits[4][NPU_FCOV_PASSES][2][NPU_FCOV_FANS][2]; /* [mode][pass][edge][fan][stall] */
} npu_fcov_t;

/* Adds the WAVEs of one program run (stalled: the DRAM stalled during it) to *c. */
void npu_fcov_program(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n, int stalled,
                      npu_fcov_t *c);

/* 1 if (mode, fan) is a combination the hardware has, else 0. */
int npu_fcov_valid(unsigned mode, int fan);

/* Number of valid points (60) and how many of them have hits. */
int npu_fcov_points(void);
int npu_fcov_hit_points(const npu_fcov_t *c);

/* Appends the non-zero points of c to path as text lines (one write). 0 or -1. */
int npu_fcov_append(const char *path, const npu_fcov_t *c);
/* Adds the lines of a file written by npu_fcov_append to *c. 0, or -1 (unreadable, bad line). */
int npu_fcov_read(const char *path, npu_fcov_t *c);

/* The table of the valid points (hits per point), the holes, and "N of 60 points hit". */
void npu_fcov_print(const npu_fcov_t *c, FILE *f);

const char *npu_fcov_pass_name(int pass); /* "fwd" "dx" "dw" */

#endif
