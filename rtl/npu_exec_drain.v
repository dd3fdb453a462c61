`default_nettype none
`include "npu_assert.vh"
// npu_exec_drain: the drain engine of npu_exec: OBUF rows (int32) -> SPM, one DRAIN at a time
// behind a queue of four.
//   in:  issue (a DRAIN issues) with its fields (npu_exec_decode's dr_*: OBUF rows [ob,
//        rows_end), SPM address, stride, split_rows, hi_rows, acc, narrow, pack (n lanes a
//        row: the packed streams below), the pair order two, h and its SPM offsets hs / hoff)
//        and token pushes; young / pend_a / pend_b
//        (npu_exec_obuf_hazard: a wave in flight still writes the active DRAIN's rows, rows
//        `row` / `row1`); the OBUF read data, the SPM write grants, the grants and data of
//        its two SPM read ports (ar_*: DRAIN acc's old words, low and high).
//   out: full (the queue; no DRAIN issues); the OBUF reads, the SPM writes (ports 0..3), the SPM
//        reads of DRAIN acc's old words (ar_*); for the hazards the active DRAIN's rows
//        [rd_lo, rd_end) and next rows row / row1, the queue head's [head_lo, head_end) and
//        start (the head becomes the
//        active DRAIN); done / done_push: a DRAIN's last words are written, its token pushes;
//        busy, progress (a pair written); the drain events.
// A DRAIN leaves the queue in the cycle the previous one reads its last rows; it reads each
// pair only when its rows are final, so it streams behind the wave that writes them.
module npu_exec_drain #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    // verilator lint_off UNUSEDPARAM
    parameter SPM_WORDS = 4096,      // the checks only (NPU_ASSERTS)
    // verilator lint_on UNUSEDPARAM
    parameter OBUF_AW   = 9,
    parameter BF16      = 0          // DRAIN acc adds fp32 (npu_fp32_add, RNE) instead of int32
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  issue,
    input  wire                  two,        // split pairs
    input  wire [OBUF_AW-1:0]    h,          // ceil(rows/2)
    input  wire [15:0]           hs,         // ceil(rows/2) * stride
    input  wire [15:0]           hoff,       // split_rows * stride
    input  wire                  acc,
    input  wire                  narrow,     // one 16-bit word per row (npu_drain_narrow)
    input  wire [4:0]            pack,       // n: rows' first n lanes back to back (npu_drain_pack), 0 off
    input  wire [4:0]            shift,
    input  wire [1:0]            push,       // token pushes {next, prev}
    input  wire [15:0]           stride,
    input  wire [15:0]           spm,
    input  wire [OBUF_AW-1:0]    ob,
    input  wire [15:0]           rows,
    input  wire [OBUF_AW:0]      rows_end,
    input  wire [15:0]           split,
    input  wire [15:0]           hirows,
    output wire                  full,
    output wire                  busy,
    output wire                  progress,
    output wire                  done,
    output wire [1:0]            done_push,
    // OBUF row hazards
    input  wire                  young,
    input  wire                  pend_a,
    input  wire                  pend_b,
    output wire                  act,
    output wire [OBUF_AW:0]      rd_lo,
    output wire [OBUF_AW:0]      rd_end,
    output wire [OBUF_AW-1:0]    row,
    output wire [OBUF_AW-1:0]    row1,
    output wire [OBUF_AW:0]      head_lo,
    output wire [OBUF_AW:0]      head_end,
    output wire                  start,
    // OBUF reads (rows r and r+1, or r and r+h)
    output wire                  ob_rd_en,
    output wire [OBUF_AW-1:0]    ob_rd_addr,
    input  wire [2*S*32-1:0]     ob_rd_data,
    output wire                  ob_rd2_en,
    output wire [OBUF_AW-1:0]    ob_rd2_addr,
    input  wire [2*S*32-1:0]     ob_rd2_data,
    // SPM: write ports 0..3 ([0]/[1] low/high word of the first row, [2]/[3] of the second),
    // read ports [0]/[1]: DRAIN acc's old low / high word of the held row
    output wire [3:0]            wr_req,
    output wire [4*SPM_AW-1:0]   wr_addr,
    output wire [4*32*S-1:0]     wr_data,
    input  wire [3:0]            wr_gnt,
    output wire [1:0]            ar_req,
    output wire [2*SPM_AW-1:0]   ar_addr,
    input  wire [1:0]            ar_gnt,
    input  wire [2*32*S-1:0]     ar_data,
    // events
    output wire [1:0]            ev_drain_row,
    output wire                  ev_drain_busy,  // a DRAIN is active
    output wire                  ev_drain_stall  // a drain word was refused by the SPM
);
    localparam WB = 32 * S;          // SPM word bits
    localparam RW = OBUF_AW + 1;     // an OBUF row or the end of a range (up to 2 * OBUF_ROWS)

    // the active DRAIN
    reg          dr_act, dr_splitm_r;
    reg  [15:0]  dr_ri, dr_ri2, dr_hi;   // the pair's row indices, hi_rows (skinny)
    reg          dr_two;             // split pairs
    reg  [31:0]  dr_spm_next, dr_hoff;
    reg  [15:0]  dr_stride;
    reg  [1:0]   dr_push;
    reg          dr_acc;             // the active DRAIN accumulates into the SPM
    reg          dr_narrow;          // the active DRAIN writes one 16-bit word per row
    reg  [4:0]   dr_shift;
    // the hold stage (the rows read last)
    reg          hold_vld, hold_lo, hold_hi;
    reg  [31:0]  hold_addr;
    reg          h2_vld, h2_lo, h2_hi;   // second row of a pair (plain drains)
    reg  [31:0]  h2_addr;

    // DRAINs wait in a small queue so that the next tile's LDW/WAVEs issue while a tile drains.
    // A DRAIN leaves the queue as soon as the drain engine has read every row of the previous
    // one (the hold stage carries its own write parameters), then reads its rows as they become
    // final (npu_exec_obuf_hazard): it streams behind the wave that writes them.
    // queue entry: {pack, narrow, shift, two, half rows, hs, hoff, acc, push[1:0], stride, spm_addr,
    // obuf_addr, rows, end row, split_rows, hi_rows}
    localparam DQW = 11 + 1 + OBUF_AW + 16 + 16 + 1 + 2 + 16 + 16 + OBUF_AW + 16 + RW + 16 + 16;
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
        .push(issue),
        .din({pack, narrow, shift, two, h, hs, hoff, acc, push, stride, spm, ob, rows, rows_end, split, hirows}),
        .pop(dq_pop), .dout(dq_dout), .full(full), .empty(dq_empty), .count(dq_count)
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
    wire               dq_two    = dq_dout[DQW-12];
    wire [4:0]         dq_shift  = dq_dout[DQW-11 +: 5];
    wire               dq_narrow = dq_dout[DQW-6];
    wire [4:0]         dq_pack   = dq_dout[DQW-5 +: 5];
    wire [RW-1:0]      dq_lo     = {1'b0, dq_ob};

    // Read side: the active DRAIN (dr_*), rows dr_row (and dr_row1 of a pair) next.
    reg  [15:0]  dr_left;            // rows still to read
    reg  [OBUF_AW-1:0] dr_row, dr_row1;
    reg  [RW-1:0] dr_lo, dr_end;     // its OBUF rows [lo, end)
    reg  [31:0]  dr_spm1;            // SPM word of row dr_row1
    // rows / SPM words from one read to the next: 1 / stride for split pairs, else 2 / 2 * stride
    // (1 / stride for a row alone)
    // One OBUF row per cycle: the row read in cycle t sits in the OBUF's output register (it
    // holds until the next read, so it is the hold stage) and both of its SPM words are written
    // in cycle t+1 over two write ports, low word (lanes 0..S-1) on port 0, high word
    // (S..2S-1) on port 1, each granted on its own. A word refused by a sub-bank conflict stays
    // pending alone; the next OBUF read is issued in the cycle the held row's last word is
    // written, so the stream does not bubble. The hold stage keeps its words' addresses, acc
    // flag and completion (last row, token pushes), so the next DRAIN may read meanwhile.
    // Skinny (split_rows != 0): the high word of row r goes to SPM row r + split_rows (word 0),
    // for r < hi_rows only.
    // DRAIN acc: a word written is the old SPM word plus the OBUF lanes (int32, mod 2^32; fp32 in
    // bf16). The old words come through two SPM read ports of the drain's own (ar_*: low and
    // high word, read in the same cycle; they are in different sub-banks, as the two writes),
    // each used in the cycle its data arrives (or kept if its write is refused): a row takes 2
    // cycles (read lo and hi | write lo and hi, next OBUF row) instead of 1. Own ports, not the
    // weight loader's: sharing its port (it had priority) ran a row in 3 cycles alone and in
    // ~4.8 beside a conv's LDWs, which read 2S rows every few waves.
    reg  [31:0]  hold_hiaddr, h2_hiaddr;
    reg          hold_acc, hold_last;
    reg          hold_narrow;        // the held rows' DRAIN is narrow (by dr_shift: the shift
    reg  [4:0]   hold_shift;         // of the held rows' DRAIN)
    reg  [1:0]   hold_push;
    reg  [1:0]   acc_rd;             // reads granted last cycle: [0] low word, [1] high word
    reg          acc_lo_ok, acc_hi_ok;
    reg  [WB-1:0] acc_lo_old, acc_hi_old;
    wire lo_ready = !hold_acc || acc_lo_ok || acc_rd[0];
    wire hi_ready = !hold_acc || acc_hi_ok || acc_rd[1];
    assign ar_req  = {hold_acc && hold_vld && hold_hi && !hi_ready, hold_acc && hold_vld && hold_lo && !lo_ready};
    assign ar_addr = {hold_hiaddr[SPM_AW-1:0], hold_addr[SPM_AW-1:0]};
    wire [WB-1:0] lo_old = !hold_acc ? {WB{1'b0}} : acc_lo_ok ? acc_lo_old : ar_data[0 +: WB];
    wire [WB-1:0] hi_old = !hold_acc ? {WB{1'b0}} : acc_hi_ok ? acc_hi_old : ar_data[WB +: WB];
    // the old word's lanes plus the OBUF's: OBUF lane first (the adder's operand order does not
    // change an fp32 sum; the golden model adds old + new)
    wire [2*WB-1:0] dr_sum;
    wire [2*WB-1:0] old_w = {hi_old, lo_old};
    genvar al;
    generate
        for (al = 0; al < 2*S; al = al + 1) begin : g_acc
            if (BF16 != 0) begin : g_fp32
                // a plain drain passes the lane through: +0 + x is not x for x = -0
                wire [31:0] s_f;
                npu_fp32_add u_add (.a(old_w[al*32 +: 32]), .b(ob_rd_data[al*32 +: 32]), .s(s_f));
                assign dr_sum[al*32 +: 32] = hold_acc ? s_f : ob_rd_data[al*32 +: 32];
            end else begin : g_int32
                assign dr_sum[al*32 +: 32] = ob_rd_data[al*32 +: 32] + old_w[al*32 +: 32];
            end
        end
    endgenerate
    // Two rows per cycle (plain drains; HSW/ISW waves write two OBUF rows per cycle): rows r and
    // r+1 are read together on the OBUF's two read ports and their four words go out on write
    // ports 0..3 (npu_spm's sub-bank codes keep them apart for the compiler's layouts); the pair
    // is done when all four are written. An accumulating drain stays one row at a time.
    // Packed DRAIN (pack = n; docs/isa.md "DRAIN"): pairs are split (rows r and r + h, h = rows/2:
    // the drain keeps pace with HSW/ISW waves, which write their rows in that pattern) and each
    // row feeds its own stream: segment A lanes 0..n-1 of rows [0, h), B of rows [h, rows);
    // skinny also C lanes S..S+n-1 of rows [0, h) and D of [h, rows). Segment j starts at word
    // spm_addr + j * stride (the decoder has each end on a word and fit in stride words), so with
    // a power-of-two stride the four words a cycle are in four sub-banks (npu_spm's codes), as
    // the unpacked skinny drain's. A stream's position is a lane address (word * S + lane),
    // known when its row is read; the first c = position % S lanes of its word wait in its
    // carry, so a held pair writes the whole words npu_drain_pack forms (plain: A on ports 0,
    // 1, B on 2, 3; skinny: A, B, C, D on 0..3, one word each at most) and keeps the rest.
    localparam LS = $clog2(S);
    reg          dr_pk, hold_pk, hold_pkc, h2_pkd, pk_sk;
    reg  [5:0]   dr_pn, hold_pn;     // n: lanes a row
    reg  [31:0]  dr_pa, dr_pb, dr_pc, dr_pd;          // the streams' lane addresses
    reg  [31:0]  hold_pa, hold_pb, hold_pc, hold_pd;  // (of the held pair)
    reg  [WB-1:0] pk_ca, pk_cb, pk_cc, pk_cd;         // the streams' carries
    reg  [3:0]   pk_done;            // the held pair's words written
    wire [2*WB-1:0] pk_wa, pk_wb;
    wire [WB-1:0]   pk_wc, pk_wd, pk_ra, pk_rb, pk_rc, pk_rd;
    wire [1:0]      pk_ka, pk_kb, pk_kc, pk_kd;
    npu_drain_pack #(.S(S), .MAXN(2*S-1)) u_pka (
        .carry(pk_ca), .c(hold_pa[LS-1:0]), .n(hold_pn), .a(ob_rd_data[0 +: 32*(2*S-1)]),
        .words(pk_wa), .k(pk_ka), .rest(pk_ra));
    npu_drain_pack #(.S(S), .MAXN(2*S-1)) u_pkb (
        .carry(pk_cb), .c(hold_pb[LS-1:0]), .n(h2_vld ? hold_pn : 6'd0), .a(ob_rd2_data[0 +: 32*(2*S-1)]),
        .words(pk_wb), .k(pk_kb), .rest(pk_rb));
    npu_drain_pack #(.S(S), .MAXN(S)) u_pkc (
        .carry(pk_cc), .c(hold_pc[LS-1:0]), .n(hold_pkc ? hold_pn : 6'd0), .a(ob_rd_data[WB +: WB]),
        .words(pk_wc), .k(pk_kc), .rest(pk_rc));
    npu_drain_pack #(.S(S), .MAXN(S)) u_pkd (
        .carry(pk_cd), .c(hold_pd[LS-1:0]), .n(h2_pkd ? hold_pn : 6'd0), .a(ob_rd2_data[WB +: WB]),
        .words(pk_wd), .k(pk_kd), .rest(pk_rd));
    wire [SPM_AW-1:0] pwa = hold_pa[LS +: SPM_AW];
    wire [SPM_AW-1:0] pwb = hold_pb[LS +: SPM_AW];
    wire [SPM_AW-1:0] pwc = hold_pc[LS +: SPM_AW];
    wire [SPM_AW-1:0] pwd = hold_pd[LS +: SPM_AW];
    localparam [SPM_AW-1:0] W1 = 1;
    wire [3:0]  pk_need = pk_sk ? {pk_kd != 2'd0, pk_kc != 2'd0, pk_kb != 2'd0, pk_ka != 2'd0}
                                : {pk_kb > 2'd1, pk_kb != 2'd0, pk_ka > 2'd1, pk_ka != 2'd0};
    wire [3:0]  pk_req  = (hold_vld && hold_pk) ? pk_need & ~pk_done : 4'd0;
    wire        pk_ok   = (pk_need & ~(pk_done | (pk_req & wr_gnt))) == 4'd0;
    wire [4*SPM_AW-1:0] pk_addr = pk_sk ? {pwd, pwc, pwb, pwa} : {pwb + W1, pwb, pwa + W1, pwa};
    wire [4*WB-1:0]     pk_data = pk_sk ? {pk_wd, pk_wc, pk_wb[0 +: WB], pk_wa[0 +: WB]} : {pk_wb, pk_wa};
    wire h2_done   = !h2_vld || ((!h2_lo || wr_gnt[2]) && (!h2_hi || wr_gnt[3]));
    wire hold_done = hold_vld && (!hold_lo || (lo_ready && wr_gnt[0])) && (!hold_hi || (hi_ready && wr_gnt[1]))
                  && h2_done && (!hold_pk || pk_ok);
    wire   dr_pair    = !dr_acc && dr_left[15:1] != 15'd0;
    wire   dr_step2   = dr_pair && !dr_two;
    wire   dr_rdy     = !young && !pend_a && (!dr_pair || !pend_b);
    assign ob_rd_en   = dr_act && dr_rdy && (!hold_vld || hold_done);
    assign ob_rd_addr = dr_row;
    assign ob_rd2_en   = ob_rd_en && dr_pair;
    assign ob_rd2_addr = dr_row1;
    wire   rd_last    = ob_rd_en && dr_left == (dr_pair ? 16'd2 : 16'd1);
    assign dq_pop     = !dq_empty && (!dr_act || rd_last);
    wire [31:0] dr_hioff = dr_splitm_r ? dr_hoff : 32'd1;
    assign wr_req  = {h2_vld && h2_hi, h2_vld && h2_lo,
                      hold_vld && hold_hi && hi_ready, hold_vld && hold_lo && lo_ready} | pk_req;
    assign wr_addr = hold_pk ? pk_addr : {h2_hiaddr[SPM_AW-1:0], h2_addr[SPM_AW-1:0],
                                          hold_hiaddr[SPM_AW-1:0], hold_addr[SPM_AW-1:0]};
    // narrow: each row's lanes as 16-bit lanes in its low word (the high words are not written)
    wire [WB-1:0] nw1, nw2;
    npu_drain_narrow #(.S(S), .BF16(BF16)) u_nar1 (.row(ob_rd_data), .shift(hold_shift), .word(nw1));
    npu_drain_narrow #(.S(S), .BF16(BF16)) u_nar2 (.row(ob_rd2_data), .shift(hold_shift), .word(nw2));
    assign wr_data = hold_pk ? pk_data
                   : {ob_rd2_data[WB +: WB], hold_narrow ? nw2 : ob_rd2_data[0 +: WB],
                      dr_sum[WB +: WB], hold_narrow ? nw1 : dr_sum[0 +: WB]};
    wire dr_done = hold_done && hold_last;   // the last rows of a DRAIN written
    assign ev_drain_row   = hold_done ? (h2_vld ? 2'd2 : 2'd1) : 2'd0;
    assign ev_drain_busy  = dr_act || hold_vld;
    assign ev_drain_stall = hold_vld && !hold_done;

    always @(posedge clk) begin
        if (!rst_n) begin
            dr_act <= 1'b0; hold_vld <= 1'b0; hold_lo <= 1'b0; hold_hi <= 1'b0;
            h2_vld <= 1'b0; h2_lo <= 1'b0; h2_hi <= 1'b0; hold_last <= 1'b0; hold_acc <= 1'b0;
            dr_acc <= 1'b0; dr_narrow <= 1'b0; hold_narrow <= 1'b0; acc_rd <= 2'b00; acc_lo_ok <= 1'b0; acc_hi_ok <= 1'b0;
            dr_left <= 16'd0; dr_ri <= 16'd0;
            dr_pk <= 1'b0; hold_pk <= 1'b0; hold_pkc <= 1'b0; h2_pkd <= 1'b0; pk_done <= 4'd0;
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
                hold_lo     <= !dr_pk;
                hold_hi     <= !dr_pk && !dr_narrow && (!dr_splitm_r || dr_ri < dr_hi);
                hold_pk     <= dr_pk;
                hold_pn     <= dr_pn;
                hold_pa     <= dr_pa;
                hold_pb     <= dr_pb;
                hold_pc     <= dr_pc;
                hold_pd     <= dr_pd;
                hold_pkc    <= dr_pk && dr_splitm_r && dr_ri < dr_hi;
                h2_pkd      <= dr_pk && dr_pair && dr_splitm_r && dr_ri2 < dr_hi;
                pk_sk       <= dr_splitm_r;
                dr_pa       <= dr_pa + {26'd0, dr_pn};
                dr_pb       <= dr_pb + (dr_pair ? {26'd0, dr_pn} : 32'd0);
                dr_pc       <= dr_pc + ((dr_splitm_r && dr_ri < dr_hi) ? {26'd0, dr_pn} : 32'd0);
                dr_pd       <= dr_pd + ((dr_pair && dr_splitm_r && dr_ri2 < dr_hi) ? {26'd0, dr_pn} : 32'd0);
                pk_done     <= 4'd0;
                hold_acc    <= dr_acc;
                hold_narrow <= dr_narrow;
                hold_shift  <= dr_shift;
                hold_last   <= rd_last;
                hold_push   <= dr_push;
                h2_addr     <= dr_spm1;
                h2_hiaddr   <= dr_spm1 + dr_hioff;
                h2_vld      <= dr_pair;
                h2_lo       <= dr_pair && !dr_pk;
                h2_hi       <= dr_pair && !dr_pk && !dr_narrow && (!dr_splitm_r || dr_ri2 < dr_hi);
            end else if (hold_done) begin
                hold_vld <= 1'b0;
                hold_lo  <= 1'b0;
                hold_hi  <= 1'b0;
                h2_vld   <= 1'b0;
                h2_lo    <= 1'b0;
                h2_hi    <= 1'b0;
            end else if (hold_vld) begin
                pk_done <= pk_done | (pk_req & wr_gnt);
                hold_lo <= hold_lo && !(wr_req[0] && wr_gnt[0]);
                hold_hi <= hold_hi && !(wr_req[1] && wr_gnt[1]);
                h2_lo   <= h2_lo && !wr_gnt[2];
                h2_hi   <= h2_hi && !wr_gnt[3];
            end
            if (dq_pop) begin
                dr_act      <= 1'b1;
                dr_acc      <= dq_acc;
                dr_narrow   <= dq_narrow;
                dr_pk       <= dq_pack != 5'd0;
                dr_pn       <= {1'b0, dq_pack};
                // pack: segment j at word spm + j * stride
                dr_pa       <= {16'd0, dq_spm} << LS;
                dr_pb       <= ({16'd0, dq_spm} + {16'd0, dq_stride}) << LS;
                dr_pc       <= ({16'd0, dq_spm} + {15'd0, dq_stride, 1'b0}) << LS;
                dr_pd       <= ({16'd0, dq_spm} + {15'd0, dq_stride, 1'b0} + {16'd0, dq_stride}) << LS;
                dr_shift    <= dq_shift;
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
            // packed: the words written, the lanes after them carry on to the next pair
            if (hold_done && hold_pk) begin
                pk_ca <= pk_ra;
                pk_cb <= pk_rb;
                pk_cc <= pk_rc;
                pk_cd <= pk_rd;
            end
            // accumulating drain: old words read and kept until their write is granted
            acc_rd <= ar_req & ar_gnt;
            if (ob_rd_en || hold_done) begin
                acc_lo_ok <= 1'b0;
                acc_hi_ok <= 1'b0;
            end else begin
                if (acc_rd[0]) begin acc_lo_old <= ar_data[0 +: WB]; acc_lo_ok <= 1'b1; end
                if (acc_rd[1]) begin acc_hi_old <= ar_data[WB +: WB]; acc_hi_ok <= 1'b1; end
            end
        end
    end

    assign busy      = dr_act || hold_vld || !dq_empty;
    assign progress  = hold_done;
    assign done      = dr_done;
    assign done_push = hold_push;
    assign act       = dr_act;
    assign rd_lo     = dr_lo;
    assign rd_end    = dr_end;
    assign row       = dr_row;
    assign row1      = dr_row1;
    assign head_lo   = dq_lo;
    assign head_end  = dq_end;
    assign start     = dq_pop;

    wire unused = &{1'b0, dq_count, hold_pa, hold_pb, hold_pc, hold_pd, hold_addr[31:SPM_AW], hold_hiaddr[31:SPM_AW], h2_addr[31:SPM_AW],
                    h2_hiaddr[31:SPM_AW]};

`ifdef NPU_ASSERTS
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    always @(posedge clk) if (rst_n) begin
        // SPM address bounds (issue checked them; the running addresses must agree)
        if (!hold_pk && wr_req[0] && {2'd0, hold_addr} >= SPM_WORDS34) `NPU_ASSERT_FAIL("drain low word past the SPM")
        if (!hold_pk && wr_req[1] && {2'd0, hold_hiaddr} >= SPM_WORDS34) `NPU_ASSERT_FAIL("drain high word past the SPM")
        if (!hold_pk && wr_req[2] && {2'd0, h2_addr} >= SPM_WORDS34)   `NPU_ASSERT_FAIL("drain pair low word past the SPM")
        if (!hold_pk && wr_req[3] && {2'd0, h2_hiaddr} >= SPM_WORDS34) `NPU_ASSERT_FAIL("drain pair high word past the SPM")
        // packed: every stream's word inside the SPM (the decoder checked the last segment's end)
        if (hold_pk && |pk_req && ({2'd0, hold_pa >> LS} >= SPM_WORDS34 || {2'd0, hold_pb >> LS} >= SPM_WORDS34
                                   || (pk_sk && ({2'd0, hold_pc >> LS} >= SPM_WORDS34 || {2'd0, hold_pd >> LS} >= SPM_WORDS34))))
            `NPU_ASSERT_FAIL("packed drain word past the SPM")
        if (hold_pk && hold_vld && !hold_done && pk_need == 4'd0) `NPU_ASSERT_FAIL("packed drain pair stuck with no word to write")
        if (h2_vld && (!hold_vld || hold_acc)) `NPU_ASSERT_FAIL("drain pair without its first row, or accumulating")
        if (!hold_vld && (hold_lo || hold_hi)) `NPU_ASSERT_FAIL("drain word pending without a held row")
        if (dr_act && dr_left == 16'd0)  `NPU_ASSERT_FAIL("active DRAIN without rows to read")
        if (dq_pop && dr_act && !rd_last) `NPU_ASSERT_FAIL("DRAIN started before the previous one read its rows")
    end
`endif
endmodule
`default_nettype wire
