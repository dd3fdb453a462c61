/*
 * npu_defs.h - the one definition of every name shared by the RTL and the C host:
 * opcodes, instruction fields, tensor tags, FlexSA modes, error codes, CSR addresses
 * and performance counters. sw/tools/gencfg.c turns these X-macro lists into
 * build/<config>/npu_defs.vh for the Verilog, so the two sides cannot drift.
 * docs/isa.md explains the encoding.
 */
#ifndef NPU_DEFS_H
#define NPU_DEFS_H

/* Instruction: 128 bits = four little-endian 32-bit words w0..w3; every bit position is in
 * NPU_ISA_FIELDS below. */
#define NPU_INSN_BYTES 16

/* X(name, value, queue, text) ; queue: L = LOAD, E = EXEC, S = STORE */
#define NPU_OPCODES(X)                                                          \
    X(LOAD,   0x01, L, "DMA DRAM -> SPM (strided, tagged, optionally transposed)") \
    X(STORE,  0x02, S, "DMA SPM -> DRAM (strided, tagged, optionally transposed)") \
    X(LDW,    0x03, E, "stationary tile SPM -> NoC -> LBUF_V -> PE weight bank") \
    X(WAVE,   0x04, E, "systolic wave: A rows SPM -> NoC -> LBUF_H -> FlexSA -> OBUF") \
    X(DRAIN,  0x05, E, "OBUF rows (int32 / fp32; narrow: int16 / bf16) -> SPM")                              \
    X(SYNC_L, 0x06, L, "token-only no-op in the LOAD queue")                    \
    X(SYNC_E, 0x07, E, "token-only no-op in the EXEC queue")                    \
    X(SYNC_S, 0x08, S, "token-only no-op in the STORE queue")                   \
    X(FILL,   0x09, L, "zero SPM words (the LOAD format without DRAM: padding, zero-inserted planes)") \
    X(VEC,    0x0A, E, "vector op: rows x len elements SPM -> vector unit -> SPM (docs/isa.md)") \
    X(VSET,   0x0B, E, "vector unit registers: alpha, beta, len, shift")      \
    X(LOAD_SPM, 0x11, L, "SPM -> SPM copy by the LOAD engine (strided, optionally transposed; no DRAM)")

/* The instruction fields: X(format, name, word, lsb, width) is bits [lsb + width - 1 : lsb] of
 * word w<word>. The one place a bit position is written: sw/hw/isa.c encodes and decodes with this
 * table, gencfg turns it into the Verilog localparams F_<FORMAT>_<NAME>_LSB (bit of the 128-bit
 * instruction, 32 * word + lsb) and F_<FORMAT>_<NAME>_W. A format is the opcode whose fields
 * follow (INSN: every instruction has these); a field a format lacks must be zero to encode and
 * decodes as zero. Names are the members of npu_fields_t (sw/hw/isa.h). STORE is the LOAD layout
 * (its transpose: int32 elements), FILL the LOAD layout less the DRAM side and LOAD_SPM the
 * LOAD layout whose word w1 is the source in the SPM (src_addr: its first word, src_stride: its
 * row pitch in words; the DRAM pitch bits w0[31:30], w3[31:16] must be zero: BAD_DESC) (one RTL
 * descriptor decodes all four; LOAD_SPM's opcode differs from LOAD's only in a bit where FILL's
 * equals LOAD's, npu_dma_load tells the three apart by two bits);
 * SYNC_L/E/S have only the INSN fields. LOAD/STORE's DRAM row pitch in bytes is
 * dram_stride << stride_shift (rows of up to 65,535 int16 or int32 elements, such as GNMT's
 * 36,548-wide layers, take one instruction); npu_fields_t.dram_stride holds the pitch itself and
 * isa.c does the shift (rows are 14 bits: a LOAD / STORE / FILL row takes at least one SPM word).
 * tests/unit/test_isa.c checks the table. */
