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
// reads the chunk's words of a then b (one per cycle), and three cycles after the last one (its
// data, the lanes' two stages) writes d's words; lanes past len are written as zero. Pipelined
// across chunks and rows: the next chunk is read while one computes and writes, a chunk's last
// read at least its predecessor's writes after the predecessor's last read. When d overlaps a
// source other than in place (the checks' `ser`), a chunk's first read waits until the
// previous chunk is written: the documented order word for word. One read and one write port,
// both the SPM's highest priority, so nothing refuses them and the cycle count is the
// program's (sw/prog/prog_expect.c, npu_vec_busy): about max(reads, writes) per chunk.
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
    // d 32-bit for WIDEN and the wide same-width ops; b read by the ops of VOP_B_MASK (ADD,
    // AXPBY, RELU_BWD, VMUL: npu_defs.h's table)
    wire h_a32  = f_vop == VOP_NARROW || (f_wide && f_vop != VOP_WIDEN);
    wire h_d32  = f_vop == VOP_WIDEN || (f_wide && f_vop != VOP_NARROW);
    wire h_useb = VOP_B_MASK[f_vop];
    wire h_sum  = f_vop == VOP_SUM;
    // words of a row of len elements: 2S per word (16-bit), S (32-bit)
    localparam integer F1I = F - 1, S1I = S - 1;
    localparam [16:0] F1 = F1I[16:0], S1 = S1I[16:0];
    wire [16:0] w16 = ({1'b0, len} + F1) >> LF;
    wire [16:0] w32 = ({1'b0, len} + S1) >> LS;

    // ------------------------------------------------------------------ checks (two stages)
    // stage 1: the descriptor check, row offsets (rows - 1) * stride (no product feeds an adder
    // in its cycle), words per row; stage 2: last words, range, code and ERR_INFO
    reg        c1_bad, c1_useb, c1_inpl;
    reg [27:0] c1_pa, c1_pb, c1_pd;
    reg [16:0] c1_wa, c1_wd;
    wire [11:0] rm1 = f_rows - 12'd1;
    always @(posedge clk) begin
        // d can be in place on a source: element-wise, same width (then same words per row)
        c1_inpl <= !h_sum && h_a32 == h_d32;
        c1_bad  <= f_vop >= NUM_VOPS[3:0] || f_rows == 12'd0 || len == 16'd0
                   || (f_wide && VOP_NOWIDE_MASK[f_vop]);
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
    // The engine's mode (docs/isa.md "VEC", order): pipelined unless d's words [d, last_d]
    // overlap a source's (b only if read) without being that source in place (same first word,
    // stride and width; rows that do not overlap: one row, or stride >= words per row). Then no
    // word the VEC writes is read by a later chunk, and chunk c + 1 may be read before chunk c
    // is written; otherwise (`c2_ser`) the engine keeps the order word for word.
    wire ov_a   = !(last_d < {16'd0, f_aa}) && !(last_a < {16'd0, f_da});
    wire ov_b   = !(last_d < {16'd0, f_ba}) && !(last_b < {16'd0, f_da});
    wire rows1  = f_rows == 12'd1;
    wire same_a = c1_inpl && f_aa == f_da && f_as == f_ds && (rows1 || {1'b0, f_as} >= c1_wa);
    wire same_b = c1_inpl && f_ba == f_da && f_bs == f_ds && (rows1 || {1'b0, f_bs} >= c1_wa);
    reg        c2_err, c2_ser;
    reg [7:0]  c2_code;
    reg [31:0] c2_info;
    always @(posedge clk) begin
        c2_ser  <= (ov_a && !same_a) || (c1_useb && ov_b && !same_b);
        c2_err  <= c1_bad || oob_a || oob_b || oob_d;
        c2_code <= c1_bad ? ERR_BAD_DESC : ERR_SPM_ADDR;
        c2_info <= c1_bad ? 32'd0 : oob_a ? last_a : oob_b ? last_b : last_d;
    end
    assign chk_err  = is_vec && c2_err;
    assign chk_code = c2_code;
    assign chk_info = c2_info;

    // ------------------------------------------------------------------ engine
    // Two sides. The read side walks the chunks (SUM: a column's rows, column after column),
    // one SPM read per cycle, and at a chunk's last read sends a token down the stages: t1 the
    // last word's data, t2 the lanes' stage 1 (mul), t3 stage 2 (add), then the write side
    // writes d's words. Chunk c + 1 is read while chunk c computes and writes. Two rules keep the
    // stages' registers safe and make the count exact: a chunk's last read comes at least W
    // cycles after the previous chunk's last read (W: that chunk's writes, 0 for SUM's rows
    // before a column's last; `hold`), so its stage 2 never overwrites results still being
    // written; in `ser` mode (d overlaps a source other than in place, the checks' c2_ser) a
    // chunk's first read waits for the stages and the write side to empty, the order of
    // docs/isa.md word for word. Tokens carry first (SUM's row 0), wr (it writes), lc (its row's
    // last chunk: zero past len, one 32-bit word fewer when the row's words are odd), fin.
    localparam AW = SPM_AW;
    reg         act;               // the read side: chunks left to read
    reg  [3:0]  vop;
    reg         a32, d32, useb, sum, ser;
    reg         lhi;               // a row's last chunk has two 32-bit words (even words per row)
    reg  [1:0]  push;
    reg  [15:0] ni1;               // inner iterations - 1 (chunks of a row; SUM: rows)
    reg         ni0;               //   ... is zero
    reg  [15:0] ic, oc;            // inner / outer iterations left after the current one
    reg         il, ol, ifst;      // ic == 0, oc == 0, the first inner iteration (registered)
    reg  [1:0]  k;                 // read of the chunk: 0/1 a low/high word, 2/3 b low/high
    reg         hold;              // the chunk's last read waits a cycle (the previous writes 2)
    // the current chunk's words (ca1 = ca + 1), the next outer iteration's first (oa), steps
    reg  [AW-1:0] ca, ca1, cb, cb1, oa, ob, ia_, xa_, bs_;
    wire [AW-1:0] st1 = a32 ? 2 : 1;           // a chunk's words of a (b), of a 32-bit d
    wire          rlc  = sum ? ol : il;        // the chunk is its row's last
    wire          a_hi = a32 && (!rlc || lhi);
    wire          d_hi = d32 && (!rlc || lhi);
    wire          twr  = !sum || il;           // the chunk's token writes d
    // reads in the order a low, a high, b low, b high, skipping the ones the chunk lacks
    wire        k1_ok = a_hi;
    wire        k2_ok = useb;
    wire        k3_ok = useb && a_hi;
    wire [1:0]  k_next = (k == 2'd0 && k1_ok) ? 2'd1 : (k <= 2'd1 && k2_ok) ? 2'd2 : 2'd3;
    wire        k_last = k == 2'd3 || (k == 2'd2 && !k3_ok) || (k == 2'd1 && !k2_ok)
                      || (k == 2'd0 && !k1_ok && !k2_ok);
    // stages and write side
    reg         t1, t2, t3, f1, f2, f3, w1, w2, w3, l1, l2, l3, n1, n2, n3;
    reg         wact, wk, wl, wn;
    reg  [AW-1:0] cd, cd1, od, ds_;
    wire [AW-1:0] st1d = d32 ? 2 : 1;
    wire        pbusy  = t1 || t2 || t3 || wact;
    wire        rq     = act && !(k_last && hold) && !(ser && k == 2'd0 && pbusy);
    wire        adv    = rq && k_last;          // the chunk's last read
    wire        wd_hi  = d32 && (!wl || lhi);
    wire        w_last = !(wk == 1'b0 && wd_hi);
    wire        wend   = wact && w_last;        // the chunk's last write
    wire [AW-1:0] rd_a = k == 2'd0 ? ca : k == 2'd1 ? ca1 : k == 2'd2 ? cb : cb1;
    wire [AW-1:0] wr_a = wk ? cd1 : cd;
    assign rd_req  = rq;
    assign rd_addr = rd_a;
    assign wr_req  = wact;
    assign wr_addr = wr_a;
    // Requests are never refused (the first claim on every sub-bank; asserted below), so the
    // sides advance on their own requests: no path from the SPM's arbitration back in here.
    wire unused_gnt = &{1'b0, rd_gnt, wr_gnt};

    // the head's fields at start, in AW bits (addresses in range: the checks passed)
    wire [31:0] f_aa32 = {16'd0, f_aa}, f_ba32 = {16'd0, f_ba}, f_da32 = {16'd0, f_da};
    wire [31:0] f_as32 = {16'd0, f_as}, f_bs32 = {16'd0, f_bs}, f_ds32 = {16'd0, f_ds};
    wire unused_f32 = &{1'b0, f_aa32[31:AW], f_ba32[31:AW], f_da32[31:AW], f_as32[31:AW],
                        f_bs32[31:AW], f_ds32[31:AW]};
    wire [AW-1:0] h_st  = h_a32 ? 2 : 1;
    wire [AW-1:0] h_ia  = h_sum ? f_as32[AW-1:0] : h_st;
    wire [AW-1:0] h_xa  = h_sum ? h_st : f_as32[AW-1:0];
    wire [15:0]   lm1   = len - 16'd1;
    wire [15:0]   nch1  = lm1 >> LF;                       // chunks of a row - 1 (len >= 1)
    wire          nch0  = {1'b0, len} <= F1 + 17'd1;
    wire          start = issue && is_vec;
    always @(posedge clk) begin
        if (!rst_n) begin
            act <= 1'b0; t1 <= 1'b0; t2 <= 1'b0; t3 <= 1'b0; wact <= 1'b0;
        end else begin
            // read side
            if (start) begin
                act <= 1'b1; k <= 2'd0; hold <= 1'b0; ifst <= 1'b1;
                vop <= f_vop; a32 <= h_a32; d32 <= h_d32; useb <= h_useb; sum <= h_sum;
                ser <= c2_ser; lhi <= !w32[0]; push <= push_in;
                ni1 <= h_sum ? {4'd0, rm1} : nch1;
                ni0 <= h_sum ? f_rows == 12'd1 : nch0;
                ic  <= h_sum ? {4'd0, rm1} : nch1;
                il  <= h_sum ? f_rows == 12'd1 : nch0;
                oc  <= h_sum ? nch1 : {4'd0, rm1};
                ol  <= h_sum ? nch0 : f_rows == 12'd1;
                ca <= f_aa32[AW-1:0]; ca1 <= f_aa32[AW-1:0] + 1'b1;
                oa <= f_aa32[AW-1:0] + h_xa; ia_ <= h_ia; xa_ <= h_xa;
                cb <= f_ba32[AW-1:0]; cb1 <= f_ba32[AW-1:0] + 1'b1;
                ob <= f_ba32[AW-1:0] + f_bs32[AW-1:0]; bs_ <= f_bs32[AW-1:0];
            end else if (rq) begin
                k <= k_last ? 2'd0 : k_next;
                hold <= adv && twr && d_hi;
                if (adv) begin
                    if (il) begin                    // the next outer iteration
                        ic <= ni1; il <= ni0; ifst <= 1'b1;
                        oc <= oc - 16'd1; ol <= oc == 16'd1;
                        if (ol) act <= 1'b0;         // the VEC's last read
                        ca <= oa; ca1 <= oa + 1'b1; oa <= oa + xa_;
                        cb <= ob; cb1 <= ob + 1'b1; ob <= ob + bs_;
                    end else begin                   // the next inner one
                        ic <= ic - 16'd1; il <= ic == 16'd1; ifst <= 1'b0;
                        ca <= ca + ia_; ca1 <= ca1 + ia_;
                        cb <= cb + st1; cb1 <= cb1 + st1;
                    end
                end
            end else begin
                hold <= 1'b0;
            end
            // stages
            t1 <= adv; t2 <= t1; t3 <= t2;
            // write side: loaded by stage 2's token (its previous chunk's writes are done:
            // `hold`), d's next chunk after each chunk, its next row after a row's last
            if (t3 && w3) begin
                wact <= 1'b1; wk <= 1'b0; wl <= l3; wn <= n3;
            end else if (wend) begin
                wact <= 1'b0;
            end else if (wact) begin
                wk <= 1'b1;
            end
        end
        f1 <= sum && ifst; w1 <= twr; l1 <= rlc; n1 <= il && ol;
        f2 <= f1; w2 <= w1; l2 <= l1; n2 <= n1;
        f3 <= f2; w3 <= w2; l3 <= l2; n3 <= n2;
        if (start) begin
            cd <= f_da32[AW-1:0]; cd1 <= f_da32[AW-1:0] + 1'b1;
            od <= f_da32[AW-1:0] + f_ds32[AW-1:0]; ds_ <= f_ds32[AW-1:0];
        end else if (wend) begin
            if (!sum && wl) begin
                cd <= od; cd1 <= od + 1'b1; od <= od + ds_;
            end else begin
                cd <= cd + st1d; cd1 <= cd1 + st1d;
            end
        end
    end
    wire       vec_done = wend && wn;
    // read data: registered in the SPM the cycle after the grant, captured here the next edge
    reg              rp_q;
    reg  [1:0]       rk_q;
    reg  [32*S-1:0]  a_lo, a_hw, b_lo, b_hw;
    always @(posedge clk) begin
        rp_q <= rst_n && rq;
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

    // ------------------------------------------------------------------ lanes
    // lane e: 16-bit operands from bits [16e +: 16] of the low word; 32-bit ones from the low
    // word (e < S) or the high word; results packed the same way, zero past len
    wire [32*F-1:0] l_r32;
    wire [16*F-1:0] l_r16;
    wire [32*F-1:0] m32;             // the results, zero past len
    wire [16*F-1:0] m16;
    // the lanes of a row's last chunk inside len: len mod 2S of them (0: all 2S)
    wire [LF-1:0] tail  = len[LF-1:0];
    wire [F-1:0]  tmask = tail == {LF{1'b0}} ? {F{1'b1}} : ~({F{1'b1}} << tail);
    genvar e;
    generate
        for (e = 0; e < F; e = e + 1) begin : g_lane
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
                                        .alpha(alpha), .beta(beta), .mul(t2),
                                        .add(t3), .first(f3),
                                        .r(l_r32[32*e +: 32]), .r16(l_r16[16*e +: 16]));
            end else begin : g_int
                npu_vec_lane_int u_lane (.clk(clk), .vop(vop), .x16(!a32), .x(xa), .y(xb),
                                         .alpha(alpha[15:0]), .beta(beta[15:0]), .shift(shift),
                                         .mul(t2), .add(t3),
                                         .first(f3), .r32(l_r32[32*e +: 32]),
                                         .r16(l_r16[16*e +: 16]));
            end
            wire in_len = !wl || tmask[e];
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
    wire   vbusy     = act || pbusy;
    assign busy      = vbusy;
    assign progress  = vbusy;
    assign done      = vec_done || (issue && is_set);
    assign done_push = vec_done ? push : (issue && is_set) ? push_in : 2'b00;
    assign ev_busy   = vbusy;
    assign ev_rd     = rd_req && rd_gnt;
    assign ev_wr     = wr_req && wr_gnt;

`ifdef NPU_ASSERTS
    // The unit's SPM ports have the first claim on every sub-bank (npu_top), so a refusal means
    // the priority was broken and the cycle count no longer what the program says; addresses are
    // in range because the head's checks passed; a VEC issues only into an idle unit.
    always @(posedge clk) if (rst_n) begin
        if (rd_req && !rd_gnt) `NPU_ASSERT_FAIL("vector unit SPM read refused")
        if (wr_req && !wr_gnt) `NPU_ASSERT_FAIL("vector unit SPM write refused")
        if (rd_req && {{(32-AW){1'b0}}, rd_a} >= SPM_WORDS32) `NPU_ASSERT_FAIL("vector unit read past the SPM")
        if (wr_req && {{(32-AW){1'b0}}, wr_a} >= SPM_WORDS32) `NPU_ASSERT_FAIL("vector unit write past the SPM")
        if (issue && is_vec && vbusy) `NPU_ASSERT_FAIL("VEC issued into a busy vector unit")
        if (t3 && w3 && wact && !wend) `NPU_ASSERT_FAIL("vector unit stage 2 overran its writes")
    end
`endif
endmodule
`default_nettype wire
