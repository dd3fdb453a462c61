/*
 * isa.h - FlexTrain instruction encoding, decoding and disassembly (docs/isa.md).
 *
 * Encoders check every field against its bit width and return -1 instead of truncating.
 * They do not check semantics (zero sizes, alignment, ranges against a config): those are
 * hardware errors that tests must be able to provoke.
 */
#ifndef NPU_ISA_H
#define NPU_ISA_H

#include <stddef.h>
#include <stdint.h>

#include "hw/npu_defs.h"

typedef struct npu_insn {
    uint32_t w[4]; /* little-endian words w0..w3 */
} npu_insn_t;

/* Token flags: bits of w0, at their positions in NPU_ISA_FIELDS (word 0: test_isa checks it). */
#define NPU_TOK_POP_PREV  (1u << NPU_FLD_POS_INSN_pop_prev)
#define NPU_TOK_POP_NEXT  (1u << NPU_FLD_POS_INSN_pop_next)
#define NPU_TOK_PUSH_PREV (1u << NPU_FLD_POS_INSN_push_prev)
#define NPU_TOK_PUSH_NEXT (1u << NPU_FLD_POS_INSN_push_next)
#define NPU_TOK_MASK      (NPU_TOK_POP_PREV | NPU_TOK_POP_NEXT | NPU_TOK_PUSH_PREV | NPU_TOK_PUSH_NEXT)

/* Every field of every format (their bits: NPU_ISA_FIELDS in npu_defs.h); fields a format does
 * not have are zero after decoding. */
typedef struct npu_fields {
    unsigned op;
    unsigned pop_prev, pop_next, push_prev, push_next;
    /* LOAD / STORE */
    unsigned tag, transpose, rows;
    uint32_t dram_addr;
    unsigned spm_addr, spm_stride, row_bytes, dram_stride;
    /* dram_stride is the DRAM pitch in bytes; the instruction holds dram_stride >> stride_shift in
     * its 16-bit field. Encoding takes stride_shift as given when it is not zero, else the
     * smallest shift that fits (npu_dram_stride_shift); decoding sets both. */
    unsigned stride_shift;
    /* LDW / WAVE / DRAIN (DRAIN uses rows, spm_addr, spm_stride, obuf_addr) */
    unsigned wbank, mode, acc, m, k, n, obuf_addr; /* acc: WAVE into the OBUF, DRAIN into the SPM */
    /* LDW: core mask (0 = the mode's normal fan-out; else load the S x S tile
     * W[0:k][0:n] (k, n <= S, mode ISW) into the masked cores only) */
    unsigned core_mask;
    /* DRAIN skinny variant: split_rows, hi_rows (0, 0 = normal) */
    unsigned split_rows, hi_rows;
    /* DRAIN narrow: an OBUF row's 2S lanes as 16-bit lanes in one SPM word (bf16: fp32 -> bf16
     * RNE; int16: int32 >> shift, rounding, saturated); shift 0..31 (int16 configs only) */
    unsigned narrow, shift;
    /* DRAIN pack = n (0: off; int32 lanes, not with narrow or acc): the rows' first n lanes back
     * to back in segments spm_stride words apart (docs/isa.md "DRAIN") */
    unsigned pack;
    /* Lane select (both 0 = the mode's own halves): LDW (b_hi) every core keeps stationary lanes
     * S..2S-1 (an S-wide n-block in the high half of its SPM words); WAVE (a_hi) every core takes
     * A lanes S..2S-1 (an S-deep k-block in the high half). Used by the 1G4C policy. */
    unsigned lane_hi;
    /* LDW mono: a full FW / VSW tile is read one row a cycle, 2S rows, as the monolithic 2S x 2S
     * array of the 1G1C baseline loads its column chains; 0: the two core pairs load in parallel
     * (rows r and S + r in one cycle, S cycles: FlexSA's parallel preload, docs/datapath.md). No
     * effect on S-row tiles (HSW, ISW, a core mask). Same weights either way. */
    unsigned mono;
    /* Window start (0 = none), for zero-free convolution windows (docs/isa.md):
     * LDW: stationary rows r < k_lo are zero and not read, row r >= k_lo comes from
     * spm_addr + (r - k_lo)*spm_stride; WAVE: A lanes j < k_lo of the k-block are fed
     * as zeros and are not MACs (MAC counters count (k - k_lo) x n per row). k_lo < k. */
    unsigned k_lo;
    /* WAVE bcast (mode ISW, else BAD_DESC): every row i < m goes to all four cores, each
     * multiplying it by its own tile (masked LDWs). One SPM read and one H flit per row: the
     * array runs it as an HSW wave of 2m rows whose two sets are the same rows (npu_wave_sets_f);
     * wide OBUF layout of 2m rows: cores 0/1 -> rows obuf + i lanes 0..S-1 / S..2S-1, cores 2/3
     * -> rows obuf + m + i. m < 2^15. */
    unsigned bcast;
    /* VEC (docs/isa.md "VEC"): operation (NPU_VOPS), element width of the same-width ops
     * (0: 16-bit, 1: 32-bit), rows (also the LOAD member, at VEC's own bits), and per operand
     * a, b, d its first SPM word and row stride in words (0: every row reads the same row) */
    unsigned vop, wide;
    unsigned a_addr, a_stride, b_addr, b_stride, d_addr, d_stride;
    /* VSET: the vector unit's registers: alpha, beta (fp32 bit patterns in bf16 configs, the
     * int16 in bits [15:0] in int16 configs), len (elements per row), shift (int16 configs: the
     * DRAIN's member above, at VSET's own bits) */
    uint32_t alpha, beta;
    unsigned len;
    /* LOAD_SPM (docs/isa.md "LOAD_SPM"): the source rows in the SPM, row r at word
     * src_addr + r * src_stride (row_bytes bytes from its first byte, as a LOAD's DRAM rows) */
    unsigned src_addr, src_stride;
} npu_fields_t;