#define NPU_ISA_FIELDS(X)                 \
    X(INSN,  op,          0,  0,  8)      \
    X(INSN,  pop_prev,    0,  8,  1)      \
    X(INSN,  pop_next,    0,  9,  1)      \
    X(INSN,  push_prev,   0, 10,  1)      \
    X(INSN,  push_next,   0, 11,  1)      \
    X(LOAD,  tag,         0, 12,  3)      \
    X(LOAD,  transpose,   0, 15,  1)      \
    X(LOAD,  rows,        0, 16, 14)      \
    X(LOAD,  stride_shift, 0, 30, 2)     \
    X(LOAD,  dram_addr,   1,  0, 32)      \
    X(LOAD,  spm_addr,    2,  0, 16)      \
    X(LOAD,  spm_stride,  2, 16, 16)      \
    X(LOAD,  row_bytes,   3,  0, 16)      \
    X(LOAD,  dram_stride, 3, 16, 16)      \
    X(STORE, tag,         0, 12,  3)      \
    X(STORE, transpose,   0, 15,  1)      \
    X(STORE, rows,        0, 16, 14)      \
    X(STORE, stride_shift, 0, 30, 2)     \
    X(STORE, dram_addr,   1,  0, 32)      \
    X(STORE, spm_addr,    2,  0, 16)      \
    X(STORE, spm_stride,  2, 16, 16)      \
    X(STORE, row_bytes,   3,  0, 16)      \
    X(STORE, dram_stride, 3, 16, 16)      \
    X(FILL,  rows,        0, 16, 14)      \
    X(LOAD_SPM, tag,        0, 12,  3)    \
    X(LOAD_SPM, transpose,  0, 15,  1)    \
    X(LOAD_SPM, rows,       0, 16, 14)    \
    X(LOAD_SPM, src_addr,   1,  0, 16)    \
    X(LOAD_SPM, src_stride, 1, 16, 16)    \
    X(LOAD_SPM, spm_addr,   2,  0, 16)    \
    X(LOAD_SPM, spm_stride, 2, 16, 16)    \
    X(LOAD_SPM, row_bytes,  3,  0, 16)    \
    X(FILL,  spm_addr,    2,  0, 16)      \
    X(FILL,  spm_stride,  2, 16, 16)      \
    X(FILL,  row_bytes,   3,  0, 16)      \
    X(LDW,   wbank,       0, 12,  1)      \
    X(LDW,   mode,        0, 13,  2)      \
    X(LDW,   spm_addr,    1,  0, 16)      \
    X(LDW,   spm_stride,  1, 16, 16)      \
    X(LDW,   k,           2,  0,  8)      \
    X(LDW,   n,           2,  8,  8)      \
    X(LDW,   core_mask,   2, 16,  4)      \
    X(LDW,   lane_hi,     2, 20,  1)      \
    X(LDW,   mono,        2, 21,  1)      \
    X(LDW,   k_lo,        2, 24,  6)      \
    X(WAVE,  wbank,       0, 12,  1)      \
    X(WAVE,  mode,        0, 13,  2)      \
    X(WAVE,  acc,         0, 15,  1)      \
    X(WAVE,  m,           0, 16, 16)      \
    X(WAVE,  spm_addr,    1,  0, 16)      \
    X(WAVE,  spm_stride,  1, 16, 16)      \
    X(WAVE,  k,           2,  0,  8)      \
    X(WAVE,  n,           2,  8,  8)      \
    X(WAVE,  obuf_addr,   2, 16, 16)      \
    X(WAVE,  lane_hi,     3,  0,  1)      \
    X(WAVE,  bcast,       3,  1,  1)      \
    X(WAVE,  k_lo,        3,  8,  6)      \
    X(DRAIN, narrow,      0, 12,  1)      \
    X(DRAIN, acc,         0, 15,  1)      \
    X(DRAIN, rows,        0, 16, 16)      \
    X(DRAIN, obuf_addr,   1,  0, 16)      \
    X(DRAIN, shift,       1, 16,  5)      \
    X(DRAIN, pack,        1, 21,  5)      \
    X(DRAIN, spm_addr,    2,  0, 16)      \
    X(DRAIN, spm_stride,  2, 16, 16)      \
    X(DRAIN, split_rows,  3,  0, 16)      \
    X(DRAIN, hi_rows,     3, 16, 16)      \
    X(VEC,   vop,         0, 12,  4)      \
    X(VEC,   wide,        0, 16,  1)      \
    X(VEC,   rows,        0, 20, 12)      \
    X(VEC,   a_addr,      1,  0, 16)      \
    X(VEC,   a_stride,    1, 16, 16)      \
    X(VEC,   b_addr,      2,  0, 16)      \
    X(VEC,   b_stride,    2, 16, 16)      \
    X(VEC,   d_addr,      3,  0, 16)      \
    X(VEC,   d_stride,    3, 16, 16)      \
    X(VSET,  alpha,       1,  0, 32)      \
    X(VSET,  beta,        2,  0, 32)      \
    X(VSET,  len,         3,  0, 16)      \
    X(VSET,  shift,       3, 16,  5)
