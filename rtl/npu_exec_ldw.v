`default_nettype none
`include "npu_assert.vh"
// npu_exec_ldw: the weight loader of npu_exec. An LDW (issue, with its decoded fields) reads its
// rows from the SPM (read port W, through npu_exec_drain's port sharing), sends them over the V
// channel into the LBUF_Vs and shifts them into the PEs' shadow weight bank `bank`:
//   SPM -> V channel -> LBUF_V -> PE weight bank (a PE row a cycle, over the column buses)
// It reads the next LDW's rows while the previous waves still use the bank, and writes a core's
// rows into the bank, top row first, a row a cycle as they arrive, once no wave on the bank
// issued before the LDW is pending (wpend = early waves issued after it) and the bank's last rows
// have passed every PE of row 0 (bank_clr, from npu_exec_inject): row r is then written no
// earlier than the last use of row r, so the write follows the data's wavefront.
// Per bank it reports whether a WAVE may issue (wok: loaded, or being loaded by the active
// LDW so that every core will hold its tile; wearly: the latter, the wave is early) and the
// mode whose layout the bank holds (bank_mode, for the issue's mode check); both registered
// (from the state of the next cycle as far as LDW completion changes it; an LDW issue changes
// them a cycle late, which no WAVE sees: the next head is in its check stages). done: the LDW
// completes this cycle (push: its token pushes). One LDW at a time (issue only when !act).
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
    input  wire [31:0]           addr,       // SPM address of row k-1 (the range check's last word; checks only)
    input  wire [1:0]            push_in,    // token pushes {next, prev}
    input  wire                  wave_early, // a WAVE issues early on the active LDW's bank
    input  wire [3:0]            wpend,      // per bank (2 bits): waves issued, not fully injected
    input  wire [1:0]            bank_clr,   // per bank: its rows have passed every PE of row 0
    output wire [1:0]            wok,
    output wire [1:0]            wearly,
    output wire [3:0]            bank_mode,  // per bank (2 bits)
    output wire                  act,
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
    // V channel
    output wire                  v_vld,
    output wire [3:0]            v_gid,
    output wire [3:0]            v_half,     // NoC V endpoint halves for the head flit
    output wire [32*S-1:0]       v_data,
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
    localparam F  = 2 * S;
    localparam WB = 32 * S;
    localparam FW_ = 7;              // counters 0..2S (S <= 64) in FW_+1 bits
    localparam [FW_:0] FC  = F[FW_:0];
    localparam [FW_:0] SC  = S[FW_:0];

    reg          ldw_act;
    reg          ldw_bank;
    reg  [7:0]   ldw_k;
    reg  [5:0]   ldw_klo;            // rows below k_lo are zero (not read)
    reg  [3:0]   ldw_gid_r;          // 0: FW/VSW row halves; else the fixed group
    reg  [1:0]   ldw_lanes;          // {forced, high}: 0x = the mode's halves, 10 low, 11 high
    reg  [FW_:0] ldw_nrows;          // rows sent: 2S (FW, VSW) or S
    reg  [31:0]  ldw_addr;           // running SPM address of the row being requested
    reg  [15:0]  ldw_stride;
    reg  [FW_:0] ldw_i;              // rows requested so far (top row first)
    reg  [FW_:0] sh_cnt [0:3];       // rows written into each core (the next row written)
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
    wire [FW_:0] ld_nrows  = ld_full ? FC : SC;
    wire [FW_:0] ldw_row   = ldw_i;
    // "more rows" and "this row is a zero row" are registered (updated with ldw_i), so the SPM
    // request and its grant, which gate ldw_addr/ldw_i, follow no compare
    reg          ldw_more, ldw_zero;
    wire         ldw_req   = ldw_act && ldw_more;
    wire         ldw_rdy;
    wire         rdw_idle;
    // The running address is that of the next nonzero row read: it starts at the base (row
    // k_lo) and steps up by the stride after each row read (rows < k_lo and >= k are zero, not
    // read); the last row read, k-1, is at the range check's last word (addr, asserted).
    wire [3:0]   ldw_gid   = (ldw_gid_r != 4'd0) ? ldw_gid_r :
                             (ldw_row >= SC) ? 4'b1100 : 4'b0011;
    wire [5:0]   v_tag;
    npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(6)) u_rdw (
        .clk(clk), .rst_n(rst_n),
        .req_vld(ldw_req), .req_addr(ldw_addr[SPM_AW-1:0]), .req_zero(ldw_zero),
        .req_gid({ldw_lanes, ldw_gid}), .req_rdy(ldw_rdy),
        .rd_req(rd_req), .rd_addr(rd_addr), .rd_gnt(rd_gnt), .rd_data(rd_data),
        .out_vld(v_vld), .out_gid(v_tag), .out_data(v_data), .out_rdy(v_rdy), .idle(rdw_idle)
    );
    assign v_gid  = v_tag[3:0];
    // the lane choice travels with the flit (an LDW may start while the previous one drains)
    assign v_half = v_tag[5] ? {4{v_tag[4]}} : 4'b1010;
    // the waves on its bank issued before it (pending or in the array) are done; the early waves
    // issued after it (w_early, not injected before it completes) do not count
    wire [1:0] wpend_b  = ldw_bank ? wpend[3:2] : wpend[1:0];
    wire bank_free = wpend_b == w_early && bank_clr[ldw_bank];
    // Commit: the bank is free and every core holds the rest of its rows in its LBUF_V (or has
    // written them all). From then on each core writes a row every cycle, top row first, so row
    // r of a core is written before a row injected in this cycle or later reaches it (it needs
    // 1 + r cycles at least): the early waves may inject before the LDW is done. After the commit
    // the writes no longer wait for the bank (the early waves now injecting are its new users).
    reg          cmt_q;
    wire [3:0]   c_rest;
    wire         cmt_now = ldw_act && !cmt_q && bank_free && &c_rest;
    wire         wr_ok   = cmt_q || bank_free;
    genvar c;
    generate
        for (c = 0; c < 4; c = c + 1) begin : g_shift
            assign c_rest[c]  = sh_cnt[c] == SC || lbv_cnt[c*8 +: 8] >= SC - sh_cnt[c];
            assign lbv_pop[c] = ldw_act && wr_ok && !lbv_empty[c] && sh_cnt[c] < SC;
            // the core's words arrive top row first: word j goes to row j
            assign w_row[c*S +: S] = lbv_pop[c] ? ({{(S-1){1'b0}}, 1'b1} << sh_cnt[c]) : {S{1'b0}};
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
            ldw_act <= 1'b0; loaded4[0] <= 4'b0000; loaded4[1] <= 4'b0000; cmt_q <= 1'b0;
            w_early <= 2'd0;
            ldw_i <= 0;
            for (i = 0; i < 4; i = i + 1) sh_cnt[i] <= 0;
        end else begin
            if (issue) begin
                ldw_act    <= 1'b1;
                cmt_q      <= 1'b0;
                ldw_bank   <= bank;
                ldw_k      <= k;
                ldw_stride <= stride;
                ldw_nrows  <= ld_nrows;
                ldw_mask   <= ld_mask;
                ldw_gid_r  <= ld_full ? 4'b0000 : ld_mask;
                ldw_lanes  <= {bhi || cmask != 4'd0 || mode == MODE_VSW || mode == MODE_ISW, bhi};
                ldw_klo    <= klo;
                ldw_addr   <= {16'd0, base};
                ldw_i      <= 0;
                ldw_more   <= 1'b1;
                ldw_zero   <= klo != 6'd0;   // row 0 (k >= 1: an LDW with k = 0 is BAD_DESC)
                ldw_push   <= push_in;
                loaded4[bank]  <= loaded4[bank] & ~ld_mask;
                bank_mode_r[bank] <= (cmask != 4'd0) ? MODE_ISW : mode;
                for (i = 0; i < 4; i = i + 1) sh_cnt[i] <= ld_mask[i] ? {(FW_+1){1'b0}} : SC;
            end else begin
                if (ldw_req && ldw_rdy) begin
                    ldw_i    <= ldw_i + 1'b1;
                    if (!ldw_zero) ldw_addr <= ldw_addr + {16'd0, ldw_stride};
                    ldw_more <= ldw_i + 1'b1 < ldw_nrows;
                    ldw_zero <= {{(8-FW_){1'b0}}, ldw_row + 1'b1} >= {1'b0, ldw_k}
                             || {{(8-FW_){1'b0}}, ldw_row + 1'b1} < {3'd0, ldw_klo};
                end
                for (i = 0; i < 4; i = i + 1)
                    if (lbv_pop[i]) sh_cnt[i] <= sh_cnt[i] + 1'b1;
                if (wave_early) w_early <= w_early + 2'd1;
                if (cmt_now)    cmt_q <= 1'b1;
                if (ldw_done) begin
                    w_early <= 2'd0;
                    ldw_act <= 1'b0;
                    cmt_q   <= 1'b0;
                    loaded4[ldw_bank]  <= loaded4[ldw_bank] | ldw_mask;
                end
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
    assign busy      = ldw_act || !rdw_idle;
    assign shifting  = |lbv_pop;

    wire unused = &{1'b0, ldw_rdy, addr};   // addr: the checks only

`ifdef NPU_ASSERTS
    integer ax;
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    reg ldw_iss_q;
    reg [31:0] ldw_last;             // the range check's last word, latched at the issue
    always @(posedge clk) ldw_iss_q <= issue;
    always @(posedge clk) if (issue) ldw_last <= addr;
    always @(posedge clk) if (rst_n) begin
        if (ldw_act && (ldw_more != (ldw_i < ldw_nrows)
                        || (ldw_more && ldw_zero != ({{(8-FW_){1'b0}}, ldw_row} >= {1'b0, ldw_k}
                                                     || {{(8-FW_){1'b0}}, ldw_row} < {3'd0, ldw_klo}))))
            `NPU_ASSERT_FAIL("registered LDW row state differs")
        if ((lbv_pop & lbv_empty) != 4'd0) `NPU_ASSERT_FAIL("LBUF_V popped while empty")
        if (|lbv_pop && !bank_free && !cmt_q) `NPU_ASSERT_FAIL("weights written into a bank in use")
        if (ldw_done && !cmt_q && !cmt_now)   `NPU_ASSERT_FAIL("LDW done without a commit")
        // the registered bank states (issue) agree with the LDW state, except the cycle after an
        // LDW issued (no WAVE is past its check stages then)
        if (!ldw_iss_q) for (ax = 0; ax < 2; ax = ax + 1)
            if (wok_q[ax] != ((loaded4[ax] == 4'b1111 && !(ldw_act && ldw_bank == ax[0]))
                              || (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111))
                || wearly_q[ax] != (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111))
                `NPU_ASSERT_FAIL("registered bank state differs from the LDW state")
        if (ldw_req && !ldw_zero && {2'd0, ldw_addr} >= SPM_WORDS34)
            `NPU_ASSERT_FAIL("LDW address past the SPM")
        if (ldw_req && !ldw_zero && {1'b0, ldw_row} == {1'b0, ldw_k} - 9'd1 && ldw_addr != ldw_last)
            `NPU_ASSERT_FAIL("LDW's last row read is not at the range check's last word")
    end
`endif
endmodule
`default_nettype wire