/* Generic encoder: checks that op is a known opcode and every field used by its format
 * fits its width (and that unused fields are zero). Returns 0 or -1 (out is untouched). */
int npu_encode(const npu_fields_t *f, npu_insn_t *out);

/* Decoder: fills f with the fields of the opcode's format. Returns 0, or -1 for an unknown
 * opcode (then only op and the token bits are filled). */
int npu_decode(const npu_insn_t *in, npu_fields_t *f);

/* The stride_shift a LOAD / STORE of DRAM pitch `pitch` (bytes) is encoded with: the smallest
 * s in 0..3 with pitch a multiple of 2^s and pitch >> s within the 16-bit dram_stride field, or
 * -1 when there is none (a pitch past 8 x 65,535 bytes, or past 65,535 with too few factors of
 * two): such rows take one instruction each. */
int npu_dram_stride_shift(unsigned pitch);
/* True when a mode can run a k x n stationary tile: FW any; HSW k <= S; VSW n <= S; ISW both. */
int npu_mode_fits(unsigned mode, unsigned k, unsigned n, unsigned S);

/* Per-opcode encoders (tokens are added with npu_insn_tok). Return 0 or -1. */
int npu_enc_load(npu_insn_t *out, unsigned tag, int transpose, unsigned rows, uint32_t dram_addr,
                 unsigned spm_addr, unsigned spm_stride, unsigned row_bytes, unsigned dram_stride);
int npu_enc_store(npu_insn_t *out, unsigned tag, unsigned rows, uint32_t dram_addr,
                  unsigned spm_addr, unsigned spm_stride, unsigned row_bytes, unsigned dram_stride);
/* A transposed STORE (int32 elements): DRAM element (r, c), r < rows, c < row_bytes / 4, at
 * dram_addr + r * dram_stride + 4c, from lane r % S of word spm_addr + c * spm_stride + r / S. */
int npu_enc_store_tr(npu_insn_t *out, unsigned tag, unsigned rows, uint32_t dram_addr,
                     unsigned spm_addr, unsigned spm_stride, unsigned row_bytes, unsigned dram_stride);
int npu_enc_ldw(npu_insn_t *out, unsigned wbank, unsigned mode, unsigned spm_addr,
                unsigned spm_stride, unsigned k, unsigned n);
int npu_enc_wave(npu_insn_t *out, unsigned wbank, unsigned mode, int acc, unsigned m,
                 unsigned spm_addr, unsigned spm_stride, unsigned k, unsigned n, unsigned obuf_addr);
int npu_enc_drain(npu_insn_t *out, unsigned rows, unsigned obuf_addr, unsigned spm_addr,
                  unsigned spm_stride);
/* LDW with a core mask (independent cores): the tile goes to the masked cores' bank only. */
int npu_enc_ldw_cores(npu_insn_t *out, unsigned wbank, unsigned mode, unsigned spm_addr,
                      unsigned spm_stride, unsigned k, unsigned n, unsigned core_mask);
/* Skinny DRAIN: OBUF row r, lanes 0..S-1 -> SPM word spm_addr + r*stride; for r < hi_rows,
 * lanes S..2S-1 -> SPM word spm_addr + (r + split_rows)*stride (split_rows >= 1). */
int npu_enc_drain_split(npu_insn_t *out, unsigned rows, unsigned obuf_addr, unsigned spm_addr,
                        unsigned spm_stride, unsigned split_rows, unsigned hi_rows);