/* The format of the INSN fields: not an opcode (opcodes are 8 bits). */
#define NPU_OP_INSN 0x100

/* Tensor tag of a DMA transfer: DRAM traffic is counted per tag. */
/* (the list parameter is T, not X: one tag is named X) */
#define NPU_TAGS(T) \
    T(PROG, 0) T(X, 1) T(W, 2) T(Y, 3) T(DY, 4) T(DX, 5) T(DW, 6) T(PARTIAL, 7)

/* Element types (configuration key DTYPE, CSR HW_DTYPE; docs/datapath.md): X(name, value, text).
 * int16: int16 operands, int32 wrap-around accumulation. bf16: bf16 operands, exact products,
 * fp32 accumulation with round to nearest even, denormals flushed (docs/datapath.md section 6). */
#define NPU_DTYPES(X) X(INT16, 0, "int16") X(BF16, 1, "bf16")

/* Vector operations (VEC field vop; docs/isa.md section 4 "VEC"): X(name, value, b, nowide,
 * text). Every op reads a (and b where the column b is 1) and writes d; rows x len elements, len
 * and the scalars alpha, beta, shift from VSET. nowide 1: the op has no 32-bit form (the wide
 * bit set is BAD_DESC). Values NPU_NUM_VOPS..15 are BAD_DESC. */
#define NPU_VOPS(X)                                                                     \
    X(ADD,      0, 1, 0, "d = a + b")                                                   \
    X(MUL,      1, 0, 0, "d = alpha * a (int16 configs: rounded shift right by shift)")  \
    X(AXPBY,    2, 1, 0, "d = alpha * a + beta * b (int16 configs: then the rounded shift)") \
    X(RELU,     3, 0, 0, "d = a > 0 ? a : 0")                                           \
    X(RELU_BWD, 4, 1, 0, "d = b > 0 ? a : 0 (a: dY, b: the saved forward value)")     \
    X(NARROW,   5, 0, 1, "32-bit a -> 16-bit d (fp32 -> bf16 RNE; int32 -> int16 shift, round, saturate)") \
    X(WIDEN,    6, 0, 1, "16-bit a -> 32-bit d")                                        \
    X(SUM,      7, 0, 0, "d (one row) = sum of the rows of a, in row order")            \
    X(VMUL,     8, 1, 1, "d = a * b element-wise, 16-bit (int16 configs: rounded shift right by shift)")

/* FlexSA modes (ARCHITECTURE.md section 3). */
#define NPU_MODES(X) X(FW, 0) X(VSW, 1) X(HSW, 2) X(ISW, 3)

/* Error codes reported in STATUS[15:8]; ERR_PC holds the faulting instruction index. */
#define NPU_ERRORS(X)                                                         \
    X(NONE,           0, "no error")                                          \
    X(ILLEGAL_OPCODE, 1, "illegal opcode")                                    \
    X(DRAM_ADDR,      2, "DRAM address out of range")                         \
    X(SPM_ADDR,       3, "SPM address out of range")                          \
    X(OBUF_ADDR,      4, "OBUF address out of range")                         \
    X(BAD_DESC,       5, "malformed descriptor (zero size, misaligned, bad field)") \
    X(DEADLOCK,       6, "deadlock: no progress for WATCHDOG_CYCLES")         \
    X(TOKEN_OVERFLOW, 7, "dependency token counter overflow")                 \
    X(DRAM_RESP,      8, "DRAM returned an error response")                   \
    X(BAD_PROGRAM,    9, "program base/length out of range or misaligned")

/* STATUS[1:0] */
#define NPU_STATES(X) X(IDLE, 0) X(RUNNING, 1) X(DONE, 2) X(ERROR, 3)

