`default_nettype none
`include "npu_assert.vh"
// npu_exec_decode: decode and range checks of the EXEC queue head, for npu_exec's issue.
//   in:  the head instruction q_insn (stable from q_vld until q_pop), q_vld, q_pop;
//   out: from the head, combinational: its class (is_*), token bits (t_*), bank and mode
//        fields; per unit the fields of its descriptor (ld_*: weight loader; wv_*: wave
//        streamer, injector, events, OBUF hazards; dr_*: drain engine; rows_lo/hi: the OBUF
//        rows [lo, hi) of a WAVE or DRAIN), some computed in the check stages below;
//        chk_vld: the head is in its fourth cycle or later, so every registered value
//        describes it (it may issue now); chk_err: a check failed, chk_code / chk_info: the
//        first failure, in the order ILLEGAL_OPCODE, BAD_DESC, SPM_ADDR, OBUF_ADDR (ERR_INFO:
//        0, the last SPM word, the OBUF end row, the opcode). The mode check against the
//        loaded bank is npu_exec's (it needs the weight loader's state).
// The only module that knows the bit positions and opcodes of LDW, WAVE, DRAIN and SYNC_E
// (docs/isa.md §2; VEC and VSET are the vector unit's, npu_exec_vec); no multiplier output
// leaves it unregistered. Row sets of a WAVE (docs/isa.md):
//   FW  1 set  [0,m)                         streams 0+2            wide OBUF layout
//   HSW 2 sets [0,ha) top, [ha,m) bottom     stream 0 | stream 2    wide
//   VSW 2 sets [0,ha) left, [ha,m) right     streams 0+2 | 1+3      skinny
//   ISW 4 sets core0 [0,qa), core2 [qa,ha), core1 [ha,ha+qb), core3 [ha+qb,m)   skinny
// with ha = ceil(m/2), qa = ceil(ha/2), qb = ceil((m-ha)/2). Wide: OBUF row obuf+i, lane = column.
// Skinny: rows i < ha at OBUF row obuf+i, lanes 0..S-1; rows i >= ha at obuf+i-ha, lanes S..2S-1.
// ISW bcast (w3[1]): every row to all four cores, each with its own tile (masked LDWs); run as
// an HSW wave of 2m rows whose sets both read rows [0,m) (one SPM read and one L flit per row):
// cores 0/1 -> OBUF rows obuf+i lanes 0..S-1 / S..2S-1, cores 2/3 -> obuf+m+i (wide).
module npu_exec_decode #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    parameter SPM_WORDS = 4096,
    parameter OBUF_ROWS = 256,
    parameter OBUF_AW   = 9,
    parameter BF16      = 0
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  q_vld,
    input  wire [127:0]          q_insn,
    input  wire                  q_pop,        // the head issues (its checks restart)
    // the head
    output wire                  is_ldw,
    output wire                  is_wave,
    output wire                  is_drain,
    output wire                  is_sync,
    output wire                  t_pop_prv,
    output wire                  t_pop_nxt,
    output wire                  t_psh_prv,
    output wire                  t_psh_nxt,
    output wire                  bank,         // LDW, WAVE: weight bank
    output wire [1:0]            mode_f,       // LDW, WAVE: the mode field
    output wire                  chk_vld,
    output wire                  chk_err,
    output wire [7:0]            chk_code,
    output wire [31:0]           chk_info,
    // LDW
    output wire [7:0]            ld_k,
    output wire [5:0]            ld_klo,       // window start k_lo
    output wire [15:0]           ld_stride,
    output wire [3:0]            ld_cmask,     // core mask (ISW)
    output wire                  ld_bhi,       // every core keeps lanes S..2S-1
    output wire [15:0]           ld_base,      // SPM address of row k_lo, the first row read
    output wire [15:0]           ld_base2,     // SPM address of row max(S, k_lo) (pair stream B)
    output wire                  ld_mono,      // one row a cycle (the 1G1C baseline's preload)
    output wire [31:0]           ld_addr,      // SPM address of row k-1, the last row read
    // WAVE
    output wire [1:0]            wv_mode,      // the mode the array runs its rows in (bcast: HSW)
    output wire                  wv_bc,        // ISW bcast
    output wire                  wv_acc,
    output wire                  wv_ahi,       // every core takes A lanes S..2S-1
    output wire [4*SPM_AW-1:0]   wv_sa,        // per stream position: SPM address of its first row
    output wire [15:0]           wv_stride,
    output wire [63:0]           wv_len,       // per set: rows
    output wire [4*OBUF_AW-1:0]  wv_ob,        // per set: OBUF row of its first row
    output wire [4*S-1:0]        wv_pass,      // per stream and lane: fed (lane >= k_lo)
    output wire [4*S-1:0]        wv_cntm,      // per stream and lane: k_lo <= lane < k
    output wire [63:0]           wv_macs,      // per core: MACs of one row passing through it
    output wire [15:0]           wv_idle,      // PEs of a row-carrying sub-array outside k x n
    output wire [7:0]            wv_n,         // n per row (bcast: 2n, two tiles)
    output wire [8*OBUF_AW+7:0]  wv_lr,        // per retirement lane l: OBUF rows [s_l, e_l)
    output wire [2:0]            wv_nset,      // non-empty sets
    output wire [15:0]           wv_m,         // rows of the sets (checks only)
    output wire                  wv_skinny,    // skinny OBUF layout (checks only)
    output wire [OBUF_AW:0]      rows_lo,      // WAVE, DRAIN: OBUF rows [rows_lo, rows_hi)
    output wire [OBUF_AW:0]      rows_hi,
    // DRAIN
    output wire                  dr_two,       // split pairs (npu_exec_drain)
    output wire [OBUF_AW-1:0]    dr_h,         // ceil(rows/2)
    output wire [15:0]           dr_hs,        // ceil(rows/2) * stride
    output wire [15:0]           dr_hoff,      // split_rows * stride
    output wire                  dr_acc,
    output wire                  dr_narrow,    // one 16-bit word per row (npu_drain_narrow)
    output wire [4:0]            dr_pack,      // n: rows' first n lanes back to back (npu_drain_pack), 0 off
    output wire [4:0]            dr_shift,
    output wire [15:0]           dr_stride,
    output wire [15:0]           dr_spm,
    output wire [OBUF_AW-1:0]    dr_ob,
    output wire [15:0]           dr_rows,
    output wire [15:0]           dr_split,
    output wire [15:0]           dr_hirows
);
`include "npu_defs.vh"
    localparam F  = 2 * S;           // fused array side
    localparam [7:0]  F8   = F[7:0];
    localparam [7:0]  S8   = S[7:0];
    localparam        LS   = $clog2(S); // lanes of a word (packed DRAIN): S = 2^LS
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    localparam [16:0] OBUF_ROWS17 = OBUF_ROWS[16:0];

    // ------------------------------------------------------------------ decode
    // Field positions from the ISA field table (F_* in npu_defs.vh, generated from NPU_ISA_FIELDS in
    // sw/hw/npu_defs.h). Fields shared by several formats are decoded once, at the position of the
    // named format; tests/unit/test_isa.c checks that the other formats put them at the same bits.
    wire [7:0]  op        = q_insn[F_INSN_OP_LSB +: F_INSN_OP_W];
    assign      t_pop_prv = q_insn[F_INSN_POP_PREV_LSB];
    assign      t_pop_nxt = q_insn[F_INSN_POP_NEXT_LSB];
    assign      t_psh_prv = q_insn[F_INSN_PUSH_PREV_LSB];
    assign      t_psh_nxt = q_insn[F_INSN_PUSH_NEXT_LSB];
    wire        f_bank    = q_insn[F_WAVE_WBANK_LSB];                   // LDW, WAVE
    wire [1:0]  f_mode    = q_insn[F_WAVE_MODE_LSB +: F_WAVE_MODE_W];    // LDW, WAVE
    wire        f_acc     = q_insn[F_WAVE_ACC_LSB];                     // WAVE, DRAIN
    wire [15:0] f_cnt     = q_insn[F_WAVE_M_LSB +: F_WAVE_M_W];          // WAVE m, DRAIN rows
    wire [15:0] f_w1lo    = q_insn[F_WAVE_SPM_ADDR_LSB +: F_WAVE_SPM_ADDR_W];          // LDW/WAVE spm_addr, DRAIN obuf_addr
    wire [15:0] f_w1hi    = q_insn[F_WAVE_SPM_STRIDE_LSB +: F_WAVE_SPM_STRIDE_W]; // LDW/WAVE spm_stride
    wire [7:0]  f_k       = q_insn[F_WAVE_K_LSB +: F_WAVE_K_W];          // LDW, WAVE
    wire [7:0]  f_n       = q_insn[F_WAVE_N_LSB +: F_WAVE_N_W];          // LDW, WAVE
    wire [3:0]  f_cmask   = q_insn[F_LDW_CORE_MASK_LSB +: F_LDW_CORE_MASK_W];
    wire        f_bhi     = q_insn[F_LDW_LANE_HI_LSB];   // LDW b_hi: every core keeps lanes S..2S-1
    wire        f_mono    = q_insn[F_LDW_MONO_LSB];      // LDW mono: one row a flit (1G1C's preload)
    wire        f_ahi     = q_insn[F_WAVE_LANE_HI_LSB];  // WAVE a_hi: every core takes lanes S..2S-1
    wire        f_bc      = q_insn[F_WAVE_BCAST_LSB];    // WAVE bcast: every row to all four cores
    wire [5:0]  f_klo_l   = q_insn[F_LDW_K_LO_LSB +: F_LDW_K_LO_W];     // LDW window start k_lo
    wire [5:0]  f_klo_w   = q_insn[F_WAVE_K_LO_LSB +: F_WAVE_K_LO_W];   // WAVE window start k_lo
    wire [15:0] f_w2lo    = q_insn[F_DRAIN_SPM_ADDR_LSB +: F_DRAIN_SPM_ADDR_W];     // DRAIN spm_addr
    wire [15:0] f_w2hi    = q_insn[F_DRAIN_SPM_STRIDE_LSB +: F_DRAIN_SPM_STRIDE_W]; // WAVE obuf_addr, DRAIN spm_stride
    wire [15:0] f_split   = q_insn[F_DRAIN_SPLIT_ROWS_LSB +: F_DRAIN_SPLIT_ROWS_W];
    wire [15:0] f_hirows  = q_insn[F_DRAIN_HI_ROWS_LSB +: F_DRAIN_HI_ROWS_W];
    wire        f_narrow  = q_insn[F_DRAIN_NARROW_LSB];                   // DRAIN (LDW/WAVE wbank)
    wire [4:0]  f_shift   = q_insn[F_DRAIN_SHIFT_LSB +: F_DRAIN_SHIFT_W];
    wire [4:0]  f_pack    = q_insn[F_DRAIN_PACK_LSB +: F_DRAIN_PACK_W];    // DRAIN pack: n lanes a row (0: off)
    wire        f_pk      = f_pack != 5'd0;

    assign is_ldw   = op == OP_LDW;
    assign is_wave  = op == OP_WAVE;
    assign is_drain = op == OP_DRAIN;
    assign is_sync  = op == OP_SYNC_E;

    // mode legality: HSW needs k <= S, VSW n <= S, ISW both
    wire k_small = f_k <= S8;
    wire n_small = f_n <= S8;
    wire mode_ok = (f_mode == MODE_FW) || (f_mode == MODE_HSW && k_small)
                || (f_mode == MODE_VSW && n_small) || (f_mode == MODE_ISW && k_small && n_small);
    // bcast (ISW only): the array runs the wave as an HSW wave of 2m rows whose two sets are
    // the same m SPM rows (read once, one L flit to cores 0/2, on to 1/3 over the row links),
    // so each core multiplies every row by its own tile; wide layout of 2m rows (header)
    wire bc      = op == OP_WAVE && f_bc;
    wire [1:0] s_mode = bc ? MODE_HSW : f_mode;   // the mode the array runs the rows in
    wire [15:0] m_set = bc ? {f_cnt[14:0], 1'b0} : f_cnt;   // rows of the sets
    wire skinny  = s_mode == MODE_VSW || s_mode == MODE_ISW;

    // row sets of a WAVE (see the header)
    wire [16:0] m17  = {1'b0, m_set};
    wire [16:0] ha17 = (m17 + 17'd1) >> 1;
    wire [15:0] ha   = ha17[15:0];
    wire [15:0] hb   = m_set - ha;
    wire [15:0] qa0  = (ha >> 1) + {15'd0, ha[0]};
    wire [15:0] qa1  = ha - qa0;
    wire [15:0] qb0  = (hb >> 1) + {15'd0, hb[0]};
    wire [15:0] qb1  = hb - qb0;
    wire [15:0] rows_used = skinny ? ha : m_set;   // OBUF rows a wave writes

    // Range checks in three registered stages, so that no multiplier sits in a path with adders
    // and comparators behind it, and no wide sum in front of the issue decision (synthesis: the
    // check was the deepest path of the NPU, deeper than the PE's multiply-add). The head
    // instruction is stable until it issues, so:
    //   stage 1 (cycle 1 at the head): three products of raw fields, base - stride (c1_*);
    //   stage 2 (cycle 2): last address = (base - stride) + count * stride, the descriptor and
    //            OBUF checks, the wave's per-position start addresses (chk_*_q);
    //   stage 3 (cycle 3): SPM out of range = OR of the sums' high bits (chk_spmf_q);
    // it may issue in cycle 4.
    // Shared multipliers (one instruction is checked at a time), each as two 8 x 16-bit half
    // products (low and high byte of the count; stage 2 adds them with the other terms): a
    // 16 x 16 multiplier alone is as deep as the PE (23 levels against 24), so with the opcode
    // decode and the operand mux in front it was the NPU's deepest path (29 at tiny); an 8 x 16
    // one is 18 levels. Products:
    //   p0 = m * stride (WAVE), rows * stride (DRAIN); LDW: k * stride (low) and
    //        k_lo * stride (high), so no k - k_lo subtraction sits in front of the multiplier:
    //        stage 2 subtracts the high half instead of adding it shifted
    //   p1 = (m >> 1) * stride (WAVE), split_rows * stride (DRAIN)
    //   p2 = (m >> 2) * stride (WAVE), hi_rows * stride (DRAIN)
    // pX = pXl + (pXh << 8), from which: (count-1) * stride = p0 - stride; ceil(m/2) * stride =
    // p1 + m[0] * stride; ceil(m/4) * stride = p2 + (m[1:0] != 0) * stride; (m - m/4) * stride =
    // p0 - p2 (the first rows of ISW sets 1..3 are ceil(ceil(m/2)/2), ceil(m/2), m - floor(m/4));
    // drain high rows: (split + hi - 1) * stride = p1 + p2 - stride.
    // The operand muxes select on opcode bits, not on the full decode (is_ldw, is_drain: an
    // 8-bit compare, 3 levels in front of the multipliers): the products only matter for LDW,
    // WAVE and DRAIN (chk_sv_q), and among those bit 2 is 0 for LDW only and bits 2 and 0 are
    // both 1 for DRAIN only (asserted: NPU_ASSERTS).
    wire        mul_ldw = op[2] == OP_LDW[2];
    wire        mul_drn = op[2] == OP_DRAIN[2] && op[0] == OP_DRAIN[0];
    wire [15:0] mul_s  = mul_drn ? (f_pk ? {11'd0, f_pack} : f_w2hi) : f_w1hi;
    wire [15:0] mul_a0 = mul_ldw ? {2'd0, f_klo_l, f_k} : f_cnt;
    // LDW: (S - k_lo) * stride, stream B's first row read (row max(S, k_lo)) from the base
    wire [7:0]  s_klo  = ({2'd0, f_klo_l} < S8) ? S8 - {2'd0, f_klo_l} : 8'd0;
    wire [15:0] mul_a1 = mul_ldw ? {8'd0, s_klo} : (mul_drn && !f_pk) ? f_split : {1'b0, f_cnt[15:1]};
    wire [15:0] mul_a2 = mul_drn ? f_hirows : {2'b0, f_cnt[15:2]};
    // An LDW reads its rows k_lo..k-1 from base + (r - k_lo) * stride: its count is k - k_lo,
    // and its last word, base + (k - k_lo - 1) * stride, is the address of its first row read
    // (row k-1, the last read: rows go top first), which the weight loader checks (chk_sl_q).
    // c1_bms = base - stride, + 1 for an LDW (two's complement of k_lo * stride: ~x + 1) and for
    // a plain DRAIN (its check word is the one after the last; a narrow DRAIN writes one word
    // per row), so stage 2 needs no carry-in.
    wire        dr_splitm     = f_split != 16'd0;
    wire        bms_ci = mul_ldw || (mul_drn && !dr_splitm && !f_narrow);
    reg  [23:0] c1_p0l, c1_p0h, c1_p1l, c1_p1h, c1_p2l, c1_p2h;
    reg  [33:0] c1_bms;              // base - stride (+ bms_ci), two's complement, 34 bits
    always @(posedge clk) begin
        c1_p0l <= {16'd0, mul_a0[7:0]}  * {8'd0, mul_s};
        c1_p0h <= {16'd0, mul_a0[15:8]} * {8'd0, mul_s};
        c1_p1l <= {16'd0, mul_a1[7:0]}  * {8'd0, mul_s};
        c1_p1h <= {16'd0, mul_a1[15:8]} * {8'd0, mul_s};
        c1_p2l <= {16'd0, mul_a2[7:0]}  * {8'd0, mul_s};
        c1_p2h <= {16'd0, mul_a2[15:8]} * {8'd0, mul_s};
        c1_bms <= {18'd0, mul_drn ? f_w2lo : f_w1lo} - {18'd0, mul_s} + {33'd0, bms_ci};
    end
    // last address touched = base + (count-1)*stride, in wide arithmetic (count >= 1 here: a
    // zero count is BAD_DESC, checked first, and so is an LDW k_lo >= k); +1 for a plain DRAIN
    // (c1_bms). Stage 2 only adds (three to five operands, one carry chain) and compares.
    wire [33:0] p0h_t = mul_ldw ? ~{10'd0, c1_p0h} : {2'd0, c1_p0h, 8'd0};
    wire [33:0] last0 = c1_bms + {10'd0, c1_p0l} + p0h_t;
    // x >= SPM_WORDS: with a power-of-two SPM (every config) the OR of the bits above the
    // address, not a second carry chain behind the sum
    localparam SPM_POW2 = SPM_WORDS == (1 << SPM_AW);
    function spm_out(input [33:0] x);
        if (SPM_POW2) spm_out = |(x >> SPM_AW);
        else          spm_out = x >= SPM_WORDS34;
    endfunction
    // DRAIN acc reads the words it writes: its destinations must not overlap
    wire        dr_acc_overlap = f_acc && (dr_splitm ? (f_w2hi == 16'd0 || f_split < f_cnt)
                                                     : f_w2hi < 16'd2);
    // packed DRAIN (pack = n): hn = rows/2 * n lanes a segment (p1: the products take n and rows/2);
    // the last word is that of the last segment (1 plain, 3 skinny), base + j * stride + hn/S - 1
    wire [33:0] pk_hn   = {10'd0, c1_p1l} + {2'd0, c1_p1h, 8'd0};
    wire [33:0] pk_segs = dr_splitm ? {18'd0, f_w2hi} + {17'd0, f_w2hi, 1'b0} : {18'd0, f_w2hi};
    wire [33:0] pk_last = {18'd0, f_w2lo} + pk_segs + (pk_hn >> LS) - 34'd1;
    // skinny DRAIN: last word of the high rows, base + (split + hi - 1) * stride (bms_ci = 0)
    wire [33:0] dr_hi_lastw = c1_bms + {10'd0, c1_p1l} + {2'd0, c1_p1h, 8'd0}
                                     + {10'd0, c1_p2l} + {2'd0, c1_p2h, 8'd0};
    // per stream position: SPM address of the first row of its set (npu_exec_wave), mod the
    // SPM size (a power of 2); positions a mode leaves unused get don't-care values. Each is one
    // multi-operand sum of the half products (mod 2^SPM_AW: their low bits only), the mode
    // selecting operands, not sums.
    wire [SPM_AW-1:0] str_a  = f_w1hi[SPM_AW-1:0];
    wire [SPM_AW-1:0] sa0    = f_w1lo[SPM_AW-1:0];
    wire [SPM_AW-1:0] lo_p0l = c1_p0l[SPM_AW-1:0];
    wire [SPM_AW-1:0] lo_p1l = c1_p1l[SPM_AW-1:0];
    wire [SPM_AW-1:0] lo_p2l = c1_p2l[SPM_AW-1:0];
    wire [31:0]       sh_p0h = {c1_p0h, 8'd0};
    wire [31:0]       sh_p1h = {c1_p1h, 8'd0};
    wire [31:0]       sh_p2h = {c1_p2h, 8'd0};
    wire [SPM_AW-1:0] lo_p0h = sh_p0h[SPM_AW-1:0];
    wire [SPM_AW-1:0] lo_p1h = sh_p1h[SPM_AW-1:0];
    wire [SPM_AW-1:0] lo_p2h = sh_p2h[SPM_AW-1:0];
    wire              hsw    = f_mode == MODE_HSW;
    wire [SPM_AW-1:0] st_h   = f_cnt[0] ? str_a : {SPM_AW{1'b0}};
    wire [SPM_AW-1:0] st_q   = f_cnt[1:0] != 2'd0 ? str_a : {SPM_AW{1'b0}};
    //   p3: (m - m/4) * stride; p2: ceil(m/2) * stride; p1: HSW ceil(m/2), else ceil(m/4) * stride
    wire [SPM_AW-1:0] sa_3   = sa0 + lo_p0l + lo_p0h - lo_p2l - lo_p2h;
    wire [SPM_AW-1:0] sa_2   = sa0 + lo_p1l + lo_p1h + st_h;
    wire [SPM_AW-1:0] sa_1   = sa0 + (hsw ? lo_p1l : lo_p2l) + (hsw ? lo_p1h : lo_p2h) + (hsw ? st_h : st_q);
    wire [4*SPM_AW-1:0] sa_m = {sa_3, sa_2, sa_1, sa0};
    // OBUF range: a wave or drain stays inside one half (the unit of double buffering)
    localparam RW = OBUF_AW + 1;     // an OBUF row or the end of a range (up to 2 * OBUF_ROWS)
    // (stage 2, like the SPM sums: rows_used, ceil(m/2) for a skinny wave, is registered in
    // stage 1, so the incrementer is not in front of the sum and the compares)
    reg  [15:0] c1_ru;
    always @(posedge clk) c1_ru <= rows_used;
    wire [16:0] wave_obuf_end = {1'b0, f_w2hi} + {1'b0, c1_ru};
    wire [16:0] dr_obuf_end   = {1'b0, f_w1lo} + {1'b0, f_cnt};
    wire [16:0] wave_in_half  = ({1'b0, f_w2hi} % OBUF_ROWS17) + {1'b0, c1_ru};
    wire [16:0] dr_in_half    = ({1'b0, f_w1lo} % OBUF_ROWS17) + {1'b0, f_cnt};

    // OBUF rows a WAVE writes, per retirement lane (the last lane of each sub-array, see
    // npu_exec_obuf_hazard: P0 top S-1, P1 top 2S-1, P2 out S-1, P3 out 2S-1), for its
    // row-granular OBUF hazards: lane l of a wave retires the rows [s_l, e_l) in order (absolute OBUF rows,
    // RW bits: the end may be 2 * OBUF_ROWS; an unused lane has s_l = e_l):
    //   FW  P3 [ob, ob+m)
    //   HSW P1 [ob, ob+ha)    P3 [ob+ha, ob+m)
    //   VSW P2 [ob, ob+ha)    P3 [ob, ob+hb)                        (lanes 0..S-1 | S..2S-1)
    //   ISW P0 [ob, ob+qa0)   P2 [ob+qa0, ob+ha)   P1 [ob, ob+qb0)   P3 [ob+qb0, ob+hb)
    // Computed in the check stages (stage 1: the set sizes from m; stage 2: the sums), so no adder
    // chain reaches the issue. A WAVE that issues passed the OBUF range check, so its sizes fit
    // in RW bits (truncated values belong to waves that never issue).
    reg  [RW-1:0] c1_m, c1_ha, c1_hb, c1_qa0, c1_qb0;
    always @(posedge clk) begin
        c1_m   <= m_set[RW-1:0];
        c1_ha  <= ha[RW-1:0];
        c1_hb  <= hb[RW-1:0];
        c1_qa0 <= qa0[RW-1:0];
        c1_qb0 <= qb0[RW-1:0];
    end
    wire [RW-1:0] lr_ob   = {1'b0, f_w2hi[OBUF_AW-1:0]};
    wire [RW-1:0] lr_m    = lr_ob + c1_m;
    wire [RW-1:0] lr_ha   = lr_ob + c1_ha;
    wire [RW-1:0] lr_hb   = lr_ob + c1_hb;
    wire [RW-1:0] lr_qa0  = lr_ob + c1_qa0;
    wire [RW-1:0] lr_qb0  = lr_ob + c1_qb0;
    reg  [8*RW-1:0] lr_m8;           // {e3, s3, e2, s2, e1, s1, e0, s0}
    always @(*) begin
        lr_m8 = {8*RW{1'b0}};
        case (s_mode)
            MODE_FW:  lr_m8[6*RW +: 2*RW] = {lr_m, lr_ob};
            MODE_HSW: begin
                lr_m8[2*RW +: 2*RW] = {lr_ha, lr_ob};
                lr_m8[6*RW +: 2*RW] = {lr_m, lr_ha};
            end
            MODE_VSW: begin
                lr_m8[4*RW +: 2*RW] = {lr_ha, lr_ob};
                lr_m8[6*RW +: 2*RW] = {lr_hb, lr_ob};
            end
            default: begin
                lr_m8[0*RW +: 2*RW] = {lr_qa0, lr_ob};
                lr_m8[4*RW +: 2*RW] = {lr_ha, lr_qa0};
                lr_m8[2*RW +: 2*RW] = {lr_qb0, lr_ob};
                lr_m8[6*RW +: 2*RW] = {lr_hb, lr_qb0};
            end
        endcase
    end
    // the rows of the head WAVE [lo, hi) and of the head DRAIN, registered in stage 2
    reg  [8*RW-1:0] chk_lr_q;
    reg  [RW-1:0]   chk_rlo_q, chk_rhi_q;
    // DRAIN, SPM offsets of the drain engine (stage 2, from the stage 1 products): the high word
    // of a skinny row, split_rows * stride, and the second cursor of a split pair (see
    // npu_exec_drain), ceil(rows/2) * stride = (rows * stride + rows[0] * stride) / 2. A DRAIN that issues
    // passed the SPM range check, so the offsets it uses are below the SPM size (16 bits).
    reg  [15:0]     chk_hoff_q, chk_hs_q;
    // Stage 3: the drain engine's pair order (split pairs where they keep the SPM words of a pair
    // in four sub-banks, or where adjacent pairs do not either): npu_spm's sub-bank of an address
    // offset, ignoring carries, is the XOR of a code per set bit i (01, 10, 11 for i mod 3 = 0,
    // 1, 2); a pair's words are at offsets 0, x, y, x ^ y (x = 1 wide or split * stride skinny,
    // y = stride adjacent or ceil(rows/2) * stride split): four sub-banks iff the codes of x and
    // y are non-zero and differ.
    function [1:0] sub_code(input [15:0] v);
        integer b;
        begin
            sub_code = 2'b00;
            for (b = 0; b < 16; b = b + 1)
                if (v[b]) sub_code = sub_code ^ ((b % 3 == 0) ? 2'b01 : (b % 3 == 1) ? 2'b10 : 2'b11);
        end
    endfunction
    wire [1:0] sc_x  = dr_splitm ? sub_code(chk_hoff_q) : 2'b01;
    wire [1:0] sc_ya = sub_code(f_w2hi);
    wire [1:0] sc_ys = sub_code(chk_hs_q);
    wire       dq_two_ok = !f_acc && (dr_splitm ? (f_w2hi != 16'd0 && f_split >= f_cnt) : f_w2hi >= 16'd2);
    // split_rows * stride; ceil(rows/2) * stride = (rows * stride + rows[0] * stride) / 2 (an
    // even sum: the shift drops a zero)
    wire [15:0] hoff_m = c1_p1l[15:0] + {c1_p1h[7:0], 8'd0};
    wire [16:0] hs_m   = c1_p0l[16:0] + {c1_p0h[8:0], 8'd0} + (f_cnt[0] ? {1'b0, f_w2hi} : 17'd0);
    reg        chk_two_q;            // DRAIN: split pairs allowed (npu_exec_drain) and chosen
    always @(posedge clk)
        chk_two_q <= f_pk || dq_two_ok && ((sc_x != 2'b00 && sc_ys != 2'b00 && sc_ys != sc_x)
                                   || !(sc_x != 2'b00 && sc_ya != 2'b00 && sc_ya != sc_x));
    always @(posedge clk) begin
        chk_hoff_q <= hoff_m[15:0];
        chk_hs_q   <= hs_m[16:1];
        chk_lr_q  <= lr_m8;
        chk_rlo_q <= is_drain ? {1'b0, f_w1lo[OBUF_AW-1:0]} : lr_ob;
        chk_rhi_q <= is_drain ? dr_obuf_end[RW-1:0] : skinny ? lr_ha : lr_m;
    end

    // Per-instruction error flags (registered in stage 2; the code and ERR_INFO are formed after
    // the register, in priority order BAD_DESC, SPM_ADDR, OBUF_ADDR, so the range sums feed a
    // register through an OR only)
    wire ldw_bad   = f_k == 8'd0 || f_k > F8 || f_n == 8'd0 || f_n > F8 || !mode_ok
                  || (f_cmask != 4'd0 && f_mode != MODE_ISW) || {2'd0, f_klo_l} >= f_k;
    wire wave_bad  = f_cnt == 16'd0 || f_k == 8'd0 || f_k > F8 || f_n == 8'd0 || f_n > F8 || !mode_ok
                  || {2'd0, f_klo_w} >= f_k || (f_bc && (f_mode != MODE_ISW || f_cnt[15]));
    // narrow: not with acc or split_rows; shift only with narrow and int16 elements
    // pack: not with narrow or acc; even rows; a segment's hn lanes end on a word and fit in stride
    // words; n < 2S (skinny: n <= S, split_rows = hi_rows = rows)
    wire pack_bad  = f_narrow || f_acc || f_cnt[0] || pk_hn[LS-1:0] != {LS{1'b0}}
                  || pk_hn > ({18'd0, f_w2hi} << LS)
                  || (dr_splitm ? ({3'd0, f_pack} > S8 || f_split != f_cnt || f_hirows != f_cnt)
                                : {3'd0, f_pack} >= F8);
    wire drain_bad = f_cnt == 16'd0 || (!dr_splitm && f_hirows != 16'd0) || f_hirows > f_cnt
                  || dr_acc_overlap || (f_narrow && (f_acc || dr_splitm))
                  || (f_shift != 5'd0 && (!f_narrow || BF16 != 0)) || (f_pk && pack_bad);
    wire chk_f_bad = is_ldw ? ldw_bad : is_wave ? wave_bad : is_drain && drain_bad;
    wire chk_f_ob  = is_wave ? (wave_obuf_end > 2 * OBUF_ROWS17 || wave_in_half > OBUF_ROWS17)
                   : is_drain && (dr_obuf_end > 2 * OBUF_ROWS17 || dr_in_half > OBUF_ROWS17);
    // VEC and VSET: decoded and checked by the vector unit (npu_exec_vec)
    wire chk_f_ill = !is_ldw && !is_wave && !is_drain && !is_sync && op != OP_VEC && op != OP_VSET;

    // The range checks are registered in three stages (see "Range checks" above): a head
    // instruction is checked in the three cycles after it arrives and may issue from the fourth.
    // This keeps the multipliers and the wide adds out of the issue -> token -> counter path and
    // out of each other's cycle (synthesis found the check the deepest path of the NPU); it costs
    // three cycles per EXEC instruction at the queue head, mostly hidden because issue runs ahead
    // of the units (the wave queue, the drain queue, the shadow weight bank).
    reg  [1:0]  chk_st;      // cycles the current head has been checked (stages 1, 2, 3)
    assign      chk_vld = chk_st == 2'd3;   // chk_*_q describe the current head
    reg         chk_bad_q, chk_obf_q, chk_ill_q, chk_shv_q, chk_sv_q;
    reg  [33:0] chk_sl_q, chk_sh_q;  // last SPM word (+1 for a plain DRAIN), skinny DRAIN high
    reg  [15:0] chk_b2_q;            // LDW stream B's base (an LDW's addresses are < 2^16)
    // ERR_INFO candidates are registered beside the code and selected after the register: the
    // selection depends on the range compares, so selecting before would chain them
    reg  [31:0] chk_spm_q;
    reg  [16:0] chk_ob_q;
    reg  [4*SPM_AW-1:0] chk_sa_q;
    always @(posedge clk) begin
        if (!rst_n || !q_vld || q_pop) chk_st <= 2'd0;
        else if (!chk_vld)             chk_st <= chk_st + 2'd1;
        chk_bad_q  <= chk_f_bad;
        chk_sl_q   <= (is_drain && f_pk) ? pk_last : last0;
        chk_sh_q   <= dr_hi_lastw;
        chk_b2_q   <= f_w1lo + c1_p1l[15:0] + {c1_p1h[7:0], 8'd0};
        chk_shv_q  <= is_drain && dr_splitm && f_hirows != 16'd0 && !f_pk;
        chk_sv_q   <= is_ldw || is_wave || is_drain;
        chk_obf_q  <= chk_f_ob;
        chk_ill_q  <= chk_f_ill;
        chk_ob_q   <= is_drain ? dr_obuf_end : wave_obuf_end;
        chk_sa_q   <= sa_m;
    end
    // SPM range: the sums are registered (chk_sl_q, chk_sh_q) and tested after the register (an
    // OR of their high bits): out of range = the larger last word out of range = either one
    // (stage 3, registered: the OR would otherwise lead the issue path)
    // ERR_INFO's SPM word = the larger of the two (skinny DRAIN), also chosen in stage 3
    reg  chk_spmf_q;
    always @(posedge clk) begin
        chk_spmf_q <= chk_sv_q && (spm_out(chk_sl_q) || (chk_shv_q && spm_out(chk_sh_q)));
        chk_spm_q  <= (chk_shv_q && chk_sh_q > chk_sl_q) ? chk_sh_q[31:0] : chk_sl_q[31:0];
    end
    wire [7:0] chk_code_q = chk_ill_q ? ERR_ILLEGAL_OPCODE : chk_bad_q ? ERR_BAD_DESC
                          : chk_spmf_q ? ERR_SPM_ADDR : chk_obf_q ? ERR_OBUF_ADDR : ERR_NONE;
    // ERR_INFO: 0 none, 1 last SPM word, 2 OBUF end row, 3 opcode
    wire [1:0] chk_isel_q = chk_ill_q ? 2'd3 : chk_bad_q ? 2'd0 : chk_spmf_q ? 2'd1
                          : chk_obf_q ? 2'd2 : 2'd0;
    wire [31:0] chk_info_q = (chk_isel_q == 2'd1) ? chk_spm_q : (chk_isel_q == 2'd2) ? {15'd0, chk_ob_q}
                           : (chk_isel_q == 2'd3) ? {24'd0, op} : 32'd0;

    // MACs per core for one row passing through it: the core's part of the valid k x n, where
    // the valid lanes of the k-block are [k_lo, k): k0 of them below S (the cores' low half, the
    // top cores in FW/VSW), k1 = k - k_lo - k0 at or above S. Registered in the check stages
    // like the range checks (stage 1: the lane counts from the raw fields; stage 2: the
    // products; stage 3: the idle PEs, a subtraction behind a product), so no multiplier is on
    // the issue path; the head is stable until it issues.
    wire [7:0]  kl_lo  = ({2'd0, f_klo_w} > S8) ? S8 : {2'd0, f_klo_w};
    wire [7:0]  kl_hi  = ({2'd0, f_klo_w} > S8) ? {2'd0, f_klo_w} - S8 : 8'd0;
    // The lane counts of a WAVE that issues are at most 2S (k, n <= 2S, k_lo < k; else
    // BAD_DESC), so they are registered in KW bits: small multipliers (a shared 8 x 8 one with
    // the mode's operand mux in front was 25 levels, deeper than the PE).
    localparam KW = $clog2(F + 1);
    wire [7:0]  k0_8 = ((f_k > S8) ? S8 : f_k) - kl_lo;
    wire [7:0]  k1_8 = ((f_k > S8) ? f_k - S8 : 8'd0) - kl_hi;
    wire [7:0]  kk_8 = f_k - {2'd0, f_klo_w};
    wire [7:0]  n0_8 = (f_n > S8) ? S8 : f_n;
    wire [7:0]  n1_8 = (f_n > S8) ? f_n - S8 : 8'd0;
    reg  [KW-1:0] c1_k0, c1_k1, c1_kk, c1_n0, c1_n1, c1_n;
    always @(posedge clk) begin
        c1_n  <= f_n[KW-1:0];
        c1_k0 <= k0_8[KW-1:0];
        c1_k1 <= k1_8[KW-1:0];
        c1_kk <= kk_8[KW-1:0];
        c1_n0 <= n0_8[KW-1:0];
        c1_n1 <= n1_8[KW-1:0];
    end
    wire [15:0] p_k0n0 = {{(16-KW){1'b0}}, c1_k0} * {{(16-KW){1'b0}}, c1_n0};
    wire [15:0] p_k0n1 = {{(16-KW){1'b0}}, c1_k0} * {{(16-KW){1'b0}}, c1_n1};
    wire [15:0] p_k1n0 = {{(16-KW){1'b0}}, c1_k1} * {{(16-KW){1'b0}}, c1_n0};
    wire [15:0] p_k1n1 = {{(16-KW){1'b0}}, c1_k1} * {{(16-KW){1'b0}}, c1_n1};
    wire [15:0] kn     = {{(16-KW){1'b0}}, c1_kk} * {{(16-KW){1'b0}}, c1_n};   // (k - k_lo) * n
    reg  [63:0] macs_m;
    reg  [63:0] len_m;
    reg  [4*OBUF_AW-1:0] ob_m;
    wire [OBUF_AW-1:0] f_ob = f_w2hi[OBUF_AW-1:0];
    always @(*) begin
        case (s_mode)
            MODE_FW: begin
                macs_m  = {p_k1n1, p_k1n0, p_k0n1, p_k0n0};
                len_m   = {48'd0, f_cnt};
                ob_m    = {{(3*OBUF_AW){1'b0}}, f_ob};
            end
            MODE_HSW: begin       // k <= S: cores {0,2} columns 0..S-1, {1,3} columns S..2S-1
                macs_m  = bc ? {4{kn}} : {p_k0n1, p_k0n0, p_k0n1, p_k0n0};   // bcast: own n each
                len_m   = {32'd0, hb, ha};
                ob_m    = {{(2*OBUF_AW){1'b0}}, f_ob + ha[OBUF_AW-1:0], f_ob};
            end
            MODE_VSW: begin       // n <= S: cores {0,1} rows 0..S-1, {2,3} rows S..2S-1
                macs_m  = {p_k1n0, p_k1n0, p_k0n0, p_k0n0};
                len_m   = {32'd0, hb, ha};
                ob_m    = {{(2*OBUF_AW){1'b0}}, f_ob, f_ob};
            end
            default: begin        // ISW: sets 0..3 = cores 0, 2, 1, 3
                macs_m  = {4{kn}};
                len_m   = {qb1, qb0, qa1, qa0};
                ob_m    = {f_ob + qb0[OBUF_AW-1:0], f_ob, f_ob + qa0[OBUF_AW-1:0], f_ob};
            end
        endcase
    end
    // PEs of one sub-array (4S^2 / parts) that the k x n tile leaves unused, per row it carries
    localparam integer PE4I = 4 * S * S;
    localparam [15:0] PE4 = PE4I[15:0];
    // (bcast: a sub-array, two cores, holds two k x n tiles)
    wire [15:0] pes_m  = (s_mode == MODE_FW) ? PE4 : (s_mode == MODE_ISW) ? PE4 >> 2 : PE4 >> 1;
    reg  [63:0] chk_macs_q;
    reg  [15:0] chk_kn_q, chk_idle_q;
    always @(posedge clk) begin
        chk_macs_q <= macs_m;
        chk_kn_q   <= kn;
        chk_idle_q <= pes_m - (bc ? chk_kn_q << 1 : chk_kn_q);
    end
    // Lanes of the k-block per stream (core k's LBUF_H, S lanes each; lane l of stream k is
    // k-block lane j = l + S in FW/VSW cores 2/3, else l, after the a_hi selection):
    // pass = j >= k_lo (lanes below k_lo are fed as zeros), cnt = k_lo <= j < k (macs_zero).
    // BF16: pass = cnt. Lanes past k are fed as +0 too: they meet LDW's zero rows, and an A
    // element there that is Inf or NaN would make 0 x Inf = NaN in fp32 (int16 feeds them as
    // they are, which the ISA keeps; their product with a zero row is 0 anyway).
    reg  [4*S-1:0] lane_pass_m, lane_cnt_m, chk_pass_q, chk_cnt_q;
    integer lq, ll;
    always @(*)
        for (lq = 0; lq < 4; lq = lq + 1)
            for (ll = 0; ll < S; ll = ll + 1) begin
                lane_pass_m[lq*S + ll] = ll + (((f_mode == MODE_FW || f_mode == MODE_VSW) && lq >= 2) ? S : 0)
                                         >= {26'd0, f_klo_w};
                lane_cnt_m[lq*S + ll]  = lane_pass_m[lq*S + ll]
                                      && ll + (((f_mode == MODE_FW || f_mode == MODE_VSW) && lq >= 2) ? S : 0)
                                         < {24'd0, f_k};
            end
    always @(posedge clk) begin
        chk_pass_q <= (BF16 != 0) ? lane_cnt_m : lane_pass_m;
        chk_cnt_q  <= lane_cnt_m;
    end
    // the set lengths are registered (the head is stable until it issues): the injector's
    // next-wave compares (len_nxt) then start at a register, not behind the bcast decode and
    // the row-set adders (synthesis: 27 levels in context from the queue head, 24 registered)
    reg  [63:0] chk_len_q;
    always @(posedge clk) chk_len_q <= len_m;
    wire [2:0] nset_m = {2'd0, chk_len_q[15:0] != 16'd0} + {2'd0, chk_len_q[31:16] != 16'd0}
                      + {2'd0, chk_len_q[47:32] != 16'd0} + {2'd0, chk_len_q[63:48] != 16'd0};

    // ------------------------------------------------------------------ outputs
    assign bank      = f_bank;
    assign mode_f    = f_mode;
    assign chk_err   = chk_bad_q || chk_spmf_q || chk_obf_q || chk_ill_q;
    assign chk_code  = chk_code_q;
    assign chk_info  = chk_info_q;
    assign ld_k      = f_k;
    assign ld_klo    = f_klo_l;
    assign ld_stride = f_w1hi;
    assign ld_cmask  = f_cmask;
    assign ld_bhi    = f_bhi;
    assign ld_base   = f_w1lo;
    assign ld_base2  = chk_b2_q;
    assign ld_mono   = f_mono;
    assign ld_addr   = chk_sl_q[31:0];
    assign wv_mode   = s_mode;
    assign wv_bc     = bc;
    assign wv_acc    = f_acc;
    assign wv_ahi    = f_ahi;
    assign wv_sa     = chk_sa_q;
    assign wv_stride = f_w1hi;
    assign wv_len    = chk_len_q;
    assign wv_ob     = ob_m;
    assign wv_pass   = chk_pass_q;
    assign wv_cntm   = chk_cnt_q;
    assign wv_macs   = chk_macs_q;
    assign wv_idle   = chk_idle_q;
    assign wv_n      = bc ? {f_n[6:0], 1'b0} : f_n;   // bcast: a row meets two n-wide tiles
    assign wv_lr     = chk_lr_q;
    assign wv_nset   = nset_m;
    assign wv_m      = m_set;
    assign wv_skinny = skinny;
    assign rows_lo   = chk_rlo_q;
    assign rows_hi   = chk_rhi_q;
    assign dr_two    = chk_two_q;
    assign dr_h      = c1_ha[OBUF_AW-1:0];
    assign dr_hs     = chk_hs_q;
    assign dr_hoff   = chk_hoff_q;
    assign dr_acc    = f_acc;
    assign dr_narrow = f_narrow;
    assign dr_pack   = f_pack;
    assign dr_shift  = f_shift;
    assign dr_stride = f_w2hi;
    assign dr_spm    = f_w2lo;
    assign dr_ob     = f_w1lo[OBUF_AW-1:0];
    assign dr_rows   = f_cnt;
    assign dr_split  = f_split;
    assign dr_hirows = f_hirows;

    wire unused = &{1'b0, k0_8, k1_8, kk_8, n0_8, n1_8, hs_m[0], sh_p0h, sh_p1h, sh_p2h, ha17[16],
                    pk_hn[33:32]};

`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        // the check stage's multiplier operands select on opcode bits (see "Range checks")
        if (q_vld && (is_ldw || is_wave || is_drain) && (mul_ldw != is_ldw || mul_drn != is_drain))
            `NPU_ASSERT_FAIL("opcode bits of the check multipliers' operand muxes disagree with the decode")
    end
`endif
endmodule
`default_nettype wire