/* Row sets of a WAVE of m rows in each mode (docs/isa.md): set j has len[j] rows
 * starting at row start[j] of the wave; its rows go to OBUF row obuf_addr + orow[j] + t (t < len[j])
 * in the lanes of lane_hi[j] ? S..2S-1 : 0..S-1 (skinny modes) or all lanes (FW, HSW); cores[j]
 * are the cores its rows pass through. Unused sets have len 0. Returns the number of sets. */
typedef struct npu_wave_sets {
    unsigned len[4], start[4], orow[4], lane_hi[4], cores[4];
    unsigned obuf_rows; /* OBUF rows the wave writes: m (FW, HSW) or ceil(m/2) (VSW, ISW) */
    unsigned amode;     /* the mode the array runs the rows in (the per-mode counters): the
                           wave's, HSW for bcast */
    unsigned tiles;     /* k x n tiles per sub-array: 1, 2 for bcast (its two cores' own) */
} npu_wave_sets_t;
int npu_wave_sets(unsigned mode, unsigned m, npu_wave_sets_t *ws);
/* The sets of a decoded WAVE, bcast included: sets 0 and 1 are both rows [0, m), through cores
 * {0,1} (OBUF rows obuf + t) and {2,3} (obuf + m + t), wide; obuf_rows 2m. */
int npu_wave_sets_f(const npu_fields_t *f, npu_wave_sets_t *ws);
/* Makes an encoded DRAIN accumulate (its acc field): each SPM word it writes becomes the lane-wise int32
 * sum (mod 2^32) of the OBUF lanes and the word's old value, so an output tile can be reduced
 * over several tile-ops in the SPM (partial sums of the fused backward orders, docs/training.md).
 * Its destinations must not overlap: stride >= 2 (normal) or stride >= 1 and split_rows >= rows
 * (split), else BAD_DESC. Returns 0, or -1 for other opcodes. */
int npu_insn_drain_acc(npu_insn_t *in);
/* Makes an encoded plain DRAIN narrow (docs/isa.md "DRAIN"): OBUF row r's 2S lanes become 2S
 * 16-bit lanes of the one SPM word spm_addr + r*spm_stride: bf16 configs fp32 -> bf16 (RNE,
 * shift must be 0); int16 configs int32 -> int16, rounding arithmetic shift right by `shift`
 * (0..31) and saturation. With acc or split_rows, or shift != 0 at a bf16 config, the hardware
 * reports BAD_DESC. Returns 0, or -1 for other opcodes or a shift past 31. */
int npu_insn_drain_narrow(npu_insn_t *in, unsigned shift);
/* Makes an encoded DRAIN packed (docs/isa.md "DRAIN"): its field pack = n, the 32-bit lanes kept
 * per row. With h = rows/2, lanes 0..n-1 of rows [0, h) go back to back to segment 0 at
 * spm_addr, of rows [h, rows) to segment 1 at spm_addr + spm_stride; skinny (split_rows = hi_rows
 * = rows) lanes S..S+n-1 of the same rows to segments 2 and 3 (spm_addr + 2, 3 spm_stride). So a
 * short output row takes n/S of a word instead of two, and a STORE of 2 (4) rows of h*n*4 bytes
 * at SPM pitch spm_stride writes the tile's rows densely. The hardware reports BAD_DESC with
 * narrow or acc, n >= 2S (skinny: n > S), rows odd, h*n not a multiple of S or more than
 * spm_stride words' lanes, or a skinny split_rows or hi_rows != rows. Returns 0, or -1 for other
 * opcodes or n = 0 or past the field. */
int npu_insn_drain_pack(npu_insn_t *in, unsigned n);
/* Sets lane_hi on an encoded LDW or WAVE (see npu_fields_t). Returns 0, or -1 for other opcodes. */
int npu_insn_lane_hi(npu_insn_t *in);
/* Sets mono (see npu_fields_t) on an encoded LDW. Returns 0, or -1 for other opcodes. */
int npu_insn_ldw_mono(npu_insn_t *in);
/* Sets bcast (see npu_fields_t) on an encoded WAVE. Returns 0, or -1 for other opcodes. */
int npu_insn_bcast(npu_insn_t *in);
int npu_enc_sync(npu_insn_t *out, unsigned op /* NPU_OP_SYNC_L/E/S */);
/* Sets k_lo (see npu_fields_t) on an encoded LDW or WAVE. Returns 0, or -1 for other opcodes or
 * a k_lo too wide for the field (>= 64). */
int npu_insn_k_lo(npu_insn_t *in, unsigned k_lo);
/* FILL: zeroes the SPM words a LOAD of the same rows / spm_addr / spm_stride / row_bytes would
 * write (ceil(row_bytes / B) words per row), without touching the DRAM. */
int npu_enc_fill(npu_insn_t *out, unsigned rows, unsigned spm_addr, unsigned spm_stride,
                 unsigned row_bytes);

