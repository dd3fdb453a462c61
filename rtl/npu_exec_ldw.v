`default_nettype none
`include "npu_assert.vh"
// npu_exec_ldw: the weight loader of npu_exec. An LDW (issue, with its decoded fields) reads its
// rows from the SPM (read port W, through npu_exec_drain's port sharing), sends them over the V
// channel into the LBUF_Vs and shifts them into the PEs' shadow weight bank `bank`:
//   SPM -> V channel -> LBUF_V -> PE weight bank (column shift chains)
// It reads the next LDW's rows while the previous waves still use the bank, but shifts only
// when no wave on the bank issued before the LDW is pending or in the array (wpend = early
// waves issued after it, bank_idle: no rows of the bank in flight; from npu_exec_inject).
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
    input  wire [31:0]           addr,       // SPM address of row k-1 (the range check's last word)
    input  wire [1:0]            push_in,    // token pushes {next, prev}
    input  wire                  wave_early, // a WAVE issues early on the active LDW's bank
    input  wire [3:0]            wpend,      // per bank (2 bits): waves issued, not fully injected
    input  wire [1:0]            bank_idle,  // per bank: no rows in the array
    output wire [1:0]            wok,
    output wire [1:0]            wearly,
    output wire [3:0]            bank_mode,  // per bank (2 bits)
    output wire                  act,
    output wire                  act_bank,
    output wire                  done,
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
    input  wire [4*S*16-1:0]     lbv_dout,
    output wire [3:0]            lbv_pop,
    output wire [3:0]            w_shift,
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
    reg  [FW_:0] ldw_i;              // rows requested so far (bottom row first)
    reg  [FW_:0] sh_cnt [0:3];       // words shifted into each core
    reg  [1:0]   ldw_push;
    reg  [3:0]   loaded4 [0:1];      // per bank, per core: tile present
    reg  [1:0]   bank_mode_r [0:1];  // per bank: the mode whose layout its LDW loaded
    reg  [3:0]   ldw_mask;
    reg  [1:0]   w_early;            // early waves on the active LDW's bank (issued after it)
    reg  [1:0]   wok_q, wearly_q;

    // Rows go bottom-first so that after S shifts each core's chain holds its rows in place;
    // rows >= k are zero words that never touch the SPM. Per mode (one SPM read per row, the
    // NoC multicasts it):
    //   FW : rows 2S-1..0; rows >= S to cores {2,3}, rows < S to {0,1}; cores 1/3 keep the high half
    //   VSW: rows 2S-1..0 like FW, every core keeps the low half (columns 0..S-1)
    //   HSW: rows S-1..0 to all four cores; cores 1/3 keep the high half
    //   ISW: rows S-1..0 to all four, low halves; with a core mask: to the masked cores only
    wire [3:0]   ld_mask   = (cmask != 4'd0) ? cmask : 4'b1111;
    wire         ld_full   = cmask == 4'd0 && (mode == MODE_FW || mode == MODE_VSW);
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
    // check's last word (addr, registered: no adder on the issue path), and steps down by
    // the stride after each row read (rows >= k and < k_lo are zero, not read).
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
    wire bank_free = wpend_b == w_early && bank_idle[ldw_bank];
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
            if (issue) begin
                ldw_act    <= 1'b1;
                ldw_bank   <= bank;
                ldw_k      <= k;
                ldw_stride <= stride;
                ldw_nrows  <= ld_nrows;
                ldw_mask   <= ld_mask;
                ldw_gid_r  <= ld_full ? 4'b0000 : ld_mask;
                ldw_lanes  <= {bhi || cmask != 4'd0 || mode == MODE_VSW || mode == MODE_ISW, bhi};
                ldw_klo    <= klo;
                ldw_addr   <= addr;
                ldw_i      <= 0;
                ldw_more   <= 1'b1;
                ldw_zero   <= {{(8-FW_){1'b0}}, ld_nrows - 1'b1} >= {1'b0, k}
                           || {{(8-FW_){1'b0}}, ld_nrows - 1'b1} < {3'd0, klo};
                ldw_push   <= push_in;
                loaded4[bank]  <= loaded4[bank] & ~ld_mask;
                bank_mode_r[bank] <= (cmask != 4'd0) ? MODE_ISW : mode;
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
                if (wave_early) w_early <= w_early + 2'd1;
                if (ldw_done) begin
                    w_early <= 2'd0;
                    ldw_act <= 1'b0;
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
    assign push      = ldw_push;
    assign busy      = ldw_act || !rdw_idle;
    assign shifting  = |lbv_pop;

    wire unused = &{1'b0, ldw_rdy};

`ifdef NPU_ASSERTS
    integer ax;
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    reg ldw_iss_q;
    always @(posedge clk) ldw_iss_q <= issue;
    always @(posedge clk) if (rst_n) begin
        if (ldw_act && (ldw_more != (ldw_i < ldw_nrows)
                        || (ldw_more && ldw_zero != ({{(8-FW_){1'b0}}, ldw_row} >= {1'b0, ldw_k}
                                                     || {{(8-FW_){1'b0}}, ldw_row} < {3'd0, ldw_klo}))))
            `NPU_ASSERT_FAIL("registered LDW row state differs")
        if ((lbv_pop & lbv_empty) != 4'd0) `NPU_ASSERT_FAIL("LBUF_V popped while empty")
        if (|lbv_pop && !bank_free)     `NPU_ASSERT_FAIL("weights shifted into a bank in use")
        // the registered bank states (issue) agree with the LDW state, except the cycle after an
        // LDW issued (no WAVE is past its check stages then)
        if (!ldw_iss_q) for (ax = 0; ax < 2; ax = ax + 1)
            if (wok_q[ax] != ((loaded4[ax] == 4'b1111 && !(ldw_act && ldw_bank == ax[0]))
                              || (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111))
                || wearly_q[ax] != (ldw_act && ldw_bank == ax[0] && (loaded4[ax] | ldw_mask) == 4'b1111))
                `NPU_ASSERT_FAIL("registered bank state differs from the LDW state")
        if (ldw_req && !ldw_zero && {2'd0, ldw_addr} >= SPM_WORDS34)
            `NPU_ASSERT_FAIL("LDW address past the SPM")
    end
`endif
endmodule
`default_nettype wire
