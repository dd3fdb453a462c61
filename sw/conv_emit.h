/*
 * conv_emit.h - emission of a convolution program (fwd, dX, dW; zeropad or ecoflow) for a plan
 * (conv_plan.h) and DRAM addresses: a pure function, no simulator. docs/conv.md describes the
 * lowering; in short, a convolution is a sum over taps (kh, kw) and channel blocks of GEMMs
 * whose A rows are pixel words of an SPM-resident band read with a strided address (the im2col
 * view made on the fly by the WAVE / LDW address generators), accumulated in the OBUF.
 *
 * Per unit u (conv_plan.h), program order L(0), FO(0), then per u: L(u+1), C(u), FO(u+1), D(u),
 * S(u): the next band's loads come before EXEC(u) (one unit of lookahead: L(u+1) waits in the
 * LOAD queue for C(u-1) to free its buffer, then has all of C(u) to arrive):
 *   L(u)   FILL/LOADs of the input band into buffer u%2 (unit 0 first loads the resident
 *          weights and zeroes the dW taps no wave reaches)
 *          [first: pop e2l if u >= 2 (EXEC(u-2) freed the buffer); last: push l2e]
 *   FO(u)  dX ecoflow only, first unit of a band whose tile has pixels no wave covers: FILL of
 *          the band's output tile [pop e2l for band >= 2: the relay below; push l2e]
 *   C(u)   LDW/WAVEs [first: pop l2e; the last LDW/WAVE pushes e2l]; relay scheme (any FO):
 *          when unit u+1 starts band j >= 2, a SYNC_E just before that last one pops s2e
 *          (STORE of band j-2 done: tile j%2 is free) and pushes e2l when FO(u+1) exists, so
 *          the FILL never overwrites a tile being stored
 *   D(u)   DRAINs into the band's output tile (tile band%2, shared by the band's block groups)
 *          [first: pop l2e if FO(u); pop s2e if u starts band >= 2 and no relay scheme; last:
 *          push e2s if S(u)]; dW: the pass's DRAINs at its last unit
 *   S(u)   STOREs of the band's tile, by its last block group (dW: the last unit)
 *          [first: pop e2s; last: push s2e]
 * An empty group that must carry tokens is a SYNC. No token counter exceeds 4 (l2e: L and FO of
 * two units), far below TOKEN_MAX, and the program
 * cannot deadlock at any queue depth: every token an instruction waits for comes from an
 * instruction the fetcher reached before it (FO(u+1) follows the relay in C(u)).
 */
#ifndef NPU_CONV_EMIT_H
#define NPU_CONV_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "conv_plan.h"
#include "isa.h"
#include "npu_cfg.h"

typedef struct npu_conv_addrs {
    uint32_t x;   /* X (fwd, dW) */
    uint32_t w;   /* Wt (fwd, dX) */
    uint32_t dy;  /* dY (dX, dW; dW zeropad: the zero-inserted dY) */
    uint32_t out; /* Y, dX or dW */
} npu_conv_addrs_t;

/* Appends the program to *out (initialised with npu_prog_init). Returns 0, or -1 with a reason
 * in msg (a field does not fit its encoding, an address is not beat-aligned, out of memory). */
int npu_conv_emit(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a,
                  npu_prog_t *out, char *msg, size_t n);

#endif
