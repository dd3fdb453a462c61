`default_nettype none
`include "npu_assert.vh"
// npu_exec_vec: the vector unit (docs/isa.md "VEC", docs/datapath.md "Vector unit"): VSET's
// registers, the VEC head's decode and checks, and the engine that streams SPM -> 2S lanes -> SPM.
//   in:  q_insn, the EXEC queue head (stable until it issues); issue: npu_exec issues it (the
//        head is VEC or VSET, its checks passed, its tokens popped; a VEC only when every other
//        EXEC unit is idle: the barrier is npu_exec's); push_in: its token pushes.
//   out: is_v / is_vec: the head is VEC or VSET / VEC (decoded here: this module alone knows
//        their fields); chk_err, chk_code, chk_info: the VEC head's checks, BAD_DESC (ERR_INFO 0)
//        before SPM_ADDR (the last word of the first operand out of range, a then b then d),
//        valid from the head's third cycle (npu_exec_decode's chk_vld comes a cycle later);
//        busy, progress; done and done_push: a VEC's last write, or a VSET's issue.
// Engine: per chunk of 2S elements of a row (SUM: of a column of chunks, row after row) it
// reads the chunk's words of a then b (one per cycle), waits for the last one, runs the lanes'
// two stages and writes d's words; lanes past len are written as zero. One read and one write
// port, both the SPM's highest priority, so nothing refuses them and the cycle count is the
// program's (sw/prog/prog_expect.c): per chunk its reads + 3 + its writes.
// S is a power of two (gencfg checks it): a row's words are len / 2S (16-bit), len / S (32-bit).
module npu_exec_vec #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    parameter SPM_WORDS = 4096,
    parameter DTYPE     = 0
) (
    input  wire                clk,
    input  wire                rst_n,
    input  wire [127:0]        q_insn,
    output wire                is_v,
    output wire                is_vec,
    output wire                chk_err,
    output wire [7:0]          chk_code,
    output wire [31:0]         chk_info,
    input  wire                issue,
    input  wire [1:0]          push_in,
    output wire                busy,
    output wire                progress,
    output wire                done,
    output wire [1:0]          done_push,
    output wire                rd_req,
    output wire [SPM_AW-1:0]   rd_addr,
    input  wire                rd_gnt,
    input  wire [32*S-1:0]     rd_data,
    output wire                wr_req,
    output wire [SPM_AW-1:0]   wr_addr,
    output wire [32*S-1:0]     wr_data,
    input  wire                wr_gnt,
    output wire                ev_busy,
    output wire                ev_rd,
    output wire                ev_wr
);
`include "npu_defs.vh"
    localparam F  = 2 * S;
    localparam LS = $clog2(S);
    localparam LF = LS + 1;
    localparam [31:0] SPM_WORDS32 = SPM_WORDS[31:0];

    // ------------------------------------------------------------------ decode (the head)
    wire [7:0]  op      = q_insn[F_INSN_OP_LSB +: F_INSN_OP_W];
    assign      is_vec  = op == OP_VEC;
    wire        is_set  = op == OP_VSET;
    assign      is_v    = is_vec || is_set;
    wire [3:0]  f_vop   = q_insn[F_VEC_VOP_LSB +: F_VEC_VOP_W];
    wire        f_wide  = q_insn[F_VEC_WIDE_LSB];
    wire [11:0] f_rows  = q_insn[F_VEC_ROWS_LSB +: F_VEC_ROWS_W];
    wire [15:0] f_aa    = q_insn[F_VEC_A_ADDR_LSB +: F_VEC_A_ADDR_W];
    wire [15:0] f_as    = q_insn[F_VEC_A_STRIDE_LSB +: F_VEC_A_STRIDE_W];
    wire [15:0] f_ba    = q_insn[F_VEC_B_ADDR_LSB +: F_VEC_B_ADDR_W];
    wire [15:0] f_bs    = q_insn[F_VEC_B_STRIDE_LSB +: F_VEC_B_STRIDE_W];
    wire [15:0] f_da    = q_insn[F_VEC_D_ADDR_LSB +: F_VEC_D_ADDR_W];
    wire [15:0] f_ds    = q_insn[F_VEC_D_STRIDE_LSB +: F_VEC_D_STRIDE_W];

    // VSET registers (zero at the start of a run: the units' reset)
    reg  [31:0] alpha, beta;
    reg  [15:0] len;
    reg  [4:0]  shift;
    always @(posedge clk) begin
        if (!rst_n) begin
            alpha <= 32'd0; beta <= 32'd0; len <= 16'd0; shift <= 5'd0;
        end else if (issue && is_set) begin
            alpha <= q_insn[F_VSET_ALPHA_LSB +: F_VSET_ALPHA_W];
            beta  <= q_insn[F_VSET_BETA_LSB +: F_VSET_BETA_W];
            len   <= q_insn[F_VSET_LEN_LSB +: F_VSET_LEN_W];
            shift <= q_insn[F_VSET_SHIFT_LSB +: F_VSET_SHIFT_W];
        end
    end

    // element widths and operands of an op: a 32-bit for NARROW and the wide same-width ops,
    // d 32-bit for WIDEN and the wide same-width ops; b read by ADD, AXPBY, RELU_BWD
    wire h_a32  = f_vop == VOP_NARROW || (f_wide && f_vop != VOP_WIDEN);
    wire h_d32  = f_vop == VOP_WIDEN || (f_wide && f_vop != VOP_NARROW);
    wire h_useb = f_vop == VOP_ADD || f_vop == VOP_AXPBY || f_vop == VOP_RELU_BWD;
    wire h_sum  = f_vop == VOP_SUM;
    // words of a row of len elements: 2S per word (16-bit), S (32-bit)
    localparam integer F1I = F - 1, S1I = S - 1;
    localparam [16:0] F1 = F1I[16:0], S1 = S1I[16:0];
    wire [16:0] w16 = ({1'b0, len} + F1) >> LF;
    wire [16:0] w32 = ({1'b0, len} + S1) >> LS;

    // ------------------------------------------------------------------ checks (two stages)
    // stage 1: the descriptor check, row offsets (rows - 1) * stride (no product feeds an adder
    // in its cycle), words per row; stage 2: last words, range, code and ERR_INFO
    reg        c1_bad, c1_useb;
    reg [27:0] c1_pa, c1_pb, c1_pd;
    reg [16:0] c1_wa, c1_wd;
    wire [11:0] rm1 = f_rows - 12'd1;
    always @(posedge clk) begin
        c1_bad  <= f_vop >= NUM_VOPS[3:0] || f_rows == 12'd0 || len == 16'd0
                   || (f_wide && (f_vop == VOP_NARROW || f_vop == VOP_WIDEN));
        c1_useb <= h_useb;
        c1_pa   <= {16'd0, rm1} * {12'd0, f_as};
        c1_pb   <= {16'd0, rm1} * {12'd0, f_bs};
        c1_pd   <= h_sum ? 28'd0 : {16'd0, rm1} * {12'd0, f_ds};
        c1_wa   <= h_a32 ? w32 : w16;
        c1_wd   <= h_d32 ? w32 : w16;
    end
    wire [31:0] last_a = {16'd0, f_aa} + {4'd0, c1_pa} + {15'd0, c1_wa} - 32'd1;
    wire [31:0] last_b = {16'd0, f_ba} + {4'd0, c1_pb} + {15'd0, c1_wa} - 32'd1;
    wire [31:0] last_d = {16'd0, f_da} + {4'd0, c1_pd} + {15'd0, c1_wd} - 32'd1;
    wire oob_a = last_a >= SPM_WORDS32;
    wire oob_b = c1_useb && last_b >= SPM_WORDS32;
    wire oob_d = last_d >= SPM_WORDS32;
    reg        c2_err;
    reg [7:0]  c2_code;
    reg [31:0] c2_info;
    always @(posedge clk) begin
        c2_err  <= c1_bad || oob_a || oob_b || oob_d;
        c2_code <= c1_bad ? ERR_BAD_DESC : ERR_SPM_ADDR;
        c2_info <= c1_bad ? 32'd0 : oob_a ? last_a : oob_b ? last_b : last_d;
    end
    assign chk_err  = is_vec && c2_err;
    assign chk_code = c2_code;
    assign chk_info = c2_info;

    // ------------------------------------------------------------------ engine
    localparam [2:0] VS_IDLE = 3'd0, VS_RD = 3'd1, VS_WAIT = 3'd2, VS_MUL = 3'd3, VS_ADD = 3'd4,
                     VS_WR = 3'd5;
    reg  [2:0]  st;
    reg  [3:0]  vop;
    reg         a32, d32, useb, sum;
    reg  [1:0]  push;
    reg  [11:0] rows, r;
    reg  [15:0] nch, c;
    reg  [16:0] wa, wd, rem;       // words per row of a, d; elements left from chunk c on
    reg  [15:0] aa, as_, bs, ds;   // SUM restarts a at aa for every chunk
    reg  [31:0] ra, rb, rd;        // the current row's first word of a, b, d
    reg  [1:0]  k;                 // read of the chunk: 0/1 a low/high word, 2/3 b low/high
    reg         wk;                // write of the chunk: 0 low, 1 high word
    // the chunk's second word (32-bit: word 2c + 1) is in the row if 2c + 1 < words per row
    wire [16:0] c2   = {c, 1'b0};
    wire        a_hi = a32 && {15'd0, c2} + 32'd1 < {15'd0, wa};
    wire        d_hi = d32 && {15'd0, c2} + 32'd1 < {15'd0, wd};
    // reads in the order a low, a high, b low, b high, skipping the ones the chunk lacks
    wire        k1_ok = a_hi;
    wire        k2_ok = useb;
    wire        k3_ok = useb && a_hi;
    wire [1:0]  k_next = (k == 2'd0 && k1_ok) ? 2'd1 : (k <= 2'd1 && k2_ok) ? 2'd2 : 2'd3;
    wire        k_last = k == 2'd3 || (k == 2'd2 && !k3_ok) || (k == 2'd1 && !k2_ok)
                      || (k == 2'd0 && !k1_ok && !k2_ok);
    wire        w_last = !(wk == 1'b0 && d_hi);
    wire        last_r = r == rows - 12'd1;
    wire        last_c = c == nch - 16'd1;

    // The next chunk and row bases, loaded every cycle (the FSM below only sets the state):
    // a VEC starts at chunk 0 of row 0; SUM's next row (ADD) moves a down a row, its next chunk
    // (the chunk's write done) returns a to row 0; an element-wise op's next chunk stays in the
    // row, after the row's last it moves a, b, d down a row.
    wire        start  = st == VS_IDLE && issue && is_vec;
    wire        sum_nr = st == VS_ADD && sum && !last_r;
    wire        wr_end = st == VS_WR && wr_gnt && w_last;
    wire        row_nx = wr_end && !sum && last_c;
    wire [15:0] c_n  = start || row_nx ? 16'd0 : wr_end ? c + 16'd1 : c;
    wire [31:0] ra_n = start ? {16'd0, f_aa} : (sum_nr || row_nx) ? ra + {16'd0, as_}
                     : (wr_end && sum) ? {16'd0, aa} : ra;
    wire [31:0] rb_n = start ? {16'd0, f_ba} : row_nx ? rb + {16'd0, bs} : rb;
    wire [31:0] rd_n = start ? {16'd0, f_da} : row_nx ? rd + {16'd0, ds} : rd;
    wire        a32_n = start ? h_a32 : a32;
    wire        d32_n = start ? h_d32 : d32;
    // The chunk's SPM words, registered from those next values, so the SPM requests leave a
    // register through a 4:1 mux (the address adders stay out of the SPM arbitration path):
    // a 32-bit chunk c is words 2c, 2c+1 of its row, a 16-bit one word c
    wire [31:0] ao_n = a32_n ? {15'd0, c_n, 1'b0} : {16'd0, c_n};
    wire [31:0] do_n = d32_n ? {15'd0, c_n, 1'b0} : {16'd0, c_n};
    reg  [31:0] ca, ca1, cb, cb1, cd, cd1;
    always @(posedge clk) begin
        ca <= ra_n + ao_n; ca1 <= ra_n + ao_n + 32'd1;
        cb <= rb_n + ao_n; cb1 <= rb_n + ao_n + 32'd1;
        cd <= rd_n + do_n; cd1 <= rd_n + do_n + 32'd1;
    end
    wire [31:0] rd_a = k == 2'd0 ? ca : k == 2'd1 ? ca1 : k == 2'd2 ? cb : cb1;
    wire [31:0] wr_a = wk ? cd1 : cd;
    assign rd_req  = st == VS_RD;
    assign rd_addr = rd_a[SPM_AW-1:0];
    assign wr_req  = st == VS_WR;
    assign wr_addr = wr_a[SPM_AW-1:0];
    wire unused_addr = &{1'b0, rd_a[31:SPM_AW], wr_a[31:SPM_AW]};   // in range (the checks)

    // read data: registered in the SPM the cycle after the grant, captured here the next edge
    reg              rp_q;
    reg  [1:0]       rk_q;
    reg  [32*S-1:0]  a_lo, a_hw, b_lo, b_hw;
    always @(posedge clk) begin
        rp_q <= rst_n && rd_req && rd_gnt;
        rk_q <= k;
        if (rp_q) begin
            case (rk_q)
                2'd0: a_lo <= rd_data;
                2'd1: a_hw <= rd_data;
                2'd2: b_lo <= rd_data;
                default: b_hw <= rd_data;
            endcase
        end
    end

    // the end of a chunk: the next chunk of the row, the next row, or done (SUM: the next row of
    // the chunk's column until its last, then the next column from row 0)
    wire       fin = sum ? last_c : (last_r && last_c);
    wire       vec_done = st == VS_WR && wr_gnt && w_last && fin;
    always @(posedge clk) begin
        if (!rst_n) begin
            st <= VS_IDLE;
        end else begin
            c <= c_n; ra <= ra_n; rb <= rb_n; rd <= rd_n;
            case (st)
                VS_IDLE: if (issue && is_vec) begin
                    st <= VS_RD; k <= 2'd0; r <= 12'd0;
                    vop <= f_vop; a32 <= h_a32; d32 <= h_d32; useb <= h_useb; sum <= h_sum;
                    push <= push_in; rows <= f_rows; nch <= w16[15:0]; rem <= {1'b0, len};
                    wa <= h_a32 ? w32 : w16; wd <= h_d32 ? w32 : w16;
                    aa <= f_aa; as_ <= f_as; bs <= f_bs; ds <= f_ds;
                end
                VS_RD:   if (rd_gnt) begin
                    k <= k_next;
                    if (k_last) st <= VS_WAIT;
                end
                VS_WAIT: st <= VS_MUL;
                VS_MUL:  st <= VS_ADD;
                VS_ADD:  begin
                    k <= 2'd0; wk <= 1'b0;
                    if (sum && !last_r) begin       // the column's next row
                        st <= VS_RD; r <= r + 12'd1;
                    end else begin
                        st <= VS_WR;
                    end
                end
                default: if (wr_gnt) begin          // VS_WR
                    wk <= 1'b1;
                    if (w_last) begin
                        st <= fin ? VS_IDLE : VS_RD;
                        if (sum) begin              // the next column, from row 0
                            rem <= rem - F[16:0]; r <= 12'd0;
                        end else if (last_c) begin  // the next row, from chunk 0
                            rem <= {1'b0, len}; r <= r + 12'd1;
                        end else begin
                            rem <= rem - F[16:0];
                        end
                    end
                end
            endcase
        end
    end

    // ------------------------------------------------------------------ lanes
    // lane e: 16-bit operands from bits [16e +: 16] of the low word; 32-bit ones from the low
    // word (e < S) or the high word; results packed the same way, zero past len
    wire [32*F-1:0] l_r32;
    wire [16*F-1:0] l_r16;
    wire [32*F-1:0] m32;             // the results, zero past len
    wire [16*F-1:0] m16;
    genvar e;
    generate
        for (e = 0; e < F; e = e + 1) begin : g_lane
            localparam [16:0] EI = e;
            wire [31:0] xa, xb;
            if (e < S) begin : g_lo
                assign xa = !a32 ? {16'd0, a_lo[16*e +: 16]} : a_lo[32*e +: 32];
                assign xb = !a32 ? {16'd0, b_lo[16*e +: 16]} : b_lo[32*e +: 32];
            end else begin : g_hi
                assign xa = !a32 ? {16'd0, a_lo[16*e +: 16]} : a_hw[32*(e-S) +: 32];
                assign xb = !a32 ? {16'd0, b_lo[16*e +: 16]} : b_hw[32*(e-S) +: 32];
            end
            if (DTYPE == DTYPE_BF16) begin : g_fp
                npu_vec_lane_fp u_lane (.clk(clk), .vop(vop), .x16(!a32), .x(xa), .y(xb),
                                        .alpha(alpha), .beta(beta), .mul(st == VS_MUL),
                                        .add(st == VS_ADD), .first(r == 12'd0),
                                        .r(l_r32[32*e +: 32]), .r16(l_r16[16*e +: 16]));
            end else begin : g_int
                npu_vec_lane_int u_lane (.clk(clk), .vop(vop), .x16(!a32), .x(xa), .y(xb),
                                         .alpha(alpha[15:0]), .beta(beta[15:0]), .shift(shift),
                                         .mul(st == VS_MUL), .add(st == VS_ADD),
                                         .first(r == 12'd0), .r32(l_r32[32*e +: 32]),
                                         .r16(l_r16[16*e +: 16]));
            end
            wire in_len = rem > EI;
            assign m32[32*e +: 32] = in_len ? l_r32[32*e +: 32] : 32'd0;
            assign m16[16*e +: 16] = in_len ? l_r16[16*e +: 16] : 16'd0;
        end
    endgenerate
    // the registers a dtype's lanes do not read: bf16 has no shift, int16 scalars are 16-bit
    generate
        if (DTYPE == DTYPE_BF16) begin : g_unused_fp
            wire unused = &{1'b0, shift};
        end else begin : g_unused_int
            wire unused = &{1'b0, alpha[31:16], beta[31:16]};
        end
    endgenerate
    // a 16-bit d word holds the chunk's 2S lanes; a 32-bit one lanes 0..S-1 (wk 0) or S..2S-1
    assign wr_data = !d32 ? m16 : wk ? m32[32*S +: 32*S] : m32[0 +: 32*S];

    // ------------------------------------------------------------------ status
    assign busy      = st != VS_IDLE;
    assign progress  = st != VS_IDLE;
    assign done      = vec_done || (issue && is_set);
    assign done_push = vec_done ? push : (issue && is_set) ? push_in : 2'b00;
    assign ev_busy   = st != VS_IDLE;
    assign ev_rd     = rd_req && rd_gnt;
    assign ev_wr     = wr_req && wr_gnt;

`ifdef NPU_ASSERTS
    // The unit's SPM ports have the first claim on every sub-bank (npu_top), so a refusal means
    // the priority was broken and the cycle count no longer what the program says; addresses are
    // in range because the head's checks passed; a VEC issues only into an idle unit.
    always @(posedge clk) if (rst_n) begin
        if (rd_req && !rd_gnt) `NPU_ASSERT_FAIL("vector unit SPM read refused")
        if (wr_req && !wr_gnt) `NPU_ASSERT_FAIL("vector unit SPM write refused")
        if (rd_req && rd_a >= SPM_WORDS32) `NPU_ASSERT_FAIL("vector unit read past the SPM")
        if (wr_req && wr_a >= SPM_WORDS32) `NPU_ASSERT_FAIL("vector unit write past the SPM")
        if (issue && is_vec && st != VS_IDLE) `NPU_ASSERT_FAIL("VEC issued into a busy vector unit")
    end
`endif
endmodule
`default_nettype wire
