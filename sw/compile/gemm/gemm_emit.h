/*
 * gemm_emit.h - instruction emission for a tiled GEMM (the expected counters of a program:
 * prog/prog_expect.h; the first-divergence locator: prog/prog_locate.h).
 *
 * Per output tile t (m outer, n inner; OBUF half h = t%2, C staging buffer C_(t%2)), per K
 * chunk with global index g (SPM buffers A_(g%2), B_(g%2)):
 *   LOAD X (A chunk)   [pop_next if g >= 2: e2l, the buffer is free again]
 *   LOAD W (B chunk)   [push_next: l2e]
 *   EXEC: per k-block kb, per n-block j, wave counter w:
 *     LDW  bank w%2                       first EXEC insn of the chunk [pop_prev: l2e]
 *     WAVE bank w%2 FW -> OBUF h*OBUF_ROWS + j*Mt, acc after the first k-block
 *                                         last WAVE of the chunk [push_prev: e2l]
 *   after the tile's last chunk: DRAIN per n-block -> C_(t%2)
 *                                         first [pop_next if t >= 2: s2e], last [push_next: e2s]
 *   STORE Y (C tile)   [pop_prev: e2s, push_prev: s2e]
 * A chunk whose A or B buffer holds its chunk already (its band, or chunk g-2's) loads nothing of
 * it (gemm_tiling.h). With the C band, tiles drain into band mi%2 (the first DRAINs wait for the
 * STORE of m-tile mi-2) and only an m-tile's last tile STOREs, its whole rows.
 * Program order is software-pipelined by two chunks (npu_gemm_lookahead; one chunk when
 * QUEUE_DEPTH < 4, or when two chunks' LOADs overflow the LOAD queue: rows whose DRAM pitch
 * the instruction cannot hold, npu_dram_stride_shift, take one LOAD / STORE each): LOAD(g+2) is emitted before EXEC(g). It
 * waits in the LOAD queue for EXEC(g) to free its buffer and then has all of EXEC(g+1) to arrive;
 * with one chunk of lookahead the in-order fetcher, sitting on a full EXEC queue, would fetch it
 * only when EXEC(g+1) is nearly done. Every token a queue waits for is produced by an instruction
 * that the fetcher reaches while at most two chunks' loads (4 instructions) wait in the LOAD
 * queue, so the program cannot deadlock for QUEUE_DEPTH >= 4.
 */
#ifndef NPU_GEMM_EMIT_H
#define NPU_GEMM_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "compile/gemm/gemm_tiling.h"
#include "hw/isa.h"
#include "prog/prog.h"
#include "hw/npu_cfg.h"

typedef struct npu_gemm_args {
    int transA, transB;   /* A stored K x M, B stored N x K */
    uint32_t a, b, c;     /* DRAM byte addresses (2-byte aligned) */
    unsigned pitch_a, pitch_b, pitch_c; /* row pitches of the stored matrices, in bytes (the
                                           DMA's dram_stride; dense: 2K, 2N, 4N) */
    int modes;            /* mapping policy, NPU_EMIT_*: */
    unsigned tag_a, tag_b, tag_c; /* DMA tensor tags of A, B, C (0: X, W, Y); the training
                                     lowering uses DY, DX, DW so the counters split by tensor */
    /* SPM residency (a step's tensors kept in the SPM between kernels, docs/training.md): an
     * operand already in the SPM is read there instead of loaded, a resident result is drained
     * there instead of stored. Row r of a resident matrix starts at word spm_r* + r * its row
     * words (npu_gemm_res_words): A (M x K), B (K x N), C (M x N, 32-bit); a transposed A or B
     * as stored (K x M, N x K), its tiles copied transposed into the chunk buffers by LOAD_SPMs
     * (docs/isa.md), as the DMA transposes them from DRAM. The GEMM's own buffers then stay below
     * word spm_limit (0: the whole SPM), the resident tensors at or above it. */
    int res_a, res_b, res_c;
    unsigned spm_ra, spm_rb, spm_rc, spm_limit;
    int swap;             /* the plan is of C^T = B^T A^T (an N x M x K plan, gemm_swap.h); the
                             other fields are the plain GEMM's: emission lowers them */
    int trans_c;          /* the plan's tiles are C^T's: STOREd transposed into C (pitch_c) */
} npu_gemm_args_t;

/* SPM words of a resident row of `cols` elements: 16-bit ceil(cols / 2S); 32-bit (c32) two per
 * 2S columns, the words the DRAIN writes (the vector unit's row of 32-bit elements fits in it). */
