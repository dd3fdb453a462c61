`default_nettype none
`include "npu_assert.vh"
// npu_exec: the EXEC queue. Issues LDW / WAVE / DRAIN / SYNC_E in order, each to its own unit,
// and lets the three units run concurrently so that stationary preloading (LDW into the shadow
// weight bank), streaming waves and OBUF draining overlap:
//   weight loader  LDW:   SPM -> V channel -> LBUF_V -> PE weight bank (column shift chains)
//   wave engine    WAVE:  SPM -> H channel -> LBUF_H -> injector -> FlexSA -> OBUF
//   drain engine   DRAIN: OBUF -> SPM
// Hazards are interlocked here, so a program only needs tokens for DMA <-> EXEC ordering:
//   LDW(bank b) shifts only when no issued wave using b is pending or still in the array;
//   WAVE(bank b) issues only when b is loaded and no LDW to b is outstanding, and its OBUF half
//   is not being drained; a DRAIN(half h) waits in a small queue and starts when no row for h
//   is pending or in flight.
// Modes (docs/design.md §2): a WAVE's m rows are split into row sets, one per sub-array, injected in
// lockstep (one slot per cycle: slot t carries row t of every set that has one):
//   FW  1 set  [0,m)                         streams 0+2            wide OBUF layout
//   HSW 2 sets [0,ha) top, [ha,m) bottom     stream 0 | stream 2    wide
//   VSW 2 sets [0,ha) left, [ha,m) right     streams 0+2 | 1+3      skinny
//   ISW 4 sets core0 [0,qa), core2 [qa,ha), core1 [ha,ha+qb), core3 [ha+qb,m)   skinny
// with ha = ceil(m/2), qa = ceil(ha/2), qb = ceil((m-ha)/2). Wide: OBUF row obuf+i, lane = column.
// Skinny: rows i < ha at OBUF row obuf+i, lanes 0..S-1; rows i >= ha at obuf+i-ha, lanes S..2S-1.
// ISW bcast (w3[1]): every row to all four cores, each with its own tile (masked LDWs); run as
// an HSW wave of 2m rows whose sets both read rows [0,m) (one SPM read and one L flit per row):
// cores 0/1 -> OBUF rows obuf+i lanes 0..S-1 / S..2S-1, cores 2/3 -> obuf+m+i (wide).
// Rows carry their mode through the array (npu_flexsa), so a mode change costs only the gap
// that keeps rows of the old and the new mode from entering a core in the same cycle (injector).
module npu_exec #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    parameter SPM_WORDS = 4096,
    parameter OBUF_ROWS = 256,
    parameter OBUF_AW   = 9,
    parameter TAGW      = 12
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  run,          // issue allowed (0 after an error)
    // EXEC queue head
    input  wire                  q_vld,
    input  wire [127:0]          q_insn,
    input  wire [31:0]           q_pc,
    output wire                  q_pop,
    output wire [31:0]           pc_cur,     // head instruction, else the last one issued
    // dependency tokens
    input  wire                  l2e_avail,
    input  wire                  s2e_avail,
    output wire                  pop_l2e,
    output wire                  pop_s2e,
    output wire [2:0]            push_e2l,
    output wire [2:0]            push_e2s,
    // status
    output wire                  err,
    output wire [7:0]            err_code,
    output wire [31:0]           err_info,
    output wire [31:0]           err_pc,
    output wire                  busy,
    output wire                  progress,
    output wire [2:0]            done_cnt,
    // SPM: port A (streamed operand), port W (stationary operand), drain write port
    output wire [3:0]            rda_req,      // one A port per stream position (see streamer)
    output wire [4*SPM_AW-1:0]   rda_addr,
    input  wire [3:0]            rda_gnt,
    input  wire [4*32*S-1:0]     rda_data,
    output wire                  rdw_req,
    output wire [SPM_AW-1:0]     rdw_addr,
    input  wire                  rdw_gnt,
    input  wire [32*S-1:0]       rdw_data,
    output wire [3:0]            wr_req,       // drain: [0]/[1] low/high word of row r, [2]/[3] row r+1
    output wire [4*SPM_AW-1:0]   wr_addr,
    output wire [4*32*S-1:0]     wr_data,
    input  wire [3:0]            wr_gnt,
    // NoC sources
    // two H channels: [0] = L (LBUF_H of cores 0/2), [1] = R (cores 1/3); the low endpoint of a
    // channel (core 0/1) keeps lanes 0..S-1 of a flit, the high one (core 2/3) lanes S..2S-1
    output wire [1:0]            h_vld,
    output wire [7:0]            h_gid,        // per channel: core bitmask of its destinations
    output wire [2*32*S-1:0]     h_data,
    output wire [1:0]            h_two,        // the flit carries two SPM words (two rows)
    input  wire [1:0]            h_rdy,
    output wire                  v_vld,
    output wire [3:0]            v_gid,
    output wire [3:0]            v_half,       // NoC V endpoint halves for the head flit
    output wire [32*S-1:0]       v_data,
    input  wire                  v_rdy,
    // per-core local buffers
    input  wire [3:0]            lbh_empty,
    input  wire [4*S*16-1:0]     lbh_dout,
    output wire [3:0]            lbh_pop,
    input  wire [3:0]            lbv_empty,
    input  wire [4*S*16-1:0]     lbv_dout,
    output wire [3:0]            lbv_pop,
    // FlexSA
    output wire [1:0]            mode,
    output wire [3:0]            inj_vld,
    output wire [4*S*16-1:0]     inj_a,
    output wire [3:0]            inj_sel,
    output wire [4*TAGW-1:0]     inj_tag,
    output wire [3:0]            w_shift,
    output wire [3:0]            w_bank,
    output wire [4*S*16-1:0]     w_in,
    input  wire [2*S-1:0]        out_vld,
    input  wire [2*S*TAGW-1:0]   out_tag,
    input  wire [2*S-1:0]        top_vld,
    input  wire [2*S*TAGW-1:0]   top_tag,
    // OBUF
    output wire [2*S-1:0]        ob_wr_en,
    output wire [2*S*OBUF_AW-1:0] ob_wr_addr,
    output wire [2*S-1:0]        ob_wr_acc,
    output wire [2*S-1:0]        ob2_wr_en,    // path (2): results of cores 0/1 (HSW/ISW)
    output wire [2*S*OBUF_AW-1:0] ob2_wr_addr,
    output wire [2*S-1:0]        ob2_wr_acc,
    output wire                  ob_rd_en,
    output wire [OBUF_AW-1:0]    ob_rd_addr,
    input  wire [2*S*32-1:0]     ob_rd_data,
    output wire                  ob_rd2_en,    // second row of a drained pair
    output wire [OBUF_AW-1:0]    ob_rd2_addr,
    input  wire [2*S*32-1:0]     ob_rd2_data,
    // counter events
    output wire [3:0]            ev_busy,      // per core: a valid row entered
    output wire [3:0]            ev_stall,     // per core: wave waiting for its LBUF_H
    output wire [4*16-1:0]       ev_macs,      // per core: useful MACs this cycle
    output wire [3:0]            ev_wave,      // one-hot mode of a WAVE issued this cycle
    output wire [3:0]            ev_row,       // one-hot mode of an injection slot this cycle
    output wire [11:0]           ev_rows,      // per mode (3 bits each): rows injected this cycle
    output wire                  ev_mode_switch, // the injection mode changed
    output wire [1:0]            ev_bypass,    // S-element A words over bypass (1) to cores 1/3 (VSW/ISW)
    output wire [7:0]            ev_path2,     // int32 results of cores 0/1 over path (2) (HSW/ISW)
    output wire                  ev_wait_tok,
    output wire                  ev_wait_weights,
    output wire                  ev_wait_obuf,
    output wire                  ev_wait_unit,
    output wire [7:0]            ev_obuf_writes,
    output wire [1:0]            ev_drain_row,
    output wire [15:0]           ev_idle_shape,  // PEs of row-carrying sub-arrays outside k x n
    output wire [15:0]           ev_macs_zero,   // MACs fed a zero A element (lanes k_lo..k-1 x n)
    output wire                  ev_drain_busy,  // a DRAIN is active
    output wire                  ev_drain_stall  // a drain word was refused by the SPM
);
`include "npu_defs.vh"
    localparam F  = 2 * S;           // fused array side
    localparam WB = 32 * S;          // SPM word bits
    localparam FW_ = 7;              // counters 0..2S (S <= 64) in FW_+1 bits
    localparam [7:0]  F8   = F[7:0];
    localparam [7:0]  S8   = S[7:0];
    localparam [FW_:0] FC  = F[FW_:0];
    localparam [FW_:0] SC  = S[FW_:0];
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    localparam [16:0] OBUF_ROWS17 = OBUF_ROWS[16:0];

    // ------------------------------------------------------------------ decode
    wire [7:0]  op        = q_insn[7:0];
    wire        t_pop_prv = q_insn[8];
    wire        t_pop_nxt = q_insn[9];
    wire        t_psh_prv = q_insn[10];
    wire        t_psh_nxt = q_insn[11];
    wire        f_bank    = q_insn[12];
    wire [1:0]  f_mode    = q_insn[14:13];
    wire        f_acc     = q_insn[15];
    wire [15:0] f_cnt     = q_insn[31:16];    // WAVE m, DRAIN rows
    wire [15:0] f_w1lo    = q_insn[47:32];    // LDW/WAVE spm_addr, DRAIN obuf_addr
    wire [15:0] f_w1hi    = q_insn[63:48];    // LDW/WAVE spm_stride
    wire [7:0]  f_k       = q_insn[71:64];
    wire [7:0]  f_n       = q_insn[79:72];
    wire [3:0]  f_cmask   = q_insn[83:80];    // LDW core mask (w2[19:16])
    wire        f_bhi     = q_insn[84];       // LDW b_hi (w2[20]): every core keeps lanes S..2S-1
    wire        f_ahi     = q_insn[96];       // WAVE a_hi (w3[0]): every core takes lanes S..2S-1
    wire        f_bc      = q_insn[97];       // WAVE bcast (w3[1]): every row to all four cores
    wire [5:0]  f_klo_l   = q_insn[93:88];    // LDW window start k_lo (w2[29:24])
    wire [5:0]  f_klo_w   = q_insn[109:104];  // WAVE window start k_lo (w3[13:8])
    wire [15:0] f_w2lo    = q_insn[79:64];    // DRAIN spm_addr
    wire [15:0] f_w2hi    = q_insn[95:80];    // WAVE obuf_addr, DRAIN spm_stride
    wire [15:0] f_split   = q_insn[111:96];   // DRAIN split_rows (w3[15:0])
    wire [15:0] f_hirows  = q_insn[127:112];  // DRAIN hi_rows (w3[31:16])

    wire is_ldw   = op == OP_LDW;
    wire is_wave  = op == OP_WAVE;
    wire is_drain = op == OP_DRAIN;
    wire is_sync  = op == OP_SYNC_E;

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
    wire        mul_ldw = !op[2];
    wire        mul_drn = op[2] && op[0];
    wire [15:0] mul_s  = mul_drn ? f_w2hi : f_w1hi;
    wire [15:0] mul_a0 = mul_ldw ? {2'd0, f_klo_l, f_k} : f_cnt;
    wire [15:0] mul_a1 = mul_drn ? f_split : {1'b0, f_cnt[15:1]};
    wire [15:0] mul_a2 = mul_drn ? f_hirows : {2'b0, f_cnt[15:2]};
    // An LDW reads its rows k_lo..k-1 from base + (r - k_lo) * stride: its count is k - k_lo,
    // and its last word, base + (k - k_lo - 1) * stride, is the address of its first row read
    // (row k-1: rows go bottom first), which the weight loader takes from chk_sl_q.
    // c1_bms = base - stride, + 1 for an LDW (two's complement of k_lo * stride: ~x + 1) and for
    // a plain DRAIN (its check word is the one after the last), so stage 2 needs no carry-in.
    wire        dr_splitm     = f_split != 16'd0;
    wire        bms_ci = mul_ldw || (mul_drn && !dr_splitm);
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
    // skinny DRAIN: last word of the high rows, base + (split + hi - 1) * stride (bms_ci = 0)
    wire [33:0] dr_hi_lastw = c1_bms + {10'd0, c1_p1l} + {2'd0, c1_p1h, 8'd0}
                                     + {10'd0, c1_p2l} + {2'd0, c1_p2h, 8'd0};
    // per stream position: SPM address of the first row of its set (see the streamer), mod the
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
    localparam CFW = 5 + 8 * RW;     // completion record: lane ranges, sets, token pushes
    // (stage 2, like the SPM sums: rows_used, ceil(m/2) for a skinny wave, is registered in
    // stage 1, so the incrementer is not in front of the sum and the compares)
    reg  [15:0] c1_ru;
    always @(posedge clk) c1_ru <= rows_used;
    wire [16:0] wave_obuf_end = {1'b0, f_w2hi} + {1'b0, c1_ru};
    wire [16:0] dr_obuf_end   = {1'b0, f_w1lo} + {1'b0, f_cnt};
    wire [16:0] wave_in_half  = ({1'b0, f_w2hi} % OBUF_ROWS17) + {1'b0, c1_ru};
    wire [16:0] dr_in_half    = ({1'b0, f_w1lo} % OBUF_ROWS17) + {1'b0, f_cnt};

    // OBUF rows a WAVE writes, per retirement lane (the last lane of each sub-array, see
    // "retirement" below: P0 top S-1, P1 top 2S-1, P2 out S-1, P3 out 2S-1), for the row-granular
    // OBUF hazards: lane l of a wave retires the rows [s_l, e_l) in order (absolute OBUF rows,
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
    // of a skinny row, split_rows * stride, and the second cursor of a split pair (see the drain
    // engine), ceil(rows/2) * stride = (rows * stride + rows[0] * stride) / 2. A DRAIN that issues
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
    reg        chk_two_q;            // DRAIN: split pairs allowed (see the drain engine) and chosen
    always @(posedge clk)
        chk_two_q <= dq_two_ok && ((sc_x != 2'b00 && sc_ys != 2'b00 && sc_ys != sc_x)
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
    wire drain_bad = f_cnt == 16'd0 || (!dr_splitm && f_hirows != 16'd0) || f_hirows > f_cnt
                  || dr_acc_overlap;
    wire chk_f_bad = is_ldw ? ldw_bad : is_wave ? wave_bad : is_drain && drain_bad;
    wire chk_f_ob  = is_wave ? (wave_obuf_end > 2 * OBUF_ROWS17 || wave_in_half > OBUF_ROWS17)
                   : is_drain && (dr_obuf_end > 2 * OBUF_ROWS17 || dr_in_half > OBUF_ROWS17);
    wire chk_f_ill = !is_ldw && !is_wave && !is_drain && !is_sync;

    // ------------------------------------------------------------------ per-mode routing
    // Set j of a wave: NoC group (cores whose LBUF_H take its rows = streams it drives) and the
    // cores its rows pass through.
    function [3:0] set_gid(input [1:0] md, input integer j);
        case (md)
            MODE_FW:  set_gid = (j == 0) ? 4'b0101 : 4'b0000;
            MODE_HSW: set_gid = (j == 0) ? 4'b0001 : (j == 1) ? 4'b0100 : 4'b0000;
            MODE_VSW: set_gid = (j == 0) ? 4'b0101 : (j == 1) ? 4'b1010 : 4'b0000;
            default:  set_gid = (j == 0) ? 4'b0001 : (j == 1) ? 4'b0100 :
                                (j == 2) ? 4'b0010 : 4'b1000;
        endcase
    endfunction
    function [3:0] set_cores(input [1:0] md, input integer j);
        case (md)
            MODE_FW:  set_cores = (j == 0) ? 4'b1111 : 4'b0000;
            MODE_HSW: set_cores = (j == 0) ? 4'b0011 : (j == 1) ? 4'b1100 : 4'b0000;
            default:  set_cores = set_gid(md, j);
        endcase
    endfunction
    // the set that drives stream (core) k
    function [1:0] stream_set(input [1:0] md, input integer k);
        case (md)
            MODE_FW:  stream_set = 2'd0;
            MODE_HSW: stream_set = (k >= 2) ? 2'd1 : 2'd0;
            MODE_VSW: stream_set = (k == 1 || k == 3) ? 2'd1 : 2'd0;
            default:  stream_set = (k == 0) ? 2'd0 : (k == 2) ? 2'd1 : (k == 1) ? 2'd2 : 2'd3;
        endcase
    endfunction

    // ------------------------------------------------------------------ unit state
    // weight loader
    reg          ldw_act;
    reg          ldw_bank;
    reg  [7:0]   ldw_k;
    reg  [5:0]   ldw_klo;            // rows below k_lo are zero (not read)
    reg  [3:0]   ldw_gid_r;          // 0: FW/VSW row halves; else the fixed group
    reg  [1:0]   ldw_lanes;          // {forced, high}: 0x = the mode's halves, 10 low, 11 high
    reg  [FW_:0] ldw_nrows;          // rows sent: 2S (FW, VSW) or S
    reg  [31:0]  ldw_addr;           // running SPM address of the row being requested
    reg  [15:0]  ldw_stride;
    reg  [FW_:0] ldw_i;              // rows requested so far (bottom row first)
    reg  [FW_:0] sh_cnt [0:3];       // words shifted into each core
    reg  [1:0]   ldw_push;
    reg  [3:0]   loaded4 [0:1];      // per bank, per core: tile present
    reg  [1:0]   bank_mode [0:1];    // per bank: the mode whose layout its LDW loaded
    reg  [3:0]   ldw_mask;
    reg  [1:0]   w_early;            // early waves on the active LDW's bank (issued after it)
    // wave queue: two entries shared by the streamer (SPM side) and the injector (array side)
    reg  [1:0]   wq_cnt, wq_unstreamed;
    reg          wq_wr, wq_st, wq_in;
    reg  [1:0]   wq_mode [0:1];
    reg          wq_bank [0:1];
    reg  [1:0]   wq_early;           // issued early (before its LDW completed): not injected yet
    reg          wq_acc  [0:1];
    reg          wq_ahi  [0:1];      // a_hi: every core takes A lanes S..2S-1
    reg          wq_bc   [0:1];      // bcast: position 0 reads each row once, the L flit carries it twice
    reg  [4*SPM_AW-1:0] wq_sa [0:1]; // per stream position: SPM address of its first row
    reg  [15:0]  wq_str  [0:1];
    reg  [63:0]  wq_len  [0:1];      // per set: rows
    reg  [4*OBUF_AW-1:0] wq_ob [0:1];  // per set: OBUF row of its first row
    reg  [63:0]  wq_macs [0:1];      // per core: MACs of one row passing through it
    reg  [15:0]  wq_idle [0:1];      // PEs of one sub-array outside the wave's k x n
    reg  [4*S-1:0] wq_pass [0:1];    // per stream and lane: fed (k-block lane >= k_lo), else zero
    reg  [4*S-1:0] wq_cntm [0:1];    // per stream and lane: counted by macs_zero (k_lo <= lane < k)
    reg  [7:0]   wq_n    [0:1];      // n (macs_zero: zero lanes x n)
    reg  [15:0]  st_t, in_t;
    reg  [SPM_AW-1:0] st_off;        // st_t * row stride (mod the SPM size)
    reg  [4*SPM_AW-1:0] st_addr_r;   // per position: wq_sa[wq_st] + st_off (registered)
    reg  [3:0]   st_done;
    reg  [1:0]   wpend [0:1];        // per bank: waves issued, not fully injected
    reg  [15:0]  infl  [0:1];        // per bank: rows in the array
    reg  [1:0]   amode;              // mode of the array (rows in flight)
    reg  [2:0]   lcnt;               // last rows of the oldest wave retired so far
    // drain
    reg          dr_act, dr_splitm_r;
    reg  [15:0]  dr_ri, dr_ri2, dr_hi;   // the pair's row indices, hi_rows (skinny)
    reg          dr_two;             // split pairs (drain engine)
    reg  [31:0]  dr_spm_next, dr_hoff;
    reg  [15:0]  dr_stride;
    reg  [1:0]   dr_push;
    reg          hold_vld, hold_lo, hold_hi;
    reg          dr_acc;             // the active DRAIN accumulates into the SPM
    reg          war_blk_q;          // a DRAIN queued or reading overlaps the head WAVE's rows
    wire         wl_rd_req, wl_rd_gnt;
    wire [SPM_AW-1:0] wl_rd_addr;
    reg  [31:0]  hold_addr;
    reg          h2_vld, h2_lo, h2_hi;   // second row of a pair (plain drains)
    reg  [31:0]  h2_addr;

    wire         dq_full;

    // completion records of issued waves (in order; waves retire in order)
    wire         cf_full, cf_empty;
    wire [CFW-1:0] cf_dout;
    wire [3:0]   cf_count;

    // ------------------------------------------------------------------ issue
    wire tokens_ok = (!t_pop_prv || l2e_avail) && (!t_pop_nxt || s2e_avail);
    // A WAVE issues when its bank is loaded, or is being loaded by the active LDW so that every
    // core will hold its tile (early: the streamer fetches its A rows while the weights shift in;
    // the injector holds it until the LDW completes, wq_early). So the instructions behind it (a
    // DRAIN of the previous wave's rows) issue without waiting for the LDW.
    // Both per bank in registers (wok_q, wearly_q), computed from the LDW state of the next cycle
    // as far as LDW completion changes it; an LDW issue changes it a cycle late, which no WAVE can
    // see (the next head is in its check stages).
    reg  [1:0] wok_q, wearly_q;
    wire wave_w_early = wearly_q[f_bank];
    wire wave_w_ok  = wok_q[f_bank];
    wire wave_ob_ok = !war_blk_q;
    wire unit_ok = is_ldw   ? !ldw_act :
                   is_wave  ? (wq_cnt != 2'd2 && !cf_full) :
                   is_drain ? !dq_full : 1'b1;
    wire hazard_ok = is_wave ? (wave_w_ok && wave_ob_ok) : 1'b1;
    // The range checks are registered in three stages (see "Range checks" above): a head
    // instruction is checked in the three cycles after it arrives and may issue from the fourth.
    // This keeps the multipliers and the wide adds out of the issue -> token -> counter path and
    // out of each other's cycle (synthesis found the check the deepest path of the NPU); it costs
    // three cycles per EXEC instruction at the queue head, mostly hidden because issue runs ahead
    // of the units (the wave queue, the drain queue, the shadow weight bank).
    reg  [1:0]  chk_st;      // cycles the current head has been checked (stages 1, 2, 3)
    wire        chk_vld = chk_st == 2'd3;   // chk_*_q describe the current head
    reg         chk_bad_q, chk_obf_q, chk_ill_q, chk_shv_q, chk_sv_q;
    reg  [33:0] chk_sl_q, chk_sh_q;  // last SPM word (+1 for a plain DRAIN), skinny DRAIN high
    // ERR_INFO candidates are registered beside the code and selected after the register: the
    // selection depends on the range compares, so selecting before would chain them
    reg  [31:0] chk_spm_q;
    reg  [16:0] chk_ob_q;
    reg  [4*SPM_AW-1:0] chk_sa_q;
    always @(posedge clk) begin
        if (!rst_n || !q_vld || q_pop) chk_st <= 2'd0;
        else if (!chk_vld)             chk_st <= chk_st + 2'd1;
        chk_bad_q  <= chk_f_bad;
        chk_sl_q   <= last0;
        chk_sh_q   <= dr_hi_lastw;
        chk_shv_q  <= is_drain && dr_splitm && f_hirows != 16'd0;
        chk_sv_q   <= is_ldw || is_wave || is_drain;
        chk_obf_q  <= chk_f_ob;
        chk_ill_q  <= chk_f_ill;
        chk_ob_q   <= is_drain ? dr_obuf_end : wave_obuf_end;
        chk_sa_q   <= sa_m;
    end
    // A WAVE must run in the mode its bank was loaded for (each mode lays the stationary tile
    // out differently over the four cores): checked when the bank is ready, else BAD_DESC.
    wire mode_bad = chk_vld && is_wave && wave_w_ok && bank_mode[f_bank] != f_mode;
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
    wire bad = (chk_vld && (chk_bad_q || chk_spmf_q || chk_obf_q || chk_ill_q)) || mode_bad;
    wire can_issue = run && q_vld && chk_vld && !bad && tokens_ok && unit_ok && hazard_ok;
    wire issue_ldw   = can_issue && is_ldw;
    wire issue_wave  = can_issue && is_wave;
    wire issue_drain = can_issue && is_drain;
    wire issue_sync  = can_issue && is_sync;
    assign q_pop   = can_issue;
    assign pop_l2e = can_issue && t_pop_prv;
    assign pop_s2e = can_issue && t_pop_nxt;

    assign err      = run && q_vld && bad;
    assign err_code = (chk_code_q != ERR_NONE) ? chk_code_q : ERR_BAD_DESC;
    wire [31:0] chk_info_q = (chk_isel_q == 2'd1) ? chk_spm_q : (chk_isel_q == 2'd2) ? {15'd0, chk_ob_q}
                           : (chk_isel_q == 2'd3) ? {24'd0, op} : 32'd0;
    assign err_info = (chk_code_q != ERR_NONE) ? chk_info_q : {28'd0, bank_mode[f_bank], f_mode};
    assign err_pc   = q_pc;

    reg [31:0] pc_q;
    always @(posedge clk) begin
        if (!rst_n) pc_q <= 32'd0;
        else if (q_vld) pc_q <= q_pc;
    end
    assign pc_cur = q_vld ? q_pc : pc_q;

    assign ev_wait_tok     = run && q_vld && chk_vld && !bad && !tokens_ok;
    assign ev_wait_weights = run && q_vld && tokens_ok && is_wave && !wave_w_ok;
    assign ev_wait_obuf    = run && q_vld && tokens_ok && is_wave && wave_w_ok && !wave_ob_ok;
    assign ev_wait_unit    = run && q_vld && tokens_ok && hazard_ok && !unit_ok;
    assign ev_wave         = issue_wave ? (4'b0001 << s_mode) : 4'b0000;   // bcast counts as HSW

    // ------------------------------------------------------------------ weight loader
    // Rows go bottom-first so that after S shifts each core's chain holds its rows in place;
    // rows >= k are zero words that never touch the SPM. Per mode (one SPM read per row, the
    // NoC multicasts it):
    //   FW : rows 2S-1..0; rows >= S to cores {2,3}, rows < S to {0,1}; cores 1/3 keep the high half
    //   VSW: rows 2S-1..0 like FW, every core keeps the low half (columns 0..S-1)
    //   HSW: rows S-1..0 to all four cores; cores 1/3 keep the high half
    //   ISW: rows S-1..0 to all four, low halves; with a core mask: to the masked cores only
    wire [3:0]   ld_mask   = (f_cmask != 4'd0) ? f_cmask : 4'b1111;
    wire         ld_full   = f_cmask == 4'd0 && (f_mode == MODE_FW || f_mode == MODE_VSW);
    wire [FW_:0] ld_nrows  = ld_full ? FC : SC;
    wire [FW_:0] ldw_row   = ldw_nrows - 1'b1 - ldw_i;
    // "more rows" and "this row is a zero row" are registered (updated with ldw_i), so the SPM
    // request and its grant, which gate ldw_addr/ldw_i, follow no compare
    reg          ldw_more, ldw_zero;
    wire         ldw_req   = ldw_act && ldw_more;
    wire         ldw_rdy;
    wire         rdw_idle;
    // The running address is that of the next row read: it starts at row k-1 (the first
    // nonzero row, bottom first; k <= nrows), base + (k - 1 - k_lo) * stride = the range
    // check's last word (chk_sl_q, registered: no adder on the issue path), and steps down by
    // the stride after each row read (rows >= k and < k_lo are zero, not read).
    wire [3:0]   ldw_gid   = (ldw_gid_r != 4'd0) ? ldw_gid_r :
                             (ldw_row >= SC) ? 4'b1100 : 4'b0011;
    wire [5:0]   v_tag;
    npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(6)) u_rdw (
        .clk(clk), .rst_n(rst_n),
        .req_vld(ldw_req), .req_addr(ldw_addr[SPM_AW-1:0]), .req_zero(ldw_zero),
        .req_gid({ldw_lanes, ldw_gid}), .req_rdy(ldw_rdy),
        .rd_req(wl_rd_req), .rd_addr(wl_rd_addr), .rd_gnt(wl_rd_gnt), .rd_data(rdw_data),
        .out_vld(v_vld), .out_gid(v_tag), .out_data(v_data), .out_rdy(v_rdy), .idle(rdw_idle)
    );
    assign v_gid  = v_tag[3:0];
    // the lane choice travels with the flit (an LDW may start while the previous one drains)
    assign v_half = v_tag[5] ? {4{v_tag[4]}} : 4'b1010;
    // the waves on its bank issued before it (pending or in the array) are done; the early waves
    // issued after it (w_early, not injected before it completes) do not count
    wire bank_free = wpend[ldw_bank] == w_early && infl[ldw_bank] == 16'd0;
    genvar c;
    generate
        for (c = 0; c < 4; c = c + 1) begin : g_shift
            assign lbv_pop[c] = ldw_act && bank_free && !lbv_empty[c] && sh_cnt[c] < SC;
            assign w_shift[c] = lbv_pop[c];
            assign w_bank[c]  = ldw_bank;
            assign w_in[c*S*16 +: S*16] = lbv_dout[c*S*16 +: S*16];
        end
    endgenerate
    wire ldw_done = ldw_act && sh_cnt[0] == SC && sh_cnt[1] == SC && sh_cnt[2] == SC && sh_cnt[3] == SC;
    // wok_q / wearly_q (issue): bank b loaded, or loading by the active LDW to a full cover
    genvar wb;
    generate
        for (wb = 0; wb < 2; wb = wb + 1) begin : g_wok
            wire       own   = ldw_bank == wb[0];
            wire [3:0] ld_n  = (ldw_done && own) ? (loaded4[wb] | ldw_mask) : loaded4[wb];
            wire       act_n = ldw_act && !ldw_done && own;
            always @(posedge clk) begin
                wearly_q[wb] <= rst_n && act_n && (ld_n | ldw_mask) == 4'b1111;
                wok_q[wb]    <= rst_n && ((ld_n == 4'b1111 && !act_n) || (act_n && (ld_n | ldw_mask) == 4'b1111));
            end
        end
    endgenerate

    integer i;
    always @(posedge clk) begin
        if (!rst_n) begin
            ldw_act <= 1'b0; loaded4[0] <= 4'b0000; loaded4[1] <= 4'b0000;
            w_early <= 2'd0;
            ldw_i <= 0;
            for (i = 0; i < 4; i = i + 1) sh_cnt[i] <= 0;
        end else begin
            if (issue_ldw) begin
                ldw_act    <= 1'b1;
                ldw_bank   <= f_bank;
                ldw_k      <= f_k;
                ldw_stride <= f_w1hi;
                ldw_nrows  <= ld_nrows;
                ldw_mask   <= ld_mask;
                ldw_gid_r  <= ld_full ? 4'b0000 : ld_mask;
                ldw_lanes  <= {f_bhi || f_cmask != 4'd0 || f_mode == MODE_VSW || f_mode == MODE_ISW,
                               f_bhi};
                ldw_klo    <= f_klo_l;
                ldw_addr   <= chk_sl_q[31:0];
                ldw_i      <= 0;
                ldw_more   <= 1'b1;
                ldw_zero   <= {{(8-FW_){1'b0}}, ld_nrows - 1'b1} >= {1'b0, f_k}
                           || {{(8-FW_){1'b0}}, ld_nrows - 1'b1} < {3'd0, f_klo_l};
                ldw_push   <= {t_psh_nxt, t_psh_prv};
                loaded4[f_bank]  <= loaded4[f_bank] & ~ld_mask;
                bank_mode[f_bank] <= (f_cmask != 4'd0) ? MODE_ISW : f_mode;
                for (i = 0; i < 4; i = i + 1) sh_cnt[i] <= ld_mask[i] ? {(FW_+1){1'b0}} : SC;
            end else begin
                if (ldw_req && ldw_rdy) begin
                    ldw_i    <= ldw_i + 1'b1;
                    if (!ldw_zero) ldw_addr <= ldw_addr - {16'd0, ldw_stride};
                    ldw_more <= ldw_i + 1'b1 < ldw_nrows;
                    ldw_zero <= {{(8-FW_){1'b0}}, ldw_row - 1'b1} >= {1'b0, ldw_k}
                             || {{(8-FW_){1'b0}}, ldw_row - 1'b1} < {3'd0, ldw_klo};
                end
                for (i = 0; i < 4; i = i + 1)
                    if (lbv_pop[i]) sh_cnt[i] <= sh_cnt[i] + 1'b1;
                if (issue_wave && wave_w_early) w_early <= w_early + 2'd1;
                if (ldw_done) begin
                    w_early <= 2'd0;
                    ldw_act <= 1'b0;
                    loaded4[ldw_bank]  <= loaded4[ldw_bank] | ldw_mask;
                end
            end
        end
    end

    // ------------------------------------------------------------------ wave engine
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
        chk_pass_q <= lane_pass_m;
        chk_cnt_q  <= lane_cnt_m;
    end
    // the set lengths are registered (the head is stable until it issues): the injector's
    // next-wave compares (len_nxt) then start at a register, not behind the bcast decode and
    // the row-set adders (synthesis: 27 levels in context from the queue head, 24 registered)
    reg  [63:0] chk_len_q;
    always @(posedge clk) chk_len_q <= len_m;
    wire [2:0] nset_m = {2'd0, chk_len_q[15:0] != 16'd0} + {2'd0, chk_len_q[31:16] != 16'd0}
                      + {2'd0, chk_len_q[47:32] != 16'd0} + {2'd0, chk_len_q[63:48] != 16'd0};

    // streamer: slot t reads row t of every set that has one, all in the same cycle, one SPM read
    // port each, so each sub-array gets a row per cycle (the injector pops a slot per cycle).
    // Sets are mapped to four stream positions, which fix the H channel and the flit half:
    //   p0 = channel L low (core 0)   p1 = L high (core 2)   p2 = R low (core 1)   p3 = R high (core 3)
    //   FW : set 0 -> p0 as a full flit (lanes 0..S-1 to core 0, S..2S-1 to core 2)
    //   HSW: set 0 -> p0, set 1 -> p1, packed into one L flit (k <= S: each row is S lanes)
    //   VSW: set 0 -> p0 full on L, set 1 -> p2 full on R
    //   ISW: set j -> p j; L packs sets 0/1, R packs sets 2/3
    // So one flit per slot and channel; a packed flit carries two SPM words (h_two). A position
    // refused by the SPM retries; the slot ends when every position of it was granted.
    function [3:0] pos_on(input [1:0] md);
        case (md)
            MODE_FW:  pos_on = 4'b0001;
            MODE_HSW: pos_on = 4'b0011;
            MODE_VSW: pos_on = 4'b0101;
            default:  pos_on = 4'b1111;
        endcase
    endfunction
    // the set that position p carries (for positions the mode uses)
    function [1:0] pos_set(input [1:0] md, input integer p);
        pos_set = (md == MODE_VSW && p == 2) ? 2'd1 : p[1:0];
    endfunction
    wire        st_act  = wq_unstreamed != 2'd0;
    wire [1:0]  st_mode = wq_mode[wq_st];
    wire [63:0] st_len  = wq_len[wq_st];
    wire        st_ahi  = wq_ahi[wq_st];
    wire        st_bc   = wq_bc[wq_st];
    wire        st_full = st_mode == MODE_FW || st_mode == MODE_VSW;
    wire [3:0]  st_on   = st_bc ? 4'b0001 : pos_on(st_mode);
    wire [3:0]  st_rdy;
    wire [3:0]  rda_idle_p;
    wire [3:0]  st_psets, st_fire;
    wire [4*SPM_AW-1:0] st_addr;
    wire [4*4-1:0] st_otag;         // per position: {dup, pair, ahi, full} of its head flit word
    wire [4*32*S-1:0] st_odata;
    wire [3:0]  st_ovld, st_ordy;
    genvar p;
    generate
        for (p = 0; p < 4; p = p + 1) begin : g_pos
            wire [1:0] sj = pos_set(st_mode, p);
            assign st_psets[p] = st_on[p] && st_t < st_len[sj*16 +: 16];
            wire pend = st_act && st_psets[p] && !st_done[p];
            assign st_addr[p*SPM_AW +: SPM_AW] = st_addr_r[p*SPM_AW +: SPM_AW];
            // positions 0/2 carry the channel's flit; pair = its high position has a row too
            wire pair;
            if (p == 0 || p == 2) begin : g_pair
                assign pair = st_psets[p + 1];
            end else begin : g_nopair
                assign pair = 1'b0;
            end
            npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(4), .ZEROS(0)) u_rda (
                .clk(clk), .rst_n(rst_n),
                .req_vld(pend), .req_addr(st_addr[p*SPM_AW +: SPM_AW]), .req_zero(1'b0),
                .req_gid({st_bc, pair, st_ahi, st_full}), .req_rdy(st_rdy[p]),
                .rd_req(rda_req[p]), .rd_addr(rda_addr[p*SPM_AW +: SPM_AW]), .rd_gnt(rda_gnt[p]),
                .rd_data(rda_data[p*WB +: WB]),
                .out_vld(st_ovld[p]), .out_gid(st_otag[p*4 +: 4]), .out_data(st_odata[p*WB +: WB]),
                .out_rdy(st_ordy[p]), .idle(rda_idle_p[p])
            );
            assign st_fire[p] = pend && st_rdy[p];
        end
        // flit assembly per channel c: the low position's word heads the flit; a packed flit
        // (HSW/ISW) takes the S lanes of each row (a_hi: lanes S..2S-1) into its half; a bcast
        // flit (dup) carries its one row in both halves (one SPM word, two deliveries)
        for (p = 0; p < 2; p = p + 1) begin : g_hch
            localparam integer LO = 2 * p, HI = 2 * p + 1;
            wire [WB-1:0] wl = st_odata[LO*WB +: WB];
            wire [WB-1:0] wh = st_odata[HI*WB +: WB];
            wire full = st_otag[LO*4];
            wire ahi  = st_otag[LO*4 + 1];
            wire pair = st_otag[LO*4 + 2];
            wire dup  = st_otag[LO*4 + 3];
            wire two  = !full && pair;
            wire [WB/2-1:0] lo_half = ahi ? wl[WB/2 +: WB/2] : wl[0 +: WB/2];
            wire [WB/2-1:0] hi_half = full ? wl[WB/2 +: WB/2] : dup ? lo_half :
                                      !pair ? {WB/2{1'b0}} : ahi ? wh[WB/2 +: WB/2] : wh[0 +: WB/2];
            assign h_vld[p] = st_ovld[LO] && (!two || st_ovld[HI]);
            assign h_gid[p*4 +: 4] = (4'b0001 << p) | ((full || pair || dup) ? (4'b0100 << p) : 4'b0000);
            assign h_data[p*WB +: WB] = {hi_half, lo_half};
            assign h_two[p] = two;
            assign st_ordy[LO] = h_vld[p] && h_rdy[p];
            assign st_ordy[HI] = h_vld[p] && h_rdy[p] && two;
        end
    endgenerate
    wire rda_idle = &rda_idle_p;
    wire [3:0] st_pend = {4{st_act}} & st_psets & ~st_done;
    wire st_slot_end = st_act && (st_pend & ~st_fire) == 4'd0;
    wire st_last = st_slot_end && st_t == st_len[15:0] - 16'd1;
    // The running addresses are registered (synthesis: no adder in front of the SPM grants and
    // the slot logic behind them); the three candidates come from registers and the late slot
    // end only selects: next wave's first rows (the entry a WAVE may be writing), + stride, or
    // unchanged (a WAVE written into an idle streamer: st_off is 0 there).
    wire [4*SPM_AW-1:0] sa_new  = (issue_wave && wq_wr == ~wq_st) ? chk_sa_q : wq_sa[~wq_st];
    wire [4*SPM_AW-1:0] sa_same = (issue_wave && wq_wr == wq_st) ? chk_sa_q : st_addr_r;
    reg  [4*SPM_AW-1:0] sa_step;
    integer sax;
    always @(*)
        for (sax = 0; sax < 4; sax = sax + 1)
            sa_step[sax*SPM_AW +: SPM_AW] = st_addr_r[sax*SPM_AW +: SPM_AW] + wq_str[wq_st][SPM_AW-1:0];
    always @(posedge clk) st_addr_r <= st_last ? sa_new : st_slot_end ? sa_step : sa_same;

    // injector: one slot per cycle when every LBUF_H the slot needs has data and the array
    // runs the wave's mode (a different mode waits for the array to empty, then switches)
    wire        in_act  = wq_cnt != 2'd0;
    wire [1:0]  in_mode = wq_mode[wq_in];
    wire        in_bank = wq_bank[wq_in];
    wire        in_acc  = wq_acc[wq_in];
    wire [63:0] in_len  = wq_len[wq_in];
    wire [4*OBUF_AW-1:0] in_ob = wq_ob[wq_in];
    // Sets with a row in the current slot, registered: in_sets = {in_t < len_j} is computed one
    // cycle ahead for each possible next (slot, wave) and selected by inj / in_last, so the
    // 16-bit compares are not in front of the injection decision and the counters behind it.
    // The next wave's lengths come from the wave queue, or from the WAVE issuing this cycle.
    reg  [3:0]  in_sets;
    integer j;
    wire        nx_wq   = ~wq_in;
    wire [63:0] len_cur = (issue_wave && wq_wr == wq_in) ? chk_len_q : in_len;
    wire [63:0] len_nxt = (issue_wave && wq_wr == nx_wq) ? chk_len_q : wq_len[nx_wq];
    wire [15:0] in_t1   = in_t + 16'd1;
    reg  [3:0]  lt_same, lt_step, lt_next;
    always @(*)
        for (j = 0; j < 4; j = j + 1) begin
            lt_same[j] = in_t  < len_cur[j*16 +: 16];
            // used only with inj, when the wave at the injector is not the one issuing (inj
            // needs wq_cnt != 0, issue wq_cnt != 2, so wq_wr != wq_in): in_len, not len_cur, so
            // the issue decision and the row-set sums are not in front of in_last
            lt_step[j] = in_t1 < in_len[j*16 +: 16];
            lt_next[j] = len_nxt[j*16 +: 16] != 16'd0;
        end
    reg  [3:0]  in_need, in_cores;
    reg  [2:0]  in_nrows;
    always @(*) begin
        in_need = 4'd0; in_cores = 4'd0; in_nrows = 3'd0;
        for (j = 0; j < 4; j = j + 1)
            if (in_sets[j]) begin
                in_need  = in_need | set_gid(in_mode, j);
                in_cores = in_cores | set_cores(in_mode, j);
                in_nrows = in_nrows + 3'd1;
            end
    end
    // Mode change gap (npu_flexsa header): a row injected at t enters cores (0,1,2,3) at
    // t + S * off(mode), off = FW (0,1,1,2), HSW (0,1,0,1), VSW (0,0,1,1), ISW (0,0,0,0). Rows of
    // the new mode Y must enter every core after the last row of the old mode X did, so the
    // first Y slot comes at least S * max_core(off_X - off_Y) + 1 cycles after the last X slot:
    // 2S for FW -> ISW, S for FW -> HSW/VSW, HSW/VSW -> VSW/HSW/ISW, none otherwise (the array
    // needs no drain: each row carries its mode through the muxes). The switch itself takes the
    // cycle in which amode changes.
    function [1:0] mode_gap(input [1:0] from, input [1:0] to);   // in units of S
        case (from)
            MODE_FW:  mode_gap = (to == MODE_ISW) ? 2'd2 : (to == MODE_FW) ? 2'd0 : 2'd1;
            MODE_HSW: mode_gap = (to == MODE_FW || to == MODE_HSW) ? 2'd0 : 2'd1;
            MODE_VSW: mode_gap = (to == MODE_FW || to == MODE_VSW) ? 2'd0 : 2'd1;
            default:  mode_gap = 2'd0;
        endcase
    endfunction
    // since_inj = x - t_last - 1 in cycle x (saturating at 2S); a switch in cycle x lets the
    // first new slot go in cycle x + 1, so gap G * S needs since_inj >= G * S - 1
    reg  [FW_:0] since_inj;
    wire [1:0]   gap_s  = mode_gap(amode, in_mode);
    wire         gap_ok = gap_s == 2'd0 || (gap_s == 2'd1 && since_inj >= SC - 1'b1)
                       || since_inj >= FC - 1'b1;
    wire        mode_sw = in_act && in_mode != amode && gap_ok;
    // in_go = in_act && !wq_early[wq_in] (a wave is at the injector and not early), registered
    // like in_sets (the value for the next head, selected by in_last), so the injection decision
    // has no more terms than before early issue
    reg         in_go;
    wire [1:0]  early_nx = ldw_done ? 2'b00
                         : (issue_wave ? (wq_wr ? {wave_w_early, wq_early[0]} : {wq_early[1], wave_w_early})
                                       : wq_early);
    wire [1:0]  cnt_s   = wq_cnt + {1'b0, issue_wave};
    wire        inj     = in_go && in_mode == amode && (in_need & lbh_empty) == 4'd0;
    wire        in_last = inj && !lt_step[0];
    assign mode    = amode;
    assign lbh_pop = inj ? in_need : 4'd0;
    assign inj_vld = inj ? in_need : 4'd0;
    assign inj_sel = {4{in_bank}};
    // window start k_lo: lanes below it are fed as zeros (the mask is a register of the wave,
    // applied on the data side so the late injection decision meets no extra gate)
    wire [4*S-1:0] in_pass = wq_pass[wq_in];
    wire [4*S-1:0] in_cntm = wq_cntm[wq_in];
    wire [4*S*16-1:0] lbh_win;       // LBUF_H heads with the lanes below k_lo zeroed
    wire [4*S-1:0] lane_zero;        // counted lanes (k_lo <= j < k) whose element is zero
    genvar k;
    generate
        for (k = 0; k < 4*S; k = k + 1) begin : g_lane
            assign lbh_win[k*16 +: 16] = in_pass[k] ? lbh_dout[k*16 +: 16] : 16'd0;
            assign lane_zero[k] = in_cntm[k] && lbh_dout[k*16 +: 16] == 16'd0;
        end
        for (k = 0; k < 4; k = k + 1) begin : g_inj
            wire [1:0] sj = stream_set(in_mode, k);
            wire [OBUF_AW-1:0] row = in_ob[sj*OBUF_AW +: OBUF_AW] + in_t[OBUF_AW-1:0];
            wire lst = in_t == in_len[sj*16 +: 16] - 16'd1;
            assign inj_a[k*S*16 +: S*16] = (inj && in_need[k]) ? lbh_win[k*S*16 +: S*16] : {S*16{1'b0}};
            assign inj_tag[k*TAGW +: TAGW] = {in_mode, lst, in_bank, in_acc, row};
            assign ev_macs[k*16 +: 16] = (inj && in_cores[k]) ? wq_macs[wq_in][k*16 +: 16] : 16'd0;
        end
    endgenerate
    // macs_zero: per injected row, the zero elements among its lanes [k_lo, k), times n; summed
    // over the streams of the slot (a row is one stream, or two in FW/VSW: lanes < S and >= S).
    // Three register stages (zero flags of the injected lanes; their count; times n), so the
    // count meets neither the injection decision nor the counters' adders; busy covers them.
    reg  [4*S-1:0] mz_z;
    reg  [7:0]     mz_n1, mz_n2;
    reg  [8:0]     mz_cnt;
    reg  [15:0]    mz_ev;
    reg  [2:0]     mz_vld;           // stage valid bits (busy until the event is counted)
    reg  [8:0]     mz_pop;
    integer mzi;
    always @(*) begin
        mz_pop = 9'd0;
        for (mzi = 0; mzi < 4*S; mzi = mzi + 1) mz_pop = mz_pop + {8'd0, mz_z[mzi]};
    end
    always @(posedge clk) begin
        if (!rst_n) begin
            mz_vld <= 3'd0; mz_z <= {4*S{1'b0}}; mz_cnt <= 9'd0; mz_ev <= 16'd0;
        end else begin
            mz_vld <= {mz_vld[1:0], inj};
            mz_cnt <= mz_pop;
            for (mzi = 0; mzi < 4*S; mzi = mzi + 1)
                mz_z[mzi] <= inj && in_need[mzi / S] && lane_zero[mzi];
            mz_ev <= {7'd0, mz_cnt} * {8'd0, mz_n2};
        end
        mz_n1  <= wq_n[wq_in];
        mz_n2  <= mz_n1;
    end
    assign ev_macs_zero = mz_ev;
    assign ev_busy  = inj ? in_cores : 4'b0000;
    assign ev_stall = (in_act && in_mode == amode) ? (in_need & lbh_empty) : 4'b0000;
    assign ev_row   = inj ? (4'b0001 << in_mode) : 4'b0000;
    assign ev_rows  = inj ? ({9'd0, in_nrows} << (3 * in_mode)) : 12'd0;
    // rows x idle PEs per sub-array: in_nrows <= 4, so two shifted adds instead of a multiply
    wire [15:0] idle_w = wq_idle[wq_in];
    assign ev_idle_shape = !inj ? 16'd0 : (in_nrows[2] ? idle_w << 2 : 16'd0)
                         + (in_nrows[1] ? idle_w << 1 : 16'd0) + (in_nrows[0] ? idle_w : 16'd0);
    assign ev_mode_switch = mode_sw;
    wire   byp = amode == MODE_VSW || amode == MODE_ISW;
    assign ev_bypass = (inj && byp) ? {1'b0, in_need[1]} + {1'b0, in_need[3]} : 2'd0;

    // retirement: the last lane of each sub-array; which ones carry rows depends on the mode
    //   P0 top lane S-1 (ISW core 0), P1 top lane 2S-1 (HSW top, ISW core 1),
    //   P2 out lane S-1 (VSW left, ISW core 2), P3 out lane 2S-1 (every mode)
    wire [4*TAGW-1:0] p_tag = {out_tag[(F-1)*TAGW +: TAGW], out_tag[(S-1)*TAGW +: TAGW],
                               top_tag[(F-1)*TAGW +: TAGW], top_tag[(S-1)*TAGW +: TAGW]};
    // rows of several modes may be in flight: each lane's tag carries its row's mode
    // (tag bits OBUF_AW+3 .. OBUF_AW+4); top lanes are valid only for HSW/ISW rows (npu_flexsa)
    wire [1:0] p0_md = top_tag[(S-1)*TAGW + OBUF_AW + 3 +: 2];
    wire [1:0] p2_md = out_tag[(S-1)*TAGW + OBUF_AW + 3 +: 2];
    wire [3:0] p_vld = {out_vld[F-1],
                        out_vld[S-1] && (p2_md == MODE_VSW || p2_md == MODE_ISW),
                        top_vld[F-1],
                        top_vld[S-1] && p0_md == MODE_ISW};
    reg  [2:0] r_bank0, r_bank1, r_last;
    always @(*) begin
        r_bank0 = 3'd0; r_bank1 = 3'd0; r_last = 3'd0;
        for (j = 0; j < 4; j = j + 1)
            if (p_vld[j]) begin
                if (p_tag[j*TAGW + OBUF_AW + 1]) r_bank1 = r_bank1 + 3'd1;
                else                             r_bank0 = r_bank0 + 3'd1;
                if (p_tag[j*TAGW + OBUF_AW + 2]) r_last  = r_last + 3'd1;
            end
    end
    wire       x_vld = p_vld != 4'd0;
    wire [2:0] lsum  = lcnt + r_last;
    wire       wave_done = r_last != 3'd0 && lsum == cf_dout[4:2];

    // Completion records of the issued waves, oldest first: {lane ranges, sets, token pushes}.
    // The head is the oldest wave in flight (Wo), whose rows the OBUF hazards track per lane.
    npu_fifo #(.W(CFW), .DEPTH(8)) u_cf (
        .clk(clk), .rst_n(rst_n),
        .push(issue_wave), .din({chk_lr_q, nset_m, t_psh_nxt, t_psh_prv}),
        .pop(wave_done), .dout(cf_dout), .full(cf_full), .empty(cf_empty), .count(cf_count)
    );

    // ------------------------------------------------------------------ OBUF row hazards
    // Row granular instead of per OBUF half (docs/design.md, "OBUF hazards"):
    //  WAR: a WAVE issues only when no DRAIN queued or reading overlaps its OBUF rows (war_blk_q).
    //       So every wave in flight that writes a row of a pending DRAIN was issued before it.
    //  RAW: the drain reads rows r (and its pair) only when no wave in flight still writes them:
    //       the waves other than the oldest (Wo) by their whole row range (wt_*; registered
    //       per drain, young_q), Wo by its lanes: lane l has retired the rows [s_l, wo_f[l]) of
    //       its range [s_l, e_l) (rows retire in order per lane), so r is pending in Wo iff
    //       wo_f[l] <= r < e_l for some l.
    // Everything that can only shrink is registered (the set of in-flight waves overlapping a
    // pending DRAIN, the DRAINs overlapping the head WAVE): one cycle stale = conservative.
    // In-flight waves by issue order (entry = issue count mod 8, the depth of u_cf): OBUF rows.
    wire [7:0]      wt_v, wt_head;
    wire [8*RW-1:0] wt_lo, wt_hi;
    npu_range_fifo #(.DEPTH(8), .W(RW)) u_wt (
        .clk(clk), .rst_n(rst_n),
        .push(issue_wave), .push_lo(chk_rlo_q), .push_hi(chk_rhi_q), .pop(wave_done),
        .vld(wt_v), .head(wt_head), .lo(wt_lo), .hi(wt_hi)
    );
    integer y;
    // Wo's lanes: range [wo_s, wo_e) from the head record, wo_f = first row not yet retired.
    // A retiring row is Wo's when its lane has not finished Wo's range (lanes retire in order,
    // and the older waves are complete), else a younger wave's: per lane, y_any / y_next record
    // the younger rows (the row after the last one). wo_ok = 0 the cycle after Wo changes
    // (the head record of the next wave is visible then): wo_f is loaded from y_next clamped to
    // the new Wo's range (y_next belongs to it, or to a later wave when the new Wo finished that
    // lane: either way its rows below y_next are retired), else from wo_s. In that cycle Wo is
    // not consulted: it was young the cycle before, so young_q covers it (and a wave issued
    // since overlaps no pending DRAIN).
    reg  [4*RW-1:0] wo_f, y_next;
    reg  [3:0]      y_any;
    reg             wo_ok;
    wire [4*RW-1:0] wo_s, wo_e, p_nx, y_nx, wo_ld;
    wire [3:0]      wo_own, y_anx;
    genvar wl;
    generate
        for (wl = 0; wl < 4; wl = wl + 1) begin : g_wo
            assign wo_s[wl*RW +: RW] = cf_dout[5 + 2*wl*RW +: RW];
            assign wo_e[wl*RW +: RW] = cf_dout[5 + (2*wl+1)*RW +: RW];
            assign wo_own[wl] = wo_ok && wo_f[wl*RW +: RW] < wo_e[wl*RW +: RW];
            assign p_nx[wl*RW +: RW] = {1'b0, p_tag[wl*TAGW +: OBUF_AW]} + 1'b1;
            // younger rows up to this cycle (every row retiring while wo_ok = 0 is younger)
            assign y_anx[wl] = y_any[wl] || (p_vld[wl] && !wo_own[wl]);
            assign y_nx[wl*RW +: RW] = (p_vld[wl] && !wo_own[wl]) ? p_nx[wl*RW +: RW] : y_next[wl*RW +: RW];
            assign wo_ld[wl*RW +: RW] = !y_anx[wl] || y_nx[wl*RW +: RW] < wo_s[wl*RW +: RW] ? wo_s[wl*RW +: RW]
                                      : y_nx[wl*RW +: RW] > wo_e[wl*RW +: RW] ? wo_e[wl*RW +: RW]
                                      : y_nx[wl*RW +: RW];
        end
    endgenerate
    always @(posedge clk) begin
        if (!rst_n) begin
            wo_ok <= 1'b0; y_any <= 4'd0;
        end else begin
            wo_ok <= !cf_empty && !wave_done;
            y_any <= wo_ok ? y_anx : 4'd0;
        end
        y_next <= y_nx;
        for (y = 0; y < 4; y = y + 1)
            if (!wo_ok)
                wo_f[y*RW +: RW] <= wo_ld[y*RW +: RW];
            else if (p_vld[y] && wo_own[y])
                wo_f[y*RW +: RW] <= p_nx[y*RW +: RW];
    end

    always @(posedge clk) begin
        if (!rst_n) begin
            wq_cnt <= 0; wq_unstreamed <= 0; wq_wr <= 0; wq_st <= 0; wq_in <= 0; wq_early <= 2'b00;
            st_t <= 0; st_off <= 0; st_done <= 0; in_t <= 0; since_inj <= FC; in_sets <= 4'd0; in_go <= 1'b0; amode <= MODE_FW; lcnt <= 0;
            wpend[0] <= 0; wpend[1] <= 0; infl[0] <= 0; infl[1] <= 0;
        end else begin
            if (issue_wave) begin
                wq_mode[wq_wr]  <= s_mode;
                wq_bc[wq_wr]    <= bc;
                wq_bank[wq_wr]  <= f_bank;
                wq_early[wq_wr] <= wave_w_early;
                wq_acc[wq_wr]   <= f_acc;
                wq_ahi[wq_wr]   <= f_ahi;
                wq_sa[wq_wr]    <= chk_sa_q;
                wq_str[wq_wr]   <= f_w1hi;
                wq_len[wq_wr]   <= chk_len_q;
                wq_ob[wq_wr]    <= ob_m;
                wq_macs[wq_wr]  <= chk_macs_q;
                wq_idle[wq_wr]  <= chk_idle_q;
                wq_pass[wq_wr]  <= chk_pass_q;
                wq_cntm[wq_wr]  <= chk_cnt_q;
                wq_n[wq_wr]     <= bc ? {f_n[6:0], 1'b0} : f_n;   // bcast: a row meets two n-wide tiles
                wq_wr <= ~wq_wr;
            end
            if (ldw_done) wq_early <= 2'b00;   // after the issue above: the LDW is done
            wq_cnt        <= wq_cnt + {1'b0, issue_wave} - {1'b0, in_last};
            wq_unstreamed <= wq_unstreamed + {1'b0, issue_wave} - {1'b0, st_last};
            if (st_last) begin
                wq_st   <= ~wq_st;
                st_t    <= 0;
                st_off  <= 0;
                st_done <= 0;
            end else if (st_slot_end) begin
                st_t    <= st_t + 16'd1;
                st_off  <= st_off + wq_str[wq_st][SPM_AW-1:0];
                st_done <= 0;
            end else begin
                st_done <= st_done | st_fire;
            end
            in_sets <= in_last ? lt_next : inj ? lt_step : lt_same;
            in_go    <= in_last ? cnt_s != 2'd1 && !early_nx[~wq_in] : cnt_s != 2'd0 && !early_nx[wq_in];
            if (in_last) begin
                wq_in <= ~wq_in;
                in_t  <= 0;
            end else if (inj) begin
                in_t <= in_t + 16'd1;
            end
            if (mode_sw) amode <= in_mode;
            if (inj)                since_inj <= {(FW_+1){1'b0}};
            else if (since_inj < FC) since_inj <= since_inj + 1'b1;
            lcnt <= wave_done ? 3'd0 : lsum;
            // occupancy per bank (weight hazards)
            for (i = 0; i < 2; i = i + 1) begin
                wpend[i] <= wpend[i] + {1'b0, issue_wave && f_bank == i[0]}
                                     - {1'b0, in_last && in_bank == i[0]};
            end
            infl[0]  <= infl[0]  + ((inj && !in_bank) ? {13'd0, in_nrows} : 16'd0) - {13'd0, r_bank0};
            infl[1]  <= infl[1]  + ((inj &&  in_bank) ? {13'd0, in_nrows} : 16'd0) - {13'd0, r_bank1};
        end
    end

    // OBUF writes straight from the tags: bottom lanes on port 1, path (2) lanes on port 2
    genvar x;
    generate
        for (x = 0; x < F; x = x + 1) begin : g_ob
            assign ob_wr_en[x] = out_vld[x];
            assign ob_wr_addr[x*OBUF_AW +: OBUF_AW] = out_tag[x*TAGW +: OBUF_AW];
            assign ob_wr_acc[x] = out_tag[x*TAGW + OBUF_AW];
            assign ob2_wr_en[x] = top_vld[x];
            assign ob2_wr_addr[x*OBUF_AW +: OBUF_AW] = top_tag[x*TAGW +: OBUF_AW];
            assign ob2_wr_acc[x] = top_tag[x*TAGW + OBUF_AW];
        end
    endgenerate
    // population count of the lanes written this cycle
    reg [7:0] nwr;
    always @(*) begin
        nwr = 8'd0;
        for (i = 0; i < F; i = i + 1) nwr = nwr + {7'd0, out_vld[i]} + {7'd0, top_vld[i]};
    end
    assign ev_obuf_writes = nwr;
    reg [7:0] n2;
    always @(*) begin
        n2 = 8'd0;
        for (i = 0; i < F; i = i + 1) n2 = n2 + {7'd0, top_vld[i]};
    end
    assign ev_path2 = n2;

    // ------------------------------------------------------------------ drain engine
    // DRAINs wait in a small queue so that the next tile's LDW/WAVEs issue while a tile drains.
    // A DRAIN leaves the queue as soon as the drain engine has read every row of the previous
    // one (the hold stage carries its own write parameters), then reads its rows as they become
    // final (OBUF row hazards above): it streams behind the wave that writes them.
    // queue entry: {two, half rows, hs, hoff, acc, push[1:0], stride, spm_addr, obuf_addr, rows,
    // end row, split_rows, hi_rows}
    localparam DQW = 1 + OBUF_AW + 16 + 16 + 1 + 2 + 16 + 16 + OBUF_AW + 16 + RW + 16 + 16;
    // Split pairs (two = 1): the pair read in one cycle is rows r and r + h (h = ceil(rows/2))
    // instead of r and r + 1, r = 0 .. h-1 (the last alone when rows is odd). HSW and ISW waves
    // write their OBUF rows two per slot in that pattern (rows t and ha + t, or t and qa + t),
    // so the drain keeps pace with them; and its four SPM words are in four sub-banks for the
    // compiler's skinny layout (split_rows = rows = 2h: offsets 0, D, D/2, 3D/2; the adjacent
    // pair's 0, D, s, s + D collide when log2(D) = log2(s) mod 3). The order of the rows is only
    // visible when destinations overlap, so split pairs are used only when they cannot: not
    // accumulating and stride >= 2 (plain) or stride >= 1 and split_rows >= rows (skinny), the
    // rule DRAIN acc requires (dq_two_ok); and where the pair's SPM words are in four sub-banks
    // or the adjacent pair's are not either (chk_two_q).
    wire [DQW-1:0] dq_dout;
    wire           dq_empty;
    wire [2:0]     dq_count;
    wire           dq_pop;
    npu_fifo #(.W(DQW), .DEPTH(4)) u_dq (
        .clk(clk), .rst_n(rst_n),
        .push(issue_drain),
        .din({chk_two_q, c1_ha[OBUF_AW-1:0], chk_hs_q, chk_hoff_q, f_acc, t_psh_nxt, t_psh_prv,
              f_w2hi, f_w2lo, f_w1lo[OBUF_AW-1:0], f_cnt, chk_rhi_q, f_split, f_hirows}),
        .pop(dq_pop), .dout(dq_dout), .full(dq_full), .empty(dq_empty), .count(dq_count)
    );
    wire [15:0]        dq_hirows = dq_dout[15:0];
    wire [15:0]        dq_split  = dq_dout[31:16];
    wire [RW-1:0]      dq_end    = dq_dout[32 +: RW];
    wire [15:0]        dq_rows   = dq_dout[32 + RW +: 16];
    wire [OBUF_AW-1:0] dq_ob     = dq_dout[48 + RW +: OBUF_AW];
    wire [15:0]        dq_spm    = dq_dout[48 + RW + OBUF_AW +: 16];
    wire [15:0]        dq_stride = dq_dout[64 + RW + OBUF_AW +: 16];
    wire [1:0]         dq_push   = dq_dout[80 + RW + OBUF_AW +: 2];
    wire               dq_acc    = dq_dout[82 + RW + OBUF_AW];
    wire [15:0]        dq_hoff   = dq_dout[83 + RW + OBUF_AW +: 16];
    wire [15:0]        dq_hs     = dq_dout[99 + RW + OBUF_AW +: 16];
    wire [OBUF_AW-1:0] dq_h      = dq_dout[115 + RW + OBUF_AW +: OBUF_AW];
    wire               dq_two    = dq_dout[DQW-1];
    wire [RW-1:0]      dq_lo     = {1'b0, dq_ob};
    // The OBUF rows of the queued DRAINs (a copy beside u_dq, same order) for the WAR check.
    wire [3:0]      dqm_v, dqm_head;
    wire [4*RW-1:0] dqm_lo, dqm_hi;
    npu_range_fifo #(.DEPTH(4), .W(RW)) u_dqm (
        .clk(clk), .rst_n(rst_n),
        .push(issue_drain), .push_lo(chk_rlo_q), .push_hi(chk_rhi_q), .pop(dq_pop),
        .vld(dqm_v), .head(dqm_head), .lo(dqm_lo), .hi(dqm_hi)
    );

    // Read side: the active DRAIN (dr_*), rows dr_row (and dr_row1 of a pair) next.
    reg  [15:0]  dr_left;            // rows still to read
    reg  [OBUF_AW-1:0] dr_row, dr_row1;
    reg  [RW-1:0] dr_lo, dr_end;     // its OBUF rows [lo, end)
    reg  [31:0]  dr_spm1;            // SPM word of row dr_row1
    // rows / SPM words from one read to the next: 1 / stride for split pairs, else 2 / 2 * stride
    // (1 / stride for a row alone)
    reg          young_q;            // a wave in flight other than Wo writes rows of the active DRAIN
    // WAR: the head WAVE's rows [chk_rlo_q, chk_rhi_q) against the DRAINs queued or reading
    reg          war_c;
    // RAW: in-flight waves other than Wo over the active DRAIN and over the queue head (which
    // becomes the active one when it leaves the queue); Wo over the rows read next
    reg          young_act, young_head, pend_a, pend_b;
    always @(*) begin
        war_c = dr_act && dr_lo < chk_rhi_q && chk_rlo_q < dr_end;
        for (y = 0; y < 4; y = y + 1)
            if (dqm_v[y] && dqm_lo[y*RW +: RW] < chk_rhi_q && chk_rlo_q < dqm_hi[y*RW +: RW])
                war_c = 1'b1;
        young_act = 1'b0; young_head = 1'b0;
        for (y = 0; y < 8; y = y + 1)
            if (wt_v[y] && !wt_head[y]) begin
                if (wt_lo[y*RW +: RW] < dr_end && dr_lo < wt_hi[y*RW +: RW]) young_act  = 1'b1;
                if (wt_lo[y*RW +: RW] < dq_end && dq_lo < wt_hi[y*RW +: RW]) young_head = 1'b1;
            end
        pend_a = 1'b0;
        pend_b = 1'b0;
        for (y = 0; y < 4; y = y + 1)
            if (wo_ok) begin
                if (wo_f[y*RW +: RW] <= {1'b0, dr_row}  && {1'b0, dr_row}  < wo_e[y*RW +: RW]) pend_a = 1'b1;
                if (wo_f[y*RW +: RW] <= {1'b0, dr_row1} && {1'b0, dr_row1} < wo_e[y*RW +: RW]) pend_b = 1'b1;
            end
    end
    // One OBUF row per cycle: the row read in cycle t sits in the OBUF's output register (it
    // holds until the next read, so it is the hold stage) and both of its SPM words are written
    // in cycle t+1 over two write ports, low word (lanes 0..S-1) on port 0, high word
    // (S..2S-1) on port 1, each granted on its own. A word refused by a sub-bank conflict stays
    // pending alone; the next OBUF read is issued in the cycle the held row's last word is
    // written, so the stream does not bubble. The hold stage keeps its words' addresses, acc
    // flag and completion (last row, token pushes), so the next DRAIN may read meanwhile.
    // Skinny (split_rows != 0): the high word of row r goes to SPM row r + split_rows (word 0),
    // for r < hi_rows only.
    // DRAIN acc: a word written is the old SPM word plus the OBUF lanes (int32, mod 2^32). The old
    // words come through the weight loader's SPM read port (rdw; the weight loader has priority),
    // one per cycle, each used in the cycle its data arrives (or kept if its write is refused):
    // a row takes 3 cycles (read lo | write lo, read hi | write hi, next OBUF row) instead of 1.
    reg  [31:0]  hold_hiaddr, h2_hiaddr;
    reg          hold_acc, hold_last;
    reg  [1:0]   hold_push;
    reg  [1:0]   acc_rd;             // read granted last cycle: 01 low word, 10 high word
    reg          acc_lo_ok, acc_hi_ok;
    reg  [WB-1:0] acc_lo_old, acc_hi_old;
    wire lo_ready = !hold_acc || acc_lo_ok || acc_rd == 2'b01;
    wire hi_ready = !hold_acc || acc_hi_ok || acc_rd == 2'b10;
    wire acc_rd_lo = hold_acc && hold_vld && hold_lo && !lo_ready;
    wire acc_rd_hi = hold_acc && hold_vld && hold_hi && !hi_ready && !acc_rd_lo;
    wire dacc_req  = acc_rd_lo || acc_rd_hi;
    assign rdw_req   = wl_rd_req || dacc_req;
    assign rdw_addr  = wl_rd_req ? wl_rd_addr : acc_rd_lo ? hold_addr[SPM_AW-1:0] : hold_hiaddr[SPM_AW-1:0];
    assign wl_rd_gnt = rdw_gnt && wl_rd_req;
    wire dacc_gnt    = rdw_gnt && !wl_rd_req && dacc_req;
    wire [WB-1:0] lo_old = !hold_acc ? {WB{1'b0}} : acc_lo_ok ? acc_lo_old : rdw_data;
    wire [WB-1:0] hi_old = !hold_acc ? {WB{1'b0}} : acc_hi_ok ? acc_hi_old : rdw_data;
    reg  [2*WB-1:0] dr_sum;
    integer al;
    always @(*)
        for (al = 0; al < S; al = al + 1) begin
            dr_sum[al*32 +: 32]      = ob_rd_data[al*32 +: 32] + lo_old[al*32 +: 32];
            dr_sum[WB + al*32 +: 32] = ob_rd_data[WB + al*32 +: 32] + hi_old[al*32 +: 32];
        end
    // Two rows per cycle (plain drains; HSW/ISW waves write two OBUF rows per cycle): rows r and
    // r+1 are read together on the OBUF's two read ports and their four words go out on write
    // ports 0..3 (npu_spm's sub-bank codes keep them apart for the compiler's layouts); the pair
    // is done when all four are written. An accumulating drain stays one row at a time.
    wire h2_done   = !h2_vld || ((!h2_lo || wr_gnt[2]) && (!h2_hi || wr_gnt[3]));
    wire hold_done = hold_vld && (!hold_lo || (lo_ready && wr_gnt[0])) && (!hold_hi || (hi_ready && wr_gnt[1]))
                  && h2_done;
    wire   dr_pair    = !dr_acc && dr_left[15:1] != 15'd0;
    wire   dr_step2   = dr_pair && !dr_two;
    wire   dr_rdy     = !young_q && !pend_a && (!dr_pair || !pend_b);
    assign ob_rd_en   = dr_act && dr_rdy && (!hold_vld || hold_done);
    assign ob_rd_addr = dr_row;
    assign ob_rd2_en   = ob_rd_en && dr_pair;
    assign ob_rd2_addr = dr_row1;
    wire   rd_last    = ob_rd_en && dr_left == (dr_pair ? 16'd2 : 16'd1);
    assign dq_pop     = !dq_empty && (!dr_act || rd_last);
    wire [31:0] dr_hioff = dr_splitm_r ? dr_hoff : 32'd1;
    assign wr_req  = {h2_vld && h2_hi, h2_vld && h2_lo,
                      hold_vld && hold_hi && hi_ready, hold_vld && hold_lo && lo_ready};
    assign wr_addr = {h2_hiaddr[SPM_AW-1:0], h2_addr[SPM_AW-1:0],
                      hold_hiaddr[SPM_AW-1:0], hold_addr[SPM_AW-1:0]};
    assign wr_data = {ob_rd2_data, dr_sum};
    wire dr_done = hold_done && hold_last;   // the last rows of a DRAIN written
    assign ev_drain_row   = hold_done ? (h2_vld ? 2'd2 : 2'd1) : 2'd0;
    assign ev_drain_busy  = dr_act || hold_vld;
    assign ev_drain_stall = hold_vld && !hold_done;

    always @(posedge clk) begin
        war_blk_q <= war_c;
        young_q   <= dq_pop ? young_head : young_act;
        if (!rst_n) begin
            dr_act <= 1'b0; hold_vld <= 1'b0; hold_lo <= 1'b0; hold_hi <= 1'b0;
            h2_vld <= 1'b0; h2_lo <= 1'b0; h2_hi <= 1'b0; hold_last <= 1'b0; hold_acc <= 1'b0;
            dr_acc <= 1'b0; acc_rd <= 2'b00; acc_lo_ok <= 1'b0; acc_hi_ok <= 1'b0;
            dr_left <= 16'd0; dr_ri <= 16'd0;
        end else begin
            if (ob_rd_en) begin
                dr_left     <= dr_left - (dr_pair ? 16'd2 : 16'd1);
                dr_ri       <= dr_ri + (dr_step2 ? 16'd2 : 16'd1);
                dr_ri2      <= dr_ri2 + (dr_step2 ? 16'd2 : 16'd1);
                dr_row      <= dr_row + (dr_step2 ? 2 : 1);
                dr_row1     <= dr_row1 + (dr_step2 ? 2 : 1);
                dr_spm_next <= dr_spm_next + (dr_step2 ? {15'd0, dr_stride, 1'b0} : {16'd0, dr_stride});
                dr_spm1     <= dr_spm1 + (dr_step2 ? {15'd0, dr_stride, 1'b0} : {16'd0, dr_stride});
                hold_addr   <= dr_spm_next;
                hold_hiaddr <= dr_spm_next + dr_hioff;
                hold_vld    <= 1'b1;
                hold_lo     <= 1'b1;
                hold_hi     <= !dr_splitm_r || dr_ri < dr_hi;
                hold_acc    <= dr_acc;
                hold_last   <= rd_last;
                hold_push   <= dr_push;
                h2_addr     <= dr_spm1;
                h2_hiaddr   <= dr_spm1 + dr_hioff;
                h2_vld      <= dr_pair;
                h2_lo       <= dr_pair;
                h2_hi       <= dr_pair && (!dr_splitm_r || dr_ri2 < dr_hi);
            end else if (hold_done) begin
                hold_vld <= 1'b0;
                hold_lo  <= 1'b0;
                hold_hi  <= 1'b0;
                h2_vld   <= 1'b0;
                h2_lo    <= 1'b0;
                h2_hi    <= 1'b0;
            end else if (hold_vld) begin
                hold_lo <= hold_lo && !(wr_req[0] && wr_gnt[0]);
                hold_hi <= hold_hi && !(wr_req[1] && wr_gnt[1]);
                h2_lo   <= h2_lo && !wr_gnt[2];
                h2_hi   <= h2_hi && !wr_gnt[3];
            end
            if (dq_pop) begin
                dr_act      <= 1'b1;
                dr_acc      <= dq_acc;
                dr_push     <= dq_push;
                dr_stride   <= dq_stride;
                dr_spm_next <= {16'd0, dq_spm};
                dr_spm1     <= {16'd0, dq_spm} + {16'd0, dq_two ? dq_hs : dq_stride};
                dr_row      <= dq_ob;
                dr_row1     <= dq_ob + (dq_two ? dq_h : {{(OBUF_AW-1){1'b0}}, 1'b1});
                dr_two      <= dq_two;
                dr_ri2      <= dq_two ? {{(16-OBUF_AW){1'b0}}, dq_h} : 16'd1;
                dr_lo       <= dq_lo;
                dr_end      <= dq_end;
                dr_left     <= dq_rows;
                dr_ri       <= 16'd0;
                dr_hi       <= dq_hirows;
                dr_splitm_r <= dq_split != 16'd0;
                dr_hoff     <= {16'd0, dq_hoff};
            end else if (rd_last) begin
                dr_act <= 1'b0;
            end
            // accumulating drain: old words read and kept until their write is granted
            acc_rd <= dacc_gnt ? (acc_rd_lo ? 2'b01 : 2'b10) : 2'b00;
            if (ob_rd_en || hold_done) begin
                acc_lo_ok <= 1'b0;
                acc_hi_ok <= 1'b0;
            end else begin
                if (acc_rd == 2'b01) begin acc_lo_old <= rdw_data; acc_lo_ok <= 1'b1; end
                if (acc_rd == 2'b10) begin acc_hi_old <= rdw_data; acc_hi_ok <= 1'b1; end
            end
        end
    end

    // ------------------------------------------------------------------ completion
    wire [1:0] wave_push = wave_done ? cf_dout[1:0] : 2'b00;
    wire [1:0] ldw_p  = ldw_done ? ldw_push : 2'b00;
    wire [1:0] dr_p   = dr_done ? hold_push : 2'b00;
    wire [1:0] sy_p   = issue_sync ? {t_psh_nxt, t_psh_prv} : 2'b00;
    // Token pushes and completion counts leave through registers: the units' completion logic
    // (an SPM write grant -> drain done, for one) is not chained into the controller's token
    // counters and error capture (issue 7: that was the NPU's deepest path). Tokens arrive one
    // cycle later; busy covers the cycle in between so the NPU never halts with a push in flight.
    reg  [2:0] push_e2l_q, push_e2s_q, done_cnt_q;
    always @(posedge clk) begin
        if (!rst_n) begin
            push_e2l_q <= 3'd0; push_e2s_q <= 3'd0; done_cnt_q <= 3'd0;
        end else begin
            push_e2l_q <= {2'd0, ldw_p[0]} + {2'd0, wave_push[0]} + {2'd0, dr_p[0]} + {2'd0, sy_p[0]};
            push_e2s_q <= {2'd0, ldw_p[1]} + {2'd0, wave_push[1]} + {2'd0, dr_p[1]} + {2'd0, sy_p[1]};
            done_cnt_q <= {2'd0, ldw_done} + {2'd0, wave_done} + {2'd0, dr_done} + {2'd0, issue_sync};
        end
    end
    assign push_e2l = push_e2l_q;
    assign push_e2s = push_e2s_q;
    assign done_cnt = done_cnt_q;
    assign busy     = ldw_act || wq_cnt != 2'd0 || infl[0] != 16'd0 || infl[1] != 16'd0
                   || dr_act || hold_vld || !dq_empty || !cf_empty || !rdw_idle || !rda_idle
                   || push_e2l_q != 3'd0 || push_e2s_q != 3'd0 || done_cnt_q != 3'd0
                   || mz_vld != 3'd0;
    assign progress = can_issue || inj || mode_sw || (|lbv_pop) || hold_done || x_vld || (|st_fire);

    wire unused = &{1'b0, cf_count, dq_count, dqm_head, ldw_rdy, hold_addr[31:SPM_AW], k0_8, k1_8, kk_8, n0_8, n1_8,
                    hs_m[0], sh_p0h, sh_p1h, sh_p2h,
                    hold_hiaddr[31:SPM_AW], h2_addr[31:SPM_AW], h2_hiaddr[31:SPM_AW], ha17[16]};

`ifdef NPU_ASSERTS
    // Interlock invariants (each would otherwise show up as a wrong result much later).
    integer ax;
    reg ldw_iss_q;
    always @(posedge clk) ldw_iss_q <= issue_ldw;
    always @(posedge clk) if (rst_n) begin
        // one mode per core per wave: rows enter only in the array's mode, and the mode
        // changes only on an empty array
        if (inj && in_mode != amode)    `NPU_ASSERT_FAIL("row injected in another mode than the array's")
        // the check stage's multiplier operands select on opcode bits (see "Range checks")
        if (q_vld && (is_ldw || is_wave || is_drain) && (mul_ldw != is_ldw || mul_drn != is_drain))
            `NPU_ASSERT_FAIL("opcode bits of the check multipliers' operand muxes disagree with the decode")
        if (ldw_act && (ldw_more != (ldw_i < ldw_nrows)
                        || (ldw_more && ldw_zero != ({{(8-FW_){1'b0}}, ldw_row} >= {1'b0, ldw_k}
                                                     || {{(8-FW_){1'b0}}, ldw_row} < {3'd0, ldw_klo}))))
            `NPU_ASSERT_FAIL("registered LDW row state differs")
        if (in_act && in_sets != {in_t < in_len[48 +: 16], in_t < in_len[32 +: 16],
                                  in_t < in_len[16 +: 16], in_t < in_len[0 +: 16]})
            `NPU_ASSERT_FAIL("registered row sets differ from the slot's")
        if (mode_sw && !gap_ok)         `NPU_ASSERT_FAIL("mode switch before the mode change gap")
        if ((lbh_pop & lbh_empty) != 4'd0) `NPU_ASSERT_FAIL("LBUF_H popped while empty")
        if ((lbv_pop & lbv_empty) != 4'd0) `NPU_ASSERT_FAIL("LBUF_V popped while empty")
        if (wq_cnt == 2'd3 || wq_unstreamed > wq_cnt) `NPU_ASSERT_FAIL("wave queue count out of range")
        for (ax = 0; ax < 4; ax = ax + 1)
            if (st_act && st_addr_r[ax*SPM_AW +: SPM_AW] != wq_sa[wq_st][ax*SPM_AW +: SPM_AW] + st_off)
                `NPU_ASSERT_FAIL("registered stream address differs")
        if ({13'd0, r_bank0} > infl[0] || {13'd0, r_bank1} > infl[1])
            `NPU_ASSERT_FAIL("row retired that was not in flight")
        if (|lbv_pop && !bank_free)     `NPU_ASSERT_FAIL("weights shifted into a bank in use")
        if (|lbv_pop && in_act && in_bank == ldw_bank && !wq_early[wq_in])
            `NPU_ASSERT_FAIL("weights shifted into the bank of a wave issued before the LDW")
        if (inj && ldw_act && in_bank == ldw_bank && wq_early[wq_in])
            `NPU_ASSERT_FAIL("early wave injected before its LDW completed")
        if (in_go != (in_act && !wq_early[wq_in])) `NPU_ASSERT_FAIL("registered in_go differs from the wave queue")
        // the registered bank states (issue) agree with the LDW state, except the cycle after an
        // LDW issued (no WAVE is past its check stages then)
        if (!ldw_iss_q) for (ax = 0; ax < 2; ax = ax + 1)
            if (wok_q[ax] != ((loaded4[ax] == 4'b1111 && !(ldw_act && ldw_bank == ax[0]))
                              || (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111))
                || wearly_q[ax] != (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111))
                `NPU_ASSERT_FAIL("registered bank state differs from the LDW state")
        for (ax = 0; ax < F; ax = ax + 1) begin
            if (out_vld[ax] && top_vld[ax]
                && out_tag[ax*TAGW +: OBUF_AW] == top_tag[ax*TAGW +: OBUF_AW])
                `NPU_ASSERT_FAIL("both OBUF ports write one lane and row")
        end
        // SPM address bounds (issue checked them; the running addresses must agree)
        if (wr_req[0] && {2'd0, hold_addr} >= SPM_WORDS34) `NPU_ASSERT_FAIL("drain low word past the SPM")
        if (wr_req[1] && {2'd0, hold_hiaddr} >= SPM_WORDS34) `NPU_ASSERT_FAIL("drain high word past the SPM")
        if (wr_req[2] && {2'd0, h2_addr} >= SPM_WORDS34)   `NPU_ASSERT_FAIL("drain pair low word past the SPM")
        if (wr_req[3] && {2'd0, h2_hiaddr} >= SPM_WORDS34) `NPU_ASSERT_FAIL("drain pair high word past the SPM")
        if (h2_vld && (!hold_vld || hold_acc)) `NPU_ASSERT_FAIL("drain pair without its first row, or accumulating")
        for (ax = 0; ax < 4; ax = ax + 1)
            if (rda_req[ax] && {{(34-SPM_AW){1'b0}}, rda_addr[ax*SPM_AW +: SPM_AW]} >= SPM_WORDS34)
                `NPU_ASSERT_FAIL("wave stream address past the SPM")
        // a packed flit's high word belongs to the same slot as its low word
        if ((st_ordy[1] && !st_ordy[0]) || (st_ordy[3] && !st_ordy[2]))
            `NPU_ASSERT_FAIL("H flit high half popped without its low half")
        if (ldw_req && !ldw_zero && {2'd0, ldw_addr} >= SPM_WORDS34)
            `NPU_ASSERT_FAIL("LDW address past the SPM")
        if (!hold_vld && (hold_lo || hold_hi)) `NPU_ASSERT_FAIL("drain word pending without a held row")
        if (dr_act && dr_left == 16'd0)  `NPU_ASSERT_FAIL("active DRAIN without rows to read")
        if (dq_pop && dr_act && !rd_last) `NPU_ASSERT_FAIL("DRAIN started before the previous one read its rows")
        if (wo_ok && !cf_empty) for (ax = 0; ax < 4; ax = ax + 1)
            if (wo_f[ax*RW +: RW] < wo_s[ax*RW +: RW] || wo_f[ax*RW +: RW] > wo_e[ax*RW +: RW])
                `NPU_ASSERT_FAIL("oldest wave's retired row outside its lane range")
    end
    // OBUF row hazards against a per-row model built from the ISA semantics (docs/design.md §2,
    // not from the hazard logic above): sb_w[x] = set rows of issued waves that still have to
    // retire into OBUF row x (a skinny row is written by two sets), sb_d[x] = queued or active
    // DRAINs that still have to read row x.
    //   WAR: a WAVE issues only when no pending DRAIN still has to read one of its rows;
    //   RAW: the drain reads a row only when no issued wave still has to write it.
    // Blocking updates in place (several events may hit one row in a cycle; see npu_dma_load).
    integer sb_w [0:2*OBUF_ROWS-1];
    integer sb_d [0:2*OBUF_ROWS-1];
    integer sx, srow, sha;
    /* verilator lint_off BLKSEQ */
    always @(posedge clk) begin
        if (!rst_n) begin
            for (sx = 0; sx < 2*OBUF_ROWS; sx = sx + 1) begin
                sb_w[sx] = 0;
                sb_d[sx] = 0;
            end
        end else begin
            if (issue_wave) begin
                sha = ({16'd0, m_set} + 1) / 2;
                for (sx = 0; sx < 2*OBUF_ROWS; sx = sx + 1)
                    if (sx < {16'd0, m_set}) begin
                        srow = {{(32-OBUF_AW){1'b0}}, f_w2hi[OBUF_AW-1:0]} + ((skinny && sx >= sha) ? sx - sha : sx);
                        if (srow < 2*OBUF_ROWS) begin
                            if (sb_d[srow] != 0)
                                `NPU_ASSERT_FAIL("WAVE issued over an OBUF row a pending DRAIN has not read")
                            sb_w[srow] = sb_w[srow] + 1;
                        end
                    end
            end
            if (ob_rd_en) begin
                srow = {{(32-OBUF_AW){1'b0}}, ob_rd_addr};
                if (sb_w[srow] != 0) `NPU_ASSERT_FAIL("OBUF row drained before its last wave retired")
                if (sb_d[srow] == 0) `NPU_ASSERT_FAIL("OBUF row drained that no DRAIN was to read")
                sb_d[srow] = sb_d[srow] - 1;
            end
            if (ob_rd2_en) begin
                srow = {{(32-OBUF_AW){1'b0}}, ob_rd2_addr};
                if (sb_w[srow] != 0) `NPU_ASSERT_FAIL("OBUF pair row drained before its last wave retired")
                if (sb_d[srow] == 0) `NPU_ASSERT_FAIL("OBUF pair row drained that no DRAIN was to read")
                sb_d[srow] = sb_d[srow] - 1;
            end
            // a row's last write lands at the end of its retirement cycle: a read in that cycle
            // still gets the old value, so retirements count after the reads
            for (sx = 0; sx < 4; sx = sx + 1)
                if (p_vld[sx]) begin
                    srow = {{(32-OBUF_AW){1'b0}}, p_tag[sx*TAGW +: OBUF_AW]};
                    if (sb_w[srow] == 0) `NPU_ASSERT_FAIL("OBUF row retired that no wave was to write")
                    sb_w[srow] = sb_w[srow] - 1;
                end
            if (issue_drain)
                for (sx = 0; sx < 2*OBUF_ROWS; sx = sx + 1)
                    if (sx < {16'd0, f_cnt} && {{(32-OBUF_AW){1'b0}}, f_w1lo[OBUF_AW-1:0]} + sx < 2*OBUF_ROWS)
                        sb_d[{{(32-OBUF_AW){1'b0}}, f_w1lo[OBUF_AW-1:0]} + sx] = sb_d[{{(32-OBUF_AW){1'b0}}, f_w1lo[OBUF_AW-1:0]} + sx] + 1;
        end
    end
    /* verilator lint_on BLKSEQ */
`endif
endmodule
`default_nettype wire
