/*
 * conv_emit.h - emission of a convolution program (fwd, dX, dW; zeropad or ecoflow) for a plan
 * (conv_plan.h) and DRAM addresses: a pure function, no simulator. docs/conv.md describes the
 * lowering; in short, a convolution is a sum over taps (kh, kw) and channel blocks of GEMMs
 * whose A rows are pixel words of an SPM-resident band read with a strided address (the im2col
 * view made on the fly by the WAVE / LDW address generators), accumulated in the OBUF.
 *
 * Instruction groups per unit u of band b (conv_plan.h: a band's block groups are consecutive
 * units sharing its input buffer b%2 and output tile b%2; dW: every unit is its own band):
 *   L(b)   FILL/LOADs of the band's input (band 0 first loads the resident weights and zeroes
 *          the dW taps no wave reaches); last instruction pushes l2e. The first unit loads in
 *          two parts, each pushing l2e (fwd, dX: the first taps' weights with the band, then the
 *          other taps; dW: the first third of its X rows, then the rest): its C pops the second
 *          at its first LDW that needs it, and the second part is placed one for one with C's
 *          first instructions (as a block, the in-order fetcher held C behind it)
 *   FO(b)  dX ecoflow, a band whose tile has pixels no wave covers: FILL of the tile; pushes l2e
 *   C(u)   LDW/WAVEs; the band's first group pops l2e (L(b)) on its first instruction, its last
 *          group pushes e2l on its last WAVE (the input buffer is free)
 *   D(u)   DRAINs into the tile (dW: a pass's DRAINs at its last unit); pops l2e when FO(b)
 *          exists; the band's last group pushes e2s on its last DRAIN
 *   S(u)   the band's STOREs (its last group; dW: a pass's last unit, the taps the pass
 *          completes): pop e2s, push s2e (dW: only the last unit's). A pass's last unit also
 *          drains and stores the regions that finish before its last X row inside C, right
 *          after that row's waves, in up to two early groups (last DRAIN pushes e2s, first
 *          STORE pops it)
 * Two schemes, program order in brackets:
 *   no FO: [L(0); per band b: L(b+1) (pops e2l of band b-1 for b+1 >= 2) interleaved with C,
 *          then D, S]; D of a band b >= 2 pops s2e (STORE of band b-2 done: the tile is free).
 *          One band of lookahead: L(b+1) waits in the LOAD queue for band b-1 to free its
 *          buffer, then has all of band b's compute to arrive. Interleaved (one LOAD-queue
 *          instruction per few EXEC ones over the first half of C) because the fetcher
 *          dispatches in program order: a block of L(b+1) longer than the LOAD queue held C(b)
 *          until most of those loads had run.
 *   FO:    [L(0), FO(0), L(1); per band b: C, H(b+1), D, S] with H(b+1) = FO(b+1), L(b+2): the
 *          last WAVE of band b >= 1 also pops s2e (STORE of band b-1 done) and its one e2l
 *          releases H(b+1), which writes tile (b+1)%2 and input buffer b%2.
 * The EXEC units complete out of order and a token is pushed at completion, so each channel's
 * pushes come from one in-order unit: e2l from WAVEs (a band without waves: two token-only LDWs,
 * banks 0 and 1, the second completing after every earlier wave left the array), e2s from
 * DRAINs (a band without DRAINs: a token-only DRAIN of one OBUF row into the plan's scratch
 * words). No token counter exceeds 5 (l2e: the LOAD queue runs up to five groups ahead), far
 * below TOKEN_MAX, and no program can deadlock at any queue depth: every token an instruction
 * waits for comes from an instruction the fetcher reached before it.
 */
#ifndef NPU_CONV_EMIT_H
#define NPU_CONV_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "compile/conv/conv_plan.h"
#include "hw/isa.h"
#include "prog/prog.h"
#include "hw/npu_cfg.h"

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