/* LOAD_SPM: a LOAD whose source rows are in the SPM (row r: row_bytes bytes from word
 * src_addr + r * src_stride) instead of the DRAM: the same SPM words as the LOAD of the same rows
 * from DRAM, transposed or not; no DRAM traffic. Source and destination ranges must not overlap. */
int npu_enc_load_spm(npu_insn_t *out, unsigned tag, int transpose, unsigned rows, unsigned src_addr,
                     unsigned src_stride, unsigned spm_addr, unsigned spm_stride, unsigned row_bytes);

/* VEC: vop (NPU_VOP_*) over rows rows of len (VSET) elements; wide selects 32-bit elements for
 * the same-width ops (NARROW and WIDEN have fixed widths and need wide = 0). */
int npu_enc_vec(npu_insn_t *out, unsigned vop, int wide, unsigned rows, unsigned a_addr,
                unsigned a_stride, unsigned b_addr, unsigned b_stride, unsigned d_addr,
                unsigned d_stride);
/* VSET: the vector unit's registers for the VECs after it (see npu_fields_t). */
int npu_enc_vset(npu_insn_t *out, uint32_t alpha, uint32_t beta, unsigned len, unsigned shift);
/* Name of a vector operation (NPU_VOPS), NULL for others. */
const char *npu_vop_name(unsigned vop);

/* One row of NPU_ISA_FIELDS (sw/hw/npu_defs.h), indexed by its id NPU_FLD_<FORMAT>_<name>. */
typedef struct npu_isa_field_desc {
    unsigned op;          /* the opcode whose format has the field; NPU_OP_INSN: every opcode */
    const char *name;     /* the npu_fields_t member it fills */
    unsigned word, lsb, width;
    size_t offset;        /* offsetof(npu_fields_t, name) */
} npu_isa_field_desc_t;
extern const npu_isa_field_desc_t npu_isa_fields[NPU_NUM_FIELDS];

/* Raw access to one field (id NPU_FLD_*) of an encoded instruction, whatever its opcode: for
 * models that must see bits a format ignores (a STORE's transpose bit is BAD_DESC) and for tests
 * that build malformed words. npu_insn_put returns -1 (in untouched) when v does not fit. */
uint32_t npu_insn_get(const npu_insn_t *in, unsigned id);
int npu_insn_put(npu_insn_t *in, unsigned id, uint32_t v);

/* Token flags: OR NPU_TOK_* bits into w0 (npu_insn_tok) or set all four (npu_insn_set_tok). */
void npu_insn_tok(npu_insn_t *in, unsigned tok_flags);
void npu_insn_set_tok(npu_insn_t *in, unsigned tok_flags);
static inline unsigned npu_insn_op(const npu_insn_t *in) { return npu_insn_get(in, NPU_FLD_INSN_op); }
static inline unsigned npu_insn_tokens(const npu_insn_t *in) { return in->w[0] & NPU_TOK_MASK; }

/* Names from the X-macro lists of npu_defs.h; NULL when the value has no name. */
const char *npu_op_name(unsigned op);
const char *npu_tag_name(unsigned tag);
const char *npu_mode_name(unsigned mode);
/* "int16" / "bf16" (the DTYPE value names of NPU_DTYPES); "?" for others. */
const char *npu_dtype_name(unsigned dtype);
/* Queue of an opcode: 'L', 'E', 'S', or 0 for an unknown opcode. */
char npu_op_queue(unsigned op);

/* One-line disassembly, e.g.
 *   WAVE FW m=64 k=16 n=16 spm=0x0000+1*i bank=1 acc obuf=64 [pop_prev push_next]
 *   WAVE ISW m=32 k=8 n=8 spm=0x0000+2*i bank=0 obuf=0 bcast
 *   LOAD X rows=64 bytes=32 dram=0x000400+1*r spm=0x0000+2*r
 *   LOAD W trans rows=20 bytes=64 dram=0x001000+2*r spm=0x0400+4*r
 *   FILL rows=9 bytes=64 spm=0x0400+2*r
 *   LOAD_SPM X trans rows=20 bytes=64 src=0x0100+2*r spm=0x0400+4*r
 *   LDW FW k=16 n=16 spm=0x0400+4*r bank=0
 *   DRAIN rows=64 obuf=0 spm=0x0800+8*r
 *   STORE Y rows=64 bytes=256 spm=0x0800+8*r dram=0x004000+8*r
 *   SYNC_E [pop_prev]
 *   VSET len=40 alpha=0x3f800000 beta=0x00000000 shift=0
 *   VEC AXPBY w32 rows=4 a=0x0100+2*r b=0x0200+0*r d=0x0300+2*r
 *   ILLEGAL op=0x1f w=0000001f_00000000_00000000_00000000
 * Writes at most n bytes (NUL-terminated, truncated if needed); returns the snprintf length. */
int npu_disasm(const npu_insn_t *in, char *buf, size_t n);

#endif