/* CSRs: 32-bit registers at word addresses. */
#define NPU_CSRS(X)                                                               \
    X(CTRL,      0x00, "write 1 to bit 0: start; bit 1: clear counters")          \
    X(STATUS,    0x01, "[1:0] state, [15:8] error code")                          \
    X(ERR_PC,    0x02, "index of the faulting instruction")                       \
    X(ERR_INFO,  0x03, "error detail: faulting address, or queue state on deadlock") \
    X(PROG_BASE, 0x04, "program byte address in DRAM (aligned to max(16, 4S) bytes)")          \
    X(PROG_LEN,  0x05, "program length in instructions")                          \
    X(WATCHDOG,  0x06, "cycles without progress before DEADLOCK (0 = off)")      \
    X(HW_S,      0x07, "read-only: core side S of this build")                    \
    X(HW_SPM,    0x08, "read-only: SPM words")                                    \
    X(HW_OBUF,   0x09, "read-only: OBUF rows per half")                           \
    X(QSTATE,    0x0A, "read-only: queue occupancies and token counts")           \
    X(PC_L,      0x0B, "read-only: index of the LOAD instruction in progress")   \
    X(PC_E,      0x0C, "read-only: index of the EXEC instruction in progress")   \
    X(PC_S,      0x0D, "read-only: index of the STORE instruction in progress")  \
    X(FETCH_PC,  0x0E, "read-only: next instruction index to fetch")              \
    X(NOCSTATE,  0x0F, "read-only: NoC head flits per channel (frozen at an error)") \
    X(HW_DTYPE,  0x10, "read-only: element type of this build (NPU_DTYPES)")
#define NPU_CSR_CNT_LO 0x100 /* counter i low 32 bits at 0x100 + i */
#define NPU_CSR_CNT_HI 0x200 /* counter i high 32 bits at 0x200 + i */

/* NOCSTATE: one field of NPU_NOC_CH_BITS per NoC channel, channel c at bit c * NPU_NOC_CH_BITS
 * (0 = V, 1 = H channel L (cores 0, 2), 2 = H channel R (cores 1, 3)); inside a field: a flit
 * waiting, blocked, its group ID (4 bits), the destinations not ready (4 bits: V cores 0..3; H the
 * channel's two endpoints in bits 0, 1). rtl/npu_top.v and sw/run/runtime.c share these. */
#define NPU_NOC_CH_BITS 10
#define NPU_NOC_VLD 0
#define NPU_NOC_BLK 1
#define NPU_NOC_GID 2
#define NPU_NOC_WAIT 6
/* bit b of a field, in all three channels */
#define NPU_NOC_ALL(b) ((1u << (b)) | (1u << ((b) + NPU_NOC_CH_BITS)) | (1u << ((b) + 2 * NPU_NOC_CH_BITS)))