unsigned npu_gemm_res_words(const npu_cfg_t *cfg, int cols, int c32);
/* 0, or -1 with the reason when args' resident operands cannot be read or written in place (a
 * transposed one, an address below spm_limit or past the SPM, a limit not on a bank boundary). */
int npu_gemm_res_check(const npu_cfg_t *cfg, int M, int N, int K, const npu_gemm_args_t *args,
                       char *why, size_t n);

/* args.modes: the three mapping policies of the FlexSA brief, on the same RTL.
 *   NPU_EMIT_FW      1G1C: every wave FW on the 2S x 2S array (default), its LDWs mono (2S rows
 *                    one a cycle, as the monolithic array's column chains load; the other
 *                    policies' full tiles load both core pairs in parallel, S cycles)
 *   NPU_EMIT_FLEXSA  each wave's mode from its (n, k) by Algorithm 1 (npu_flexsa_mode): n-blocks
 *                    with n <= S use the skinny OBUF layout (VSW/ISW waves, skinny DRAIN)
 *   NPU_EMIT_1G4C    four independent S x S cores, no sharing: every 2S x 2S block is cut into
 *                    its S x S sub-tiles (k-half kh, n-half nh); each sub-tile is loaded into
 *                    each core separately (four LDW with core masks 1, 2, 4, 8 and b_hi = nh:
 *                    four SPM reads per stationary word, no multicast) and runs as one ISW
 *                    WAVE whose four row quarters are the four cores' waves (a_hi = kh), so
 *                    the four cores work on different A rows and never share a streamed word.
 *                    OBUF: n-half nh of n-block j at j*R + nh*ceil(m/2), R = Mt rounded up to
 *                    even; drained with split DRAINs into C words 2j + nh. */
enum { NPU_EMIT_FW = 0, NPU_EMIT_FLEXSA = 1, NPU_EMIT_1G4C = 2 };

/* Row pitches (bytes) of A, B (as stored, honouring transA/transB) and C in the dense row-major
 * layout a framework hands over: no row padded (docs/memory.md "Tensors in DRAM"). */
void npu_gemm_pitches(int M, int N, int K, int transA, int transB, unsigned *pitch_a,
                      unsigned *pitch_b, unsigned *pitch_c);

/* Chunks of loads emitted ahead of the EXEC chunk that uses them: 2, or 1 if QUEUE_DEPTH < 4. */
int npu_gemm_lookahead(const npu_cfg_t *cfg);

/* The order in which chunk g runs its waves (FlexSA: serpentine, gemm_emit.c): the plain index
 * (kb * nblocks + j) of its i-th wave. */
int npu_gemm_block_at(int modes, long g, int i, int kblocks, int nblocks);
/* Encodes the LDW of a (k, n) block as the policy `modes` loads it: mono under NPU_EMIT_FW (1G1C:
 * the monolithic array's 2S-row preload), the core pairs in parallel otherwise. 0 or -1. */
int npu_gemm_enc_ldw(npu_insn_t *in, int modes, unsigned bank, unsigned mode, unsigned spm, unsigned stride,
                     unsigned k, unsigned n);

/* The K partition of output tile (mi, ni) under policy modes: its waves' k ranges [k0, k1), in
 * the order the OBUF accumulates them (the first writes, the others add; issue 15's bf16 golden
 * model, ref/golden_bf16.h, sums in this order). k-blocks of 2S (1G4C: S-deep k-halves, one
 * ISW wave each) chunk by chunk; FlexSA runs every other chunk g backwards (npu_gemm_block_at),
 * g = t * k_chunks + c with t the tile's index in the plan's order. The same for every column
 * of the tile (each wave covers all its n-blocks' k range). Returns the number of waves; at most
 * max are written. A pure function of the plan: no program is emitted. */
size_t npu_gemm_kwaves(const npu_gemm_plan_t *p, int modes, int S, int mi, int ni, int *k0, int *k1,
                       size_t max);

/* Appends the program to *out. Returns 0, or -1 when a field does not fit its encoding or
 * memory runs out (out then holds a partial program; the caller frees it). */
int npu_gemm_emit(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, const npu_gemm_args_t *args,
                  npu_prog_t *out);

/* Length of the program npu_gemm_emit produces for plan and args (emitted into scratch memory:
 * the length does not depend on the DRAM addresses). 0 if the emission fails. */
size_t npu_gemm_emit_len(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan,
                         const npu_gemm_args_t *args);

#endif
