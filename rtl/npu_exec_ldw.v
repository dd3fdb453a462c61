`default_nettype none
`include "npu_assert.vh"
// npu_exec_ldw: the weight loader of npu_exec. An LDW (issue, with its decoded fields) reads its
// rows from the SPM (read ports W and W2), sends them over the V channel into the LBUF_Vs and
// writes them into the PEs' shadow weight bank `bank`:
//   SPM -> V channel -> LBUF_V -> PE weight bank (a PE row a cycle, over the column buses)
// A full FW / VSW tile (2S rows, no core mask) is read by two row streams in parallel, unless
// the LDW is `mono`: stream A reads rows 0..S-1 for cores 0/1 on port W, stream B rows S..2S-1
// for cores 2/3 on port W2, and each V flit carries both words (row r and row S + r; cores 2/3
// take the second): the four cores preload in parallel, S flits instead of 2S (FlexSA's
// preload). A mono LDW (the monolithic 1G1C baseline) and every S-row tile use stream A alone,
// one row a flit.
// It reads the next LDW's rows while the previous waves still use the bank, and decides a core's
// rows, top row first, a row a cycle as they arrive, once no wave on the bank issued before the
// LDW is pending (wpend = early waves issued after it) and, when the bank's last rows ran in
// another mode, mode_gap of them later (bank_lmode, bank_since, from npu_exec_inject). Core k
// writes a decided row S * mode_off(mode, k) cycles later (a delay line of decisions per core: the
// row stays in its LBUF_V until then), and npu_core column c of it c cycles after that, so PE
// (r, c) of every core is written in the cycle the bank's last row leaves it, no sooner: the
// writes follow the data's wavefront across the cores and across each core, and a bank turns
// around in a cycle (docs/datapath.md "Weight banks").
// Per bank it reports whether a WAVE may issue (wok: loaded, or being loaded by the active
// LDW so that every core will hold its tile; wearly: the latter, the wave is early) and the
// mode whose layout the bank holds (bank_mode, for the issue's mode check); both registered
// (from the state of the next cycle as far as LDW completion changes it; an LDW issue changes
// them a cycle late, which no WAVE sees: the next head is in its check stages). done: the LDW
// completes this cycle (push: its token pushes).
// Two LDWs overlap: the writer (act: it writes its bank, commits, completes) and a pending one,
// issued once the writer's rows have all been requested (ready), on the other bank: the pending
// LDW reads its rows meanwhile (they queue in the LBUF_Vs behind the writer's) and becomes the
// writer when the writer completes. WAVEs issue early on either LDW's bank (each LDW counts its
// own, w_early and nx_early): the next LDW's WAVE leaves the EXEC head while that LDW is still
// pending, so the LDW after it is checked and issues as soon as the loader is ready.
module npu_exec_ldw #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    // verilator lint_off UNUSEDPARAM
    parameter SPM_WORDS = 4096       // the checks only (NPU_ASSERTS)
    // verilator lint_on UNUSEDPARAM
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  issue,
    input  wire                  bank,
    input  wire [1:0]            mode,
    input  wire [7:0]            k,
    input  wire [5:0]            klo,        // window start: rows below k_lo are zero (not read)
    input  wire [15:0]           stride,
    input  wire [3:0]            cmask,      // ISW core mask (0: every core)
    input  wire                  bhi,        // every core keeps lanes S..2S-1
    input  wire [15:0]           base,       // SPM address of row k_lo, the first row read
    input  wire [15:0]           base2,      // SPM address of row max(S, k_lo) (stream B's first)
    input  wire                  mono,       // one row a cycle (the 1G1C baseline's preload)
    input  wire [31:0]           addr,       // SPM address of row k-1 (the range check's last word; checks only)
    input  wire [1:0]            push_in,    // token pushes {next, prev}
    input  wire                  wave_early, // a WAVE issues early (on a bank an LDW in flight loads)
    input  wire                  wave_bank,  // its bank
    input  wire [3:0]            wpend,      // per bank (2 bits): waves issued, not fully injected
    input  wire [3:0]            bank_lmode, // per bank (2 bits): mode of its last injected row
    input  wire [15:0]           bank_since, // per bank (8 bits): cycles since then, less one (saturating at 2S)
    output wire [1:0]            wok,
    output wire [1:0]            wearly,
    output wire [3:0]            bank_mode,  // per bank (2 bits)
    output wire                  act,
    output wire                  ready,      // an LDW on `bank` may issue now
    output wire                  act_bank,
    output wire                  done,
    output wire                  commit,     // the early waves on the bank may inject (pulse)
    output wire                  committed,  // commit happened (until done)
    output wire [1:0]            push,
    output wire                  busy,
    output wire                  shifting,   // weights shifted this cycle (progress)
    // SPM read port W
    output wire                  rd_req,
    output wire [SPM_AW-1:0]     rd_addr,
    input  wire                  rd_gnt,
    input  wire [32*S-1:0]       rd_data,
    // SPM read port W2 (stream B)
    output wire                  rd2_req,
    output wire [SPM_AW-1:0]     rd2_addr,
    input  wire                  rd2_gnt,
    input  wire [32*S-1:0]       rd2_data,
    // V channel
    output wire                  v_vld,
    output wire [3:0]            v_gid,
    output wire [3:0]            v_half,     // NoC V endpoint halves for the head flit
    output wire [3:0]            v_word,     // NoC V endpoint words (1: the flit's second word)
    output wire [64*S-1:0]       v_data,
    input  wire                  v_rdy,
    // LBUF_Vs and PE weight banks
    input  wire [3:0]            lbv_empty,
    input  wire [4*8-1:0]        lbv_cnt,    // per core: words in the LBUF_V
    input  wire [4*S*16-1:0]     lbv_dout,
    output wire [3:0]            lbv_pop,
    output wire [4*S-1:0]        w_row,      // per core: one-hot PE row written
    output wire [3:0]            w_bank,
    output wire [4*S*16-1:0]     w_in
);
`include "npu_defs.vh"
`include "npu_mode_fn.vh"
    localparam F  = 2 * S;
    localparam WB = 32 * S;
    localparam FW_ = 7;              // counters 0..2S (S <= 64) in FW_+1 bits
    localparam [FW_:0] FC  = F[FW_:0];
    localparam [FW_:0] SC  = S[FW_:0];

    reg          ldw_act;
    reg          ldw_bank;
    reg  [3:0]   ldw_gid_r;          // 0: FW/VSW row halves; else the fixed group
    reg  [1:0]   ldw_lanes;          // {forced, high}: 0x = the mode's halves, 10 low, 11 high
    reg          ldw_pair;           // streams A and B in parallel (the reading LDW)
    reg          nx_vld, nx_bank;    // the pending LDW (issued behind the writer)
    reg  [1:0]   nx_early;           // early waves on the pending LDW's bank (issued after it)
    reg  [3:0]   nx_mask;
    reg  [1:0]   nx_push;
    reg  [FW_:0] sh_cnt [0:3];       // rows decided for each core (the next row decided)
    reg  [FW_:0] pend   [0:3];       // per core: rows decided, not yet written (its delay line)
    reg  [FW_:0] wr_cnt [0:3];       // per core: the next row written (mod S)
    reg  [1:0]   lmode_q;            // mode of the last rows decided
    reg  [FW_:0] dsince;             // cycles since the last decision, less one (saturating at 2S)
    reg  [1:0]   ldw_push;
    reg  [3:0]   loaded4 [0:1];      // per bank, per core: tile present
    reg  [1:0]   bank_mode_r [0:1];  // per bank: the mode whose layout its LDW loaded
    reg  [3:0]   ldw_mask;
    reg  [1:0]   w_early;            // early waves on the active LDW's bank (issued after it)
    reg  [1:0]   wok_q, wearly_q;

    // Rows go top-first, in the order the wave's rows reach them (cores 2/3's rows of the fused
    // column after cores 0/1's); rows < k_lo and >= k are zero words that never touch the SPM.
    // Per mode (one SPM read per row, the NoC multicasts it):
    //   FW : rows 0..2S-1; rows < S to cores {0,1}, rows >= S to {2,3}; cores 1/3 keep the high half
    //   VSW: rows 0..2S-1 like FW, every core keeps the low half (columns 0..S-1)
    //   HSW: rows 0..S-1 to all four cores; cores 1/3 keep the high half
    //   ISW: rows 0..S-1 to all four, low halves; with a core mask: to the masked cores only
    wire [3:0]   ld_mask   = (cmask != 4'd0) ? cmask : 4'b1111;
    wire         ld_full   = cmask == 4'd0 && (mode == MODE_FW || mode == MODE_VSW);
    wire         ld_pair   = ld_full && !mono;
    wire         ld_mono   = ld_full && mono;               // 2S rows on stream A, one a flit
    wire [FW_:0] ld_nrows  = ld_mono ? FC : SC;             // stream A's rows
    // Row streams: A from row 0 at the base, B (pair only) from row S at base2. Rows < k_lo and
    // >= k are zero, not read; the last row read, k-1, is at the range check's last word (addr,
    // asserted). Each SPM reader turns its stream into words in order.
    wire         a_vld, a_zero, a_rdy, b_vld, b_zero, b_rdy, a_idle, b_idle;
    wire [31:0]  a_addr, b_addr;
    wire [FW_:0] a_row, b_row;
    npu_exec_ldw_rows #(.FW_(FW_)) u_rows_a (
        .clk(clk), .rst_n(rst_n), .start(issue), .row0({(FW_+1){1'b0}}), .nrows(ld_nrows),
        .k(k), .klo(klo), .base(base), .stride(stride),
        .req_vld(a_vld), .req_addr(a_addr), .req_zero(a_zero), .req_row(a_row), .req_rdy(a_rdy)
    );
    npu_exec_ldw_rows #(.FW_(FW_)) u_rows_b (
        .clk(clk), .rst_n(rst_n), .start(issue), .row0(SC), .nrows(ld_pair ? SC : {(FW_+1){1'b0}}),
        .k(k), .klo(klo), .base(base2), .stride(stride),
        .req_vld(b_vld), .req_addr(b_addr), .req_zero(b_zero), .req_row(b_row), .req_rdy(b_rdy)
    );
    // A's flits: the fixed group (pair: all four cores; a core mask; S-row tiles), else the
    // core pair of the row (mono FW / VSW); the lanes and the pair bit travel with the flit (an
    // LDW may start while the previous one drains)
    wire [3:0]   a_gid = (ldw_gid_r != 4'd0) ? ldw_gid_r : (a_row >= SC) ? 4'b1100 : 4'b0011;
    wire [6:0]   v_tag;
    wire         fa_vld, fb_vld;
    wire [WB-1:0] fa_data, fb_data;
    wire         fb_tag;             // B's words carry no tag (unused)
    npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(7)) u_rdw (
        .clk(clk), .rst_n(rst_n),
        .req_vld(a_vld), .req_addr(a_addr[SPM_AW-1:0]), .req_zero(a_zero),
        .req_gid({ldw_pair, ldw_lanes, a_gid}), .req_rdy(a_rdy),
        .rd_req(rd_req), .rd_addr(rd_addr), .rd_gnt(rd_gnt), .rd_data(rd_data),
        .out_vld(fa_vld), .out_gid(v_tag), .out_data(fa_data), .out_rdy(v_rdy && (!v_tag[6] || fb_vld)),
        .idle(a_idle)
    );
    npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(1)) u_rdw2 (
        .clk(clk), .rst_n(rst_n),
        .req_vld(b_vld), .req_addr(b_addr[SPM_AW-1:0]), .req_zero(b_zero),
        .req_gid(1'b0), .req_rdy(b_rdy),
        .rd_req(rd2_req), .rd_addr(rd2_addr), .rd_gnt(rd2_gnt), .rd_data(rd2_data),
        .out_vld(fb_vld), .out_gid(fb_tag), .out_data(fb_data), .out_rdy(v_rdy && fa_vld && v_tag[6]),
        .idle(b_idle)
    );
    // a pair flit waits for its second word (B's words are exactly those of A's pair flits)
    assign v_vld  = fa_vld && (!v_tag[6] || fb_vld);
    assign v_data = {fb_data, fa_data};
    assign v_gid  = v_tag[3:0];
    assign v_half = v_tag[5] ? {4{v_tag[4]}} : 4'b1010;
    assign v_word = v_tag[6] ? 4'b1100 : 4'b0000;
    // the waves on its bank issued before it (pending or in the array) are done; the early waves
    // issued after it (w_early, not injected before it completes) do not count. A row decided in
    // cycle x is written into core k in cycle x + S * mode_off(wmode, k), so the first decision
    // waits S * mode_gap cycles after the bank's last injection when that ran in another mode, and
    // as long after the last decision (the previous LDW's) when that one had another mode, so no
    // core writes a row of this LDW before one of the previous (its delay line stays in order).
    wire [1:0]   wmode   = bank_mode_r[ldw_bank];     // the writer's layout
    wire [1:0]   wpend_b = ldw_bank ? wpend[3:2] : wpend[1:0];
    wire [FW_:0] since_b = ldw_bank ? bank_since[15:8] : bank_since[7:0];
    wire [1:0]   lmode_b = ldw_bank ? bank_lmode[3:2] : bank_lmode[1:0];
    function clear(input [FW_:0] since, input [1:0] gap);
        clear = gap == 2'd0 || (gap == 2'd1 && since >= SC) || since >= FC;
    endfunction
    wire bank_free = wpend_b == w_early && clear(since_b, mode_gap(lmode_b, wmode))
                  && clear(dsince, mode_gap(lmode_q, wmode));
    // Commit: the bank is free and every core holds the rest of its rows in its LBUF_V (or has
    // decided them all). From then on each core decides a row every cycle, top row first, so row
    // r of core k is written before a row injected in this cycle or later reaches it (it needs
    // 1 + S * mode_off(k) + r cycles at least): the early waves may inject before the LDW is done.
    // After the commit the decisions no longer wait for the bank (the early waves now injecting
    // are its new users).
    reg          cmt_q;
    wire [3:0]   c_rest, dec, wr;
    wire [3:0]   wr_bank;
    wire [3:0]   d_in, d_out;        // per core: a decision enters / leaves its delay line
    wire         cmt_now = ldw_act && !cmt_q && bank_free && &c_rest;
    wire         wr_ok   = cmt_q || bank_free;
    genvar c;
    generate
        for (c = 0; c < 4; c = c + 1) begin : g_shift
            wire [7:0] avail = lbv_cnt[c*8 +: 8] - {{(7-FW_){1'b0}}, pend[c]};   // rows not decided
            wire [1:0] d     = mode_off(wmode, c);
            assign c_rest[c] = sh_cnt[c] == SC || avail >= {{(7-FW_){1'b0}}, SC - sh_cnt[c]};
            assign dec[c]    = ldw_act && wr_ok && avail != 8'd0 && sh_cnt[c] < SC;
            if (c == 0) begin : g_now
                assign wr[c]      = dec[c];
                assign wr_bank[c] = ldw_bank;
                assign d_in[c]    = 1'b0;
                assign d_out[c]   = 1'b0;
                wire unused_d = &{1'b0, d};
            end else begin : g_delay
                // the decisions {valid, bank}, inserted at stage S * d - 1, out at stage 0
                localparam D = (c == 3) ? 2 * S : S;
                reg [D-1:0] dv, db;
                always @(posedge clk) begin
                    if (!rst_n) begin
                        dv <= {D{1'b0}};
                    end else begin
                        dv <= dv >> 1;
                        if (dec[c] && d == 2'd1) dv[S-1] <= 1'b1;
                        if (dec[c] && d == 2'd2) dv[D-1] <= 1'b1;
                    end
                    db <= db >> 1;
                    if (dec[c] && d == 2'd1) db[S-1] <= ldw_bank;
                    if (dec[c] && d == 2'd2) db[D-1] <= ldw_bank;
                end
                assign wr[c]      = dv[0] || (dec[c] && d == 2'd0);
                assign wr_bank[c] = dv[0] ? db[0] : ldw_bank;
                assign d_in[c]    = dec[c] && d != 2'd0;
                assign d_out[c]   = dv[0];
`ifdef NPU_ASSERTS
                // a decision enters behind every earlier one (the mode gaps above): none leaves
                // in its cycle (d = 0), none shifts into its stage (d = 1 at core 3)
                wire late = (c == 3 && d == 2'd1) ? dv[D > S ? S : 0] : 1'b0;
                always @(posedge clk) if (rst_n && dec[c] && ((d == 2'd0 && dv[0]) || late))
                    `NPU_ASSERT_FAIL("weight write delay line out of order")
`endif
            end
            assign lbv_pop[c] = wr[c];
            // the core's words arrive top row first: word j goes to row j
            assign w_row[c*S +: S] = wr[c] ? ({{(S-1){1'b0}}, 1'b1} << wr_cnt[c]) : {S{1'b0}};
            assign w_bank[c]  = wr_bank[c];
            assign w_in[c*S*16 +: S*16] = lbv_dout[c*S*16 +: S*16];
        end
    endgenerate
    wire ldw_done = ldw_act && sh_cnt[0] == SC && sh_cnt[1] == SC && sh_cnt[2] == SC && sh_cnt[3] == SC;
    // An LDW issues into the writer when there is none (or it completes now), else it is the
    // pending one: once every row of the writer has been requested, on the other bank
    assign ready = !nx_vld && !a_vld && !b_vld && (!ldw_act || ldw_done || bank != ldw_bank);
    wire   iss_w   = issue && (!ldw_act || ldw_done);
    wire   iss_n   = issue && !iss_w;
    wire   promote = ldw_done && nx_vld;
    // the writer of the next cycle as far as completion and promotion change it (an issue changes
    // wok / wearly a cycle late, which no WAVE sees: the next head is in its check stages)
    wire       wa_n = (ldw_act && !ldw_done) || promote;
    wire       wb_n = promote ? nx_bank : ldw_bank;
    wire [3:0] wm_n = promote ? nx_mask : ldw_mask;
    wire       pa_n = nx_vld && !promote;            // the pending one (an issue: a cycle late)
    // wok_q / wearly_q (issue): bank b loaded, or loading by an LDW in flight to a full cover
    genvar wb;
    generate
        for (wb = 0; wb < 2; wb = wb + 1) begin : g_wok
            wire [3:0] ld_n  = (ldw_done && ldw_bank == wb[0]) ? (loaded4[wb] | ldw_mask) : loaded4[wb];
            wire       act_n = wa_n && wb_n == wb[0];
            wire       pnd_n = pa_n && nx_bank == wb[0];
            wire       cov_n = (act_n && (ld_n | wm_n) == 4'b1111) || (pnd_n && (ld_n | nx_mask) == 4'b1111);
            always @(posedge clk) begin
                wearly_q[wb] <= rst_n && cov_n;
                wok_q[wb]    <= rst_n && ((ld_n == 4'b1111 && !act_n && !pnd_n) || cov_n);
            end
        end
    endgenerate
    wire e_wr = wave_early && ldw_act && wave_bank == ldw_bank;   // early on the writer's bank
    wire e_nx = wave_early && nx_vld && wave_bank == nx_bank;     // early on the pending one's

    integer i;
    always @(posedge clk) begin
        if (!rst_n) begin
            ldw_act <= 1'b0; loaded4[0] <= 4'b0000; loaded4[1] <= 4'b0000; cmt_q <= 1'b0;
            w_early <= 2'd0; nx_vld <= 1'b0; nx_early <= 2'd0; lmode_q <= MODE_FW; dsince <= FC;
            for (i = 0; i < 4; i = i + 1) begin sh_cnt[i] <= 0; pend[i] <= 0; wr_cnt[i] <= 0; end
        end else begin
            // the reading LDW's request tags and its bank's mode
            if (issue) begin
                ldw_pair   <= ld_pair;
                ldw_gid_r  <= ld_mono ? 4'b0000 : ld_mask;
                ldw_lanes  <= {bhi || cmask != 4'd0 || mode == MODE_VSW || mode == MODE_ISW, bhi};
                bank_mode_r[bank] <= (cmask != 4'd0) ? MODE_ISW : mode;
            end
            // per bank: the writer's cores loaded at its completion, the issued LDW's cleared
            for (i = 0; i < 2; i = i + 1)
                loaded4[i] <= (loaded4[i] | ((ldw_done && ldw_bank == i[0]) ? ldw_mask : 4'b0000))
                            & ~((issue && bank == i[0]) ? ld_mask : 4'b0000);
            // the writer: a new one (issued now or promoted from pending), else its progress
            if (iss_w || promote) begin
                ldw_act    <= 1'b1;
                cmt_q      <= 1'b0;
                w_early    <= promote ? nx_early + {1'b0, e_nx} : 2'd0;
                ldw_bank   <= iss_w ? bank : nx_bank;
                ldw_mask   <= iss_w ? ld_mask : nx_mask;
                ldw_push   <= iss_w ? push_in : nx_push;
                for (i = 0; i < 4; i = i + 1)
                    sh_cnt[i] <= (iss_w ? ld_mask[i] : nx_mask[i]) ? {(FW_+1){1'b0}} : SC;
            end else begin
                for (i = 0; i < 4; i = i + 1)
                    if (dec[i]) sh_cnt[i] <= sh_cnt[i] + 1'b1;
                if (e_wr) w_early <= w_early + 2'd1;
                if (cmt_now)    cmt_q <= 1'b1;
                if (ldw_done) begin
                    w_early <= 2'd0;
                    ldw_act <= 1'b0;
                    cmt_q   <= 1'b0;
                end
            end
            // the write side: rows in the delay lines, the row each core writes next
            for (i = 0; i < 4; i = i + 1) begin
                pend[i] <= pend[i] + {{FW_{1'b0}}, d_in[i]} - {{FW_{1'b0}}, d_out[i]};
                if (wr[i]) wr_cnt[i] <= (wr_cnt[i] == SC - 1'b1) ? {(FW_+1){1'b0}} : wr_cnt[i] + 1'b1;
            end
            if (|dec) begin
                lmode_q <= wmode;
                dsince  <= {(FW_+1){1'b0}};
            end else if (dsince < FC) begin
                dsince  <= dsince + 1'b1;
            end
            if (iss_n) begin
                nx_vld   <= 1'b1;
                nx_bank  <= bank;
                nx_mask  <= ld_mask;
                nx_push  <= push_in;
                nx_early <= 2'd0;
            end else if (promote) begin
                nx_vld   <= 1'b0;
            end else if (e_nx) begin
                nx_early <= nx_early + 2'd1;
            end
        end
    end

    assign wok       = wok_q;
    assign wearly    = wearly_q;
    assign bank_mode = {bank_mode_r[1], bank_mode_r[0]};
    assign act       = ldw_act;
    assign act_bank  = ldw_bank;
    assign done      = ldw_done;
    assign commit    = cmt_now;
    assign committed = cmt_q;
    assign push      = ldw_push;
    assign busy      = ldw_act || nx_vld || !a_idle || !b_idle || |{pend[3], pend[2], pend[1]};
    assign shifting  = |dec;

    // addr, b_row, lbv_empty and the addresses' high bits: the checks only
    wire unused = &{1'b0, addr, b_row, a_addr[31:SPM_AW], b_addr[31:SPM_AW], fb_tag, lbv_empty};

`ifdef NPU_ASSERTS
    integer ax;
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    reg ldw_iss_q;
    reg [31:0] ldw_last;             // the range check's last word, latched at the issue
    reg [8:0]  ldw_klast;            // row k-1
    always @(posedge clk) ldw_iss_q <= issue;
    always @(posedge clk) if (issue) begin ldw_last <= addr; ldw_klast <= {1'b0, k} - 9'd1; end
    wire [8:0] a_row9 = {{(8-FW_){1'b0}}, a_row}, b_row9 = {{(8-FW_){1'b0}}, b_row};
    always @(posedge clk) if (rst_n) begin
        if ((a_vld || b_vld) && !ldw_act && !nx_vld) `NPU_ASSERT_FAIL("LDW row requested with no LDW active")
        if (issue && !ready)              `NPU_ASSERT_FAIL("LDW issued while the loader is not ready")
        if (nx_vld && (!ldw_act || nx_bank == ldw_bank)) `NPU_ASSERT_FAIL("pending LDW without a writer on the other bank")
        if (b_vld && !ldw_pair)           `NPU_ASSERT_FAIL("LDW stream B requested outside a pair load")
        if ((lbv_pop & lbv_empty) != 4'd0) `NPU_ASSERT_FAIL("LBUF_V popped while empty")
        if (|dec && !bank_free && !cmt_q) `NPU_ASSERT_FAIL("weights decided for a bank in use")
        if (wave_early && !e_wr && !e_nx)  `NPU_ASSERT_FAIL("early WAVE on a bank no LDW in flight loads")
        if (ldw_done && !cmt_q && !cmt_now)   `NPU_ASSERT_FAIL("LDW done without a commit")
        // the registered bank states (issue) agree with the LDW state, except the cycle after an
        // LDW issued (no WAVE is past its check stages then)
        if (!ldw_iss_q) for (ax = 0; ax < 2; ax = ax + 1)
            if (wok_q[ax] != ((loaded4[ax] == 4'b1111 && !(ldw_act && ldw_bank == ax[0]) && !(nx_vld && nx_bank == ax[0]))
                              || (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111)
                              || (nx_vld && nx_bank == ax[0] && (loaded4[ax] | nx_mask) == 4'b1111))
                || wearly_q[ax] != ((ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111)
                                    || (nx_vld && nx_bank == ax[0] && (loaded4[ax] | nx_mask) == 4'b1111)))
                `NPU_ASSERT_FAIL("registered bank state differs from the LDW state")
        if ((a_vld && !a_zero && {2'd0, a_addr} >= SPM_WORDS34)
            || (b_vld && !b_zero && {2'd0, b_addr} >= SPM_WORDS34))
            `NPU_ASSERT_FAIL("LDW address past the SPM")
        if ((a_vld && !a_zero && a_row9 == ldw_klast && a_addr != ldw_last)
            || (b_vld && !b_zero && b_row9 == ldw_klast && b_addr != ldw_last))
            `NPU_ASSERT_FAIL("LDW's last row read is not at the range check's last word")
    end
`endif
endmodule
`default_nettype wire