/* Performance counters, 64-bit, index = position in this list. */
#define NPU_COUNTERS(X)                                                          \
    X(cycles,            "cycles while running")                                \
    X(busy_core0,        "valid A rows entering core 0 (= its busy cycles)")   \
    X(busy_core1,        "cycles a valid A row entered core 1")                 \
    X(busy_core2,        "cycles a valid A row entered core 2")                 \
    X(busy_core3,        "cycles a valid A row entered core 3")                 \
    X(stall_core0,       "wave cycles core 0 waited for its LBUF_H")            \
    X(stall_core1,       "wave cycles core 1 waited for its LBUF_H")            \
    X(stall_core2,       "wave cycles core 2 waited for its LBUF_H")            \
    X(stall_core3,       "wave cycles core 3 waited for its LBUF_H")            \
    X(macs_core0,        "useful MACs (inside the valid k x n) in core 0")      \
    X(macs_core1,        "useful MACs in core 1")                               \
    X(macs_core2,        "useful MACs in core 2")                               \
    X(macs_core3,        "useful MACs in core 3")                               \
    X(waves_fw,          "FW waves")                                            \
    X(waves_vsw,         "VSW waves")                                           \
    X(waves_hsw,         "HSW waves")                                           \
    X(waves_isw,         "ISW waves")                                           \
    X(rows_fw,           "A rows injected in FW waves")                         \
    X(rows_vsw,          "A rows injected in VSW waves")                        \
    X(rows_hsw,          "A rows injected in HSW waves")                        \
    X(rows_isw,          "A rows injected in ISW waves")                        \
    X(dram_rd_prog,      "DRAM bytes read, program")                            \
    X(dram_rd_x,         "DRAM bytes read, tag X")                              \
    X(dram_rd_w,         "DRAM bytes read, tag W")                              \
    X(dram_rd_y,         "DRAM bytes read, tag Y")                              \
    X(dram_rd_dy,        "DRAM bytes read, tag dY")                             \
    X(dram_rd_dx,        "DRAM bytes read, tag dX")                             \
    X(dram_rd_dw,        "DRAM bytes read, tag dW")                             \
    X(dram_rd_partial,   "DRAM bytes read, tag partial")                        \
    X(dram_wr_prog,      "DRAM bytes written, program")                         \
    X(dram_wr_x,         "DRAM bytes written, tag X")                           \
    X(dram_wr_w,         "DRAM bytes written, tag W")                           \
    X(dram_wr_y,         "DRAM bytes written, tag Y")                           \
    X(dram_wr_dy,        "DRAM bytes written, tag dY")                          \
    X(dram_wr_dx,        "DRAM bytes written, tag dX")                          \
    X(dram_wr_dw,        "DRAM bytes written, tag dW")                          \
    X(dram_wr_partial,   "DRAM bytes written, tag partial")                     \
    X(dram_rd_bursts,    "read bursts issued to DRAM")                          \
    X(dram_wr_bursts,    "write bursts issued to DRAM")                         \
    X(spm_rd_words,      "SPM words read")                                      \
    X(spm_wr_words,      "SPM words written")                                   \
    X(spm_conflicts,     "SPM requests refused by a bank conflict (per cycle)") \
    X(noc_h_flits,       "NoC flits on the streamed (A, LBUF_H) channel")       \
    X(noc_v_flits,       "NoC flits on the stationary (B, LBUF_V) channel")     \
    X(noc_deliveries,    "flit deliveries into core buffers (multicast counts each)") \
    X(lbuf_h_words,      "SPM -> LBUF_H words (S elements) delivered")          \
    X(lbuf_v_words,      "SPM -> LBUF_V words (S elements) delivered")          \
    X(obuf_writes,       "OBUF row-lane writes (accumulate or overwrite)")      \
    X(obuf_drain_rows,   "OBUF rows drained to SPM")                            \
    X(insn_load,         "LOAD-queue instructions completed")                   \
    X(insn_exec,         "EXEC-queue instructions completed")                   \
    X(insn_store,        "STORE-queue instructions completed")                  \
    X(wait_tok_load,     "cycles the LOAD queue head waited for a token")       \
    X(wait_tok_exec,     "cycles the EXEC queue head waited for a token")       \
    X(wait_tok_store,    "cycles the STORE queue head waited for a token")      \
    X(wait_exec_weights, "cycles a WAVE waited for its stationary tile")        \
    X(wait_exec_obuf,    "cycles a WAVE waited for a DRAIN of its OBUF rows")   \
    X(wait_exec_unit,    "cycles an EXEC instruction waited for a busy unit")   \
    X(mode_switches,     "FlexSA mode changes (each waits for the array to empty)") \
    X(bypass_words,      "S-element A words driven over cores 0/2 on bypass (1) (OverCore)") \
    X(path2_results,     "int32 results driven over cores 2/3 on path (2) (OverCore)") \
    X(busy_fw,           "cycles an FW injection slot entered the array (array busy = sum of busy_<mode>)") \
    X(busy_vsw,          "cycles a VSW injection slot entered the array")       \
    X(busy_hsw,          "cycles an HSW injection slot entered the array")      \
    X(busy_isw,          "cycles an ISW injection slot entered the array")      \
    X(idle_pe_shape,     "PE-cycles of row-carrying sub-arrays outside the wave's k x n tile") \
    X(noc_mcast_saved,   "SPM words saved by multicast versus unicast (deliveries - flits)") \
    X(noc_h_link0,       "cycles a flit crossed the H link into core 0")        \
    X(noc_h_link1,       "cycles a flit crossed the H link into core 1")        \
    X(noc_h_link2,       "cycles a flit crossed the H link into core 2")        \
    X(noc_h_link3,       "cycles a flit crossed the H link into core 3")        \
    X(noc_v_link0,       "cycles a flit crossed the V link into core 0")        \
    X(noc_v_link1,       "cycles a flit crossed the V link into core 1")        \
    X(noc_v_link2,       "cycles a flit crossed the V link into core 2")        \
    X(noc_v_link3,       "cycles a flit crossed the V link into core 3")        \
    X(drain_busy,        "cycles a DRAIN was active")                           \
    X(drain_stall,       "drain cycles with a word refused by an SPM sub-bank conflict") \
    X(macs_zero,         "MACs whose streamed (A) operand is zero: lanes k_lo..k-1 x n of each row") \
    X(fill_words,        "SPM words zeroed by FILL")                            \
    X(vec_busy,          "cycles a VEC was active (vector unit)")              \
    X(vec_rd_words,      "SPM words read by the vector unit")                  \
    X(vec_wr_words,      "SPM words written by the vector unit")                  \
    X(spm_copy_words,    "SPM words written by LOAD_SPM (its source reads: spm_rd_words)") \
    X(busy_load,         "cycles the LOAD queue had an instruction in flight (QSTATE busy_l)") \
    X(busy_store,        "cycles the STORE queue had an instruction in flight (QSTATE busy_s)")

/* Enumerations generated from the lists above. */
#define NPU_X_OP(n, v, q, t) NPU_OP_##n = v,
enum npu_opcode { NPU_OPCODES(NPU_X_OP) };
#define NPU_X_TAG(n, v) NPU_TAG_##n = v,
enum npu_tag { NPU_TAGS(NPU_X_TAG) NPU_NUM_TAGS = 8 };
#define NPU_X_DTYPE(n, v, t) NPU_DTYPE_##n = v,
enum npu_dtype { NPU_DTYPES(NPU_X_DTYPE) NPU_NUM_DTYPES = 2 };
#define NPU_X_VOP(n, v, b, nw, t) NPU_VOP_##n = v,
#define NPU_X_VOP_ONE(n, v, b, nw, t) +1
#define NPU_X_VOP_B(n, v, b, nw, t) | ((b) << (v))
#define NPU_X_VOP_NW(n, v, b, nw, t) | ((nw) << (v))
enum npu_vop { NPU_VOPS(NPU_X_VOP) NPU_NUM_VOPS = 0 NPU_VOPS(NPU_X_VOP_ONE) };
/* Bit v set: op v reads b (NPU_VOP_B_MASK) / has no 32-bit form (NPU_VOP_NOWIDE_MASK); gencfg
 * writes the same masks for the RTL (VOP_B_MASK, VOP_NOWIDE_MASK). */
enum npu_vop_masks {
    NPU_VOP_B_MASK = 0 NPU_VOPS(NPU_X_VOP_B),
    NPU_VOP_NOWIDE_MASK = 0 NPU_VOPS(NPU_X_VOP_NW)
};
#define NPU_VOP_READS_B(v) ((unsigned)(v) < NPU_NUM_VOPS && ((NPU_VOP_B_MASK >> (v)) & 1))
#define NPU_VOP_HAS_WIDE(v) ((unsigned)(v) < NPU_NUM_VOPS && !((NPU_VOP_NOWIDE_MASK >> (v)) & 1))
#define NPU_X_MODE(n, v) NPU_MODE_##n = v,
enum npu_mode { NPU_MODES(NPU_X_MODE) NPU_NUM_MODES = 4 };
#define NPU_X_ERR(n, v, t) NPU_ERR_##n = v,
enum npu_error { NPU_ERRORS(NPU_X_ERR) };
#define NPU_X_STATE(n, v) NPU_STATE_##n = v,
enum npu_state { NPU_STATES(NPU_X_STATE) };
#define NPU_X_CSR(n, v, t) NPU_CSR_##n = v,
enum npu_csr { NPU_CSRS(NPU_X_CSR) };
#define NPU_X_CNT(n, t) NPU_CNT_##n,
enum npu_counter { NPU_COUNTERS(NPU_X_CNT) NPU_NUM_COUNTERS };
/* Field ids NPU_FLD_<FORMAT>_<name> (index into NPU_ISA_FIELDS) and bit positions in the
 * 128-bit instruction NPU_FLD_POS_<FORMAT>_<name> (32 * word + lsb). */
#define NPU_X_FLD(f, n, w, l, b) NPU_FLD_##f##_##n,
enum npu_isa_field { NPU_ISA_FIELDS(NPU_X_FLD) NPU_NUM_FIELDS };
#define NPU_X_FLD_POS(f, n, w, l, b) NPU_FLD_POS_##f##_##n = 32 * (w) + (l),
enum npu_isa_field_pos { NPU_ISA_FIELDS(NPU_X_FLD_POS) };

#endif
