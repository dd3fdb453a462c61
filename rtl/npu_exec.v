`default_nettype none
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
// This issue runs mode FW only; other modes are rejected with BAD_DESC until the FlexSA modes land.
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
    output wire                  rda_req,
    output wire [SPM_AW-1:0]     rda_addr,
    input  wire                  rda_gnt,
    input  wire [32*S-1:0]       rda_data,
    output wire                  rdw_req,
    output wire [SPM_AW-1:0]     rdw_addr,
    input  wire                  rdw_gnt,
    input  wire [32*S-1:0]       rdw_data,
    output wire                  wr_req,
    output wire [SPM_AW-1:0]     wr_addr,
    output wire [32*S-1:0]       wr_data,
    input  wire                  wr_gnt,
    // NoC sources
    output wire                  h_vld,
    output wire [3:0]            h_gid,
    output wire [32*S-1:0]       h_data,
    input  wire                  h_rdy,
    output wire                  v_vld,
    output wire [3:0]            v_gid,
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
    // OBUF
    output wire [2*S-1:0]        ob_wr_en,
    output wire [2*S*OBUF_AW-1:0] ob_wr_addr,
    output wire [2*S-1:0]        ob_wr_acc,
    output wire                  ob_rd_en,
    output wire [OBUF_AW-1:0]    ob_rd_addr,
    input  wire [2*S*32-1:0]     ob_rd_data,
    // counter events
    output wire [3:0]            ev_busy,      // per core: a valid row entered
    output wire [3:0]            ev_stall,     // per core: wave waiting for its LBUF_H
    output wire [4*16-1:0]       ev_macs,      // per core: useful MACs this cycle
    output wire [3:0]            ev_wave,      // one-hot mode of a WAVE issued this cycle
    output wire [3:0]            ev_row,       // one-hot mode of a row injected this cycle
    output wire                  ev_wait_tok,
    output wire                  ev_wait_weights,
    output wire                  ev_wait_obuf,
    output wire                  ev_wait_unit,
    output wire [7:0]            ev_obuf_writes,
    output wire                  ev_drain_row
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
    localparam [15:0] S16  = S[15:0];

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
    wire [15:0] f_w2lo    = q_insn[79:64];    // DRAIN spm_addr
    wire [15:0] f_w2hi    = q_insn[95:80];    // WAVE obuf_addr, DRAIN spm_stride

    wire is_ldw   = op == OP_LDW;
    wire is_wave  = op == OP_WAVE;
    wire is_drain = op == OP_DRAIN;
    wire is_sync  = op == OP_SYNC_E;

    // last address touched = base + (count-1)*stride, in wide arithmetic
    wire [15:0] ldw_kminus1   = {8'd0, f_k} - 16'd1;
    wire [15:0] cnt_minus1    = f_cnt - 16'd1;
    wire [31:0] ldw_prod      = {16'd0, ldw_kminus1} * {16'd0, f_w1hi};
    wire [31:0] wave_prod     = {16'd0, cnt_minus1} * {16'd0, f_w1hi};
    wire [31:0] dr_prod       = {16'd0, cnt_minus1} * {16'd0, f_w2hi};
    wire [33:0] ldw_last_spm  = {18'd0, f_w1lo} + {2'd0, ldw_prod};
    wire [33:0] wave_last_spm = {18'd0, f_w1lo} + {2'd0, wave_prod};
    wire [33:0] dr_last_spm   = {18'd0, f_w2lo} + {2'd0, dr_prod} + 34'd1;
    // OBUF range: a wave or drain stays inside one half (the unit of double buffering)
    localparam HB = OBUF_AW - 1;     // half bit
    wire [16:0] wave_obuf_end = {1'b0, f_w2hi} + {1'b0, f_cnt};
    wire [16:0] dr_obuf_end   = {1'b0, f_w1lo} + {1'b0, f_cnt};
    wire [16:0] wave_in_half  = ({1'b0, f_w2hi} % OBUF_ROWS17) + {1'b0, f_cnt};
    wire [16:0] dr_in_half    = ({1'b0, f_w1lo} % OBUF_ROWS17) + {1'b0, f_cnt};

    reg  [7:0]  chk_code;
    reg  [31:0] chk_info;
    always @(*) begin
        chk_code = ERR_NONE;
        chk_info = 32'd0;
        if (is_ldw) begin
            if (f_k == 8'd0 || f_k > F8 || f_n == 8'd0 || f_n > F8 || f_mode != MODE_FW) begin
                chk_code = ERR_BAD_DESC;
            end else if (ldw_last_spm >= SPM_WORDS34) begin
                chk_code = ERR_SPM_ADDR; chk_info = ldw_last_spm[31:0];
            end
        end else if (is_wave) begin
            if (f_cnt == 16'd0 || f_k == 8'd0 || f_k > F8 || f_n == 8'd0 || f_n > F8
                || f_mode != MODE_FW) begin
                chk_code = ERR_BAD_DESC;
            end else if (wave_last_spm >= SPM_WORDS34) begin
                chk_code = ERR_SPM_ADDR; chk_info = wave_last_spm[31:0];
            end else if (wave_obuf_end > 2 * OBUF_ROWS17 || wave_in_half > OBUF_ROWS17) begin
                chk_code = ERR_OBUF_ADDR; chk_info = {15'd0, wave_obuf_end};
            end
        end else if (is_drain) begin
            if (f_cnt == 16'd0) begin
                chk_code = ERR_BAD_DESC;
            end else if (dr_last_spm >= SPM_WORDS34) begin
                chk_code = ERR_SPM_ADDR; chk_info = dr_last_spm[31:0];
            end else if (dr_obuf_end > 2 * OBUF_ROWS17 || dr_in_half > OBUF_ROWS17) begin
                chk_code = ERR_OBUF_ADDR; chk_info = {15'd0, dr_obuf_end};
            end
        end else if (!is_sync) begin
            chk_code = ERR_ILLEGAL_OPCODE; chk_info = {24'd0, op};
        end
    end

    // ------------------------------------------------------------------ unit state
    // weight loader
    reg          ldw_act;
    reg          ldw_bank;
    reg  [7:0]   ldw_k;
    reg  [31:0]  ldw_addr;           // running SPM address of the row being requested
    reg  [15:0]  ldw_stride;
    reg  [FW_:0] ldw_i;              // rows requested so far (2S rows, bottom row first)
    reg  [FW_:0] sh_cnt [0:3];       // words shifted into each core
    reg  [1:0]   ldw_push;
    reg  [1:0]   loaded, ldw_pend;
    // wave queue: two entries shared by the streamer (SPM side) and the injector (array side)
    reg  [1:0]   wq_cnt, wq_unstreamed;
    reg          wq_wr, wq_st, wq_in;
    reg  [1:0]   wq_mode [0:1];
    reg          wq_bank [0:1];
    reg          wq_acc  [0:1];
    reg  [15:0]  wq_m    [0:1];
    reg  [15:0]  wq_spm  [0:1];
    reg  [15:0]  wq_str  [0:1];
    reg  [OBUF_AW-1:0] wq_ob [0:1];
    reg  [63:0]  wq_macs [0:1];
    reg  [15:0]  st_i, in_i;
    reg  [31:0]  st_off;
    reg  [1:0]   wpend [0:1];        // per bank: waves issued, not fully injected
    reg  [15:0]  infl  [0:1];        // per bank: rows in the array
    reg  [1:0]   hpend [0:1];        // per OBUF half: waves issued, not fully injected
    reg  [15:0]  hinfl [0:1];        // per OBUF half: rows in the array
    // drain
    reg          dr_act, dr_half;
    reg  [15:0]  dr_rows, dr_ri, dr_wi;
    reg  [OBUF_AW-1:0] dr_ob;
    reg  [31:0]  dr_spm_next, hold_addr;
    reg  [15:0]  dr_stride;
    reg  [1:0]   dr_push;
    reg          rd_infl, hold_vld, hold_hi;
    reg  [2*S*32-1:0] hold;

    wire         dq_full;
    reg  [2:0]   dpend [0:1];        // per OBUF half: DRAINs queued or draining

    // completion records of issued waves (in order; rows retire in order)
    wire         cf_full, cf_empty;
    wire [1:0]   cf_dout;
    wire [3:0]   cf_count;

    // ------------------------------------------------------------------ issue
    wire tokens_ok = (!t_pop_prv || l2e_avail) && (!t_pop_nxt || s2e_avail);
    wire wave_half = f_w2hi[HB];
    wire drain_half = f_w1lo[HB];
    wire wave_w_ok  = loaded[f_bank] && !ldw_pend[f_bank];
    wire wave_ob_ok = dpend[wave_half] == 3'd0;
    wire unit_ok = is_ldw   ? !ldw_act :
                   is_wave  ? (wq_cnt != 2'd2 && !cf_full) :
                   is_drain ? !dq_full : 1'b1;
    wire hazard_ok = is_wave ? (wave_w_ok && wave_ob_ok) : 1'b1;
    wire bad = chk_code != ERR_NONE;
    wire can_issue = run && q_vld && !bad && tokens_ok && unit_ok && hazard_ok;
    wire issue_ldw   = can_issue && is_ldw;
    wire issue_wave  = can_issue && is_wave;
    wire issue_drain = can_issue && is_drain;
    wire issue_sync  = can_issue && is_sync;
    assign q_pop   = can_issue;
    assign pop_l2e = can_issue && t_pop_prv;
    assign pop_s2e = can_issue && t_pop_nxt;

    assign err      = run && q_vld && bad;
    assign err_code = chk_code;
    assign err_info = chk_info;
    assign err_pc   = q_pc;

    reg [31:0] pc_q;
    always @(posedge clk) begin
        if (!rst_n) pc_q <= 32'd0;
        else if (q_vld) pc_q <= q_pc;
    end
    assign pc_cur = q_vld ? q_pc : pc_q;

    assign ev_wait_tok     = run && q_vld && !bad && !tokens_ok;
    assign ev_wait_weights = run && q_vld && tokens_ok && is_wave && !wave_w_ok;
    assign ev_wait_obuf    = run && q_vld && tokens_ok && is_wave && wave_w_ok && !wave_ob_ok;
    assign ev_wait_unit    = run && q_vld && tokens_ok && hazard_ok && !unit_ok;
    assign ev_wave         = issue_wave ? (4'b0001 << f_mode) : 4'b0000;

    // ------------------------------------------------------------------ weight loader
    // Rows go bottom-first (row 2S-1 down to 0) so that after S shifts each core's chain holds
    // its rows in place; rows >= k are zero words that never touch the SPM.
    wire [FW_:0] ldw_row  = FC - 1'b1 - ldw_i;
    wire         ldw_zero = {{(8-FW_){1'b0}}, ldw_row} >= {1'b0, ldw_k};
    wire         ldw_req  = ldw_act && ldw_i < FC;
    wire         ldw_rdy;
    wire         rdw_idle;
    wire [3:0]   ldw_gid  = (ldw_row >= SC) ? 4'b1100 : 4'b0011;   // bottom cores / top cores
    npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(4)) u_rdw (
        .clk(clk), .rst_n(rst_n),
        .req_vld(ldw_req), .req_addr(ldw_addr[SPM_AW-1:0]), .req_zero(ldw_zero),
        .req_gid(ldw_gid), .req_rdy(ldw_rdy),
        .rd_req(rdw_req), .rd_addr(rdw_addr), .rd_gnt(rdw_gnt), .rd_data(rdw_data),
        .out_vld(v_vld), .out_gid(v_gid), .out_data(v_data), .out_rdy(v_rdy), .idle(rdw_idle)
    );
    wire bank_free = wpend[ldw_bank] == 2'd0 && infl[ldw_bank] == 16'd0;
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

    integer i;
    always @(posedge clk) begin
        if (!rst_n) begin
            ldw_act <= 1'b0; loaded <= 2'b00; ldw_pend <= 2'b00; ldw_i <= 0;
            for (i = 0; i < 4; i = i + 1) sh_cnt[i] <= 0;
        end else begin
            if (issue_ldw) begin
                ldw_act    <= 1'b1;
                ldw_bank   <= f_bank;
                ldw_k      <= f_k;
                ldw_stride <= f_w1hi;
                ldw_addr   <= {16'd0, f_w1lo} + {16'd0, f_w1hi} * (F - 1);
                ldw_i      <= 0;
                ldw_push   <= {t_psh_nxt, t_psh_prv};
                loaded[f_bank]   <= 1'b0;
                ldw_pend[f_bank] <= 1'b1;
                for (i = 0; i < 4; i = i + 1) sh_cnt[i] <= 0;
            end else begin
                if (ldw_req && ldw_rdy) begin
                    ldw_i    <= ldw_i + 1'b1;
                    ldw_addr <= ldw_addr - {16'd0, ldw_stride};
                end
                for (i = 0; i < 4; i = i + 1)
                    if (lbv_pop[i]) sh_cnt[i] <= sh_cnt[i] + 1'b1;
                if (ldw_done) begin
                    ldw_act <= 1'b0;
                    loaded[ldw_bank]   <= 1'b1;
                    ldw_pend[ldw_bank] <= 1'b0;
                end
            end
        end
    end

    // ------------------------------------------------------------------ wave engine
    // MACs per core for one row of an FW wave: core (row half, column half) of the valid k x n.
    wire [15:0] k_lo = (f_k > S8) ? S16 : {8'd0, f_k};
    wire [15:0] k_hi = (f_k > S8) ? {8'd0, f_k} - S16 : 16'd0;
    wire [15:0] n_lo = (f_n > S8) ? S16 : {8'd0, f_n};
    wire [15:0] n_hi = (f_n > S8) ? {8'd0, f_n} - S16 : 16'd0;
    wire [63:0] macs_fw = {k_hi * n_hi, k_hi * n_lo, k_lo * n_hi, k_lo * n_lo};

    // streamer: A rows SPM -> H channel, multicast to cores 0 and 2 (each keeps its half)
    wire        st_act = wq_unstreamed != 2'd0;
    wire        st_rdy;
    wire        rda_idle;
    wire [15:0] st_m   = wq_m[wq_st];
    wire [31:0] st_addr = {16'd0, wq_spm[wq_st]} + st_off;
    npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(4)) u_rda (
        .clk(clk), .rst_n(rst_n),
        .req_vld(st_act), .req_addr(st_addr[SPM_AW-1:0]), .req_zero(1'b0),
        .req_gid(4'b0101), .req_rdy(st_rdy),
        .rd_req(rda_req), .rd_addr(rda_addr), .rd_gnt(rda_gnt), .rd_data(rda_data),
        .out_vld(h_vld), .out_gid(h_gid), .out_data(h_data), .out_rdy(h_rdy), .idle(rda_idle)
    );
    wire st_fire = st_act && st_rdy;
    wire st_last = st_fire && st_i == st_m - 16'd1;

    // injector: one fused row per cycle when both feeding LBUF_Hs have data
    wire        in_act  = wq_cnt != 2'd0;
    wire        in_bank = wq_bank[wq_in];
    wire        in_acc  = wq_acc[wq_in];
    wire [15:0] in_m    = wq_m[wq_in];
    wire [OBUF_AW-1:0] in_ob = wq_ob[wq_in];
    wire        inj     = in_act && !lbh_empty[0] && !lbh_empty[2];
    wire        in_last = inj && in_i == in_m - 16'd1;
    wire [OBUF_AW-1:0] in_row = in_ob + in_i[OBUF_AW-1:0];
    wire [TAGW-1:0] tag = {in_last, in_bank, in_acc, in_row};
    assign mode      = wq_mode[wq_in];
    assign lbh_pop   = {1'b0, inj, 1'b0, inj};
    assign inj_vld   = {1'b0, inj, 1'b0, inj};
    assign inj_sel   = {4{in_bank}};
    assign inj_a     = {{S*16{1'b0}}, inj ? lbh_dout[2*S*16 +: S*16] : {S*16{1'b0}},
                        {S*16{1'b0}}, inj ? lbh_dout[0 +: S*16] : {S*16{1'b0}}};
    assign inj_tag   = {4{tag}};
    // in FW one fused row passes through all four cores (cores 1/3 get it from cores 0/2)
    assign ev_busy   = {4{inj}};
    assign ev_stall  = in_act ? {1'b0, lbh_empty[2], 1'b0, lbh_empty[0]} : 4'b0000;
    assign ev_macs   = inj ? wq_macs[wq_in] : 64'd0;
    assign ev_row    = inj ? (4'b0001 << wq_mode[wq_in]) : 4'b0000;

    // retirement: the last lane of the fused array sees every row last
    wire [TAGW-1:0] x_tag  = out_tag[(F-1)*TAGW +: TAGW];
    wire            x_vld  = out_vld[F-1];
    wire            x_bank = x_tag[OBUF_AW+1];
    wire            x_half = x_tag[HB];
    wire            x_last = x_vld && x_tag[OBUF_AW+2];
    wire            in_half = in_row[HB];

    npu_fifo #(.W(2), .DEPTH(8)) u_cf (
        .clk(clk), .rst_n(rst_n),
        .push(issue_wave), .din({t_psh_nxt, t_psh_prv}),
        .pop(x_last), .dout(cf_dout), .full(cf_full), .empty(cf_empty), .count(cf_count)
    );

    always @(posedge clk) begin
        if (!rst_n) begin
            wq_cnt <= 0; wq_unstreamed <= 0; wq_wr <= 0; wq_st <= 0; wq_in <= 0;
            st_i <= 0; in_i <= 0; st_off <= 0;
            wpend[0] <= 0; wpend[1] <= 0; infl[0] <= 0; infl[1] <= 0;
            hpend[0] <= 0; hpend[1] <= 0; hinfl[0] <= 0; hinfl[1] <= 0;
        end else begin
            if (issue_wave) begin
                wq_mode[wq_wr] <= f_mode;
                wq_bank[wq_wr] <= f_bank;
                wq_acc[wq_wr]  <= f_acc;
                wq_m[wq_wr]    <= f_cnt;
                wq_spm[wq_wr]  <= f_w1lo;
                wq_str[wq_wr]  <= f_w1hi;
                wq_ob[wq_wr]   <= f_w2hi[OBUF_AW-1:0];
                wq_macs[wq_wr] <= macs_fw;
                wq_wr <= ~wq_wr;
            end
            wq_cnt        <= wq_cnt + {1'b0, issue_wave} - {1'b0, in_last};
            wq_unstreamed <= wq_unstreamed + {1'b0, issue_wave} - {1'b0, st_last};
            if (st_last) begin
                wq_st <= ~wq_st;
                st_i  <= 0;
            end else if (st_fire) begin
                st_i <= st_i + 16'd1;
            end
            // running offset from the entry's base; the next entry starts at offset 0
            if (st_last)      st_off <= 32'd0;
            else if (st_fire) st_off <= st_off + {16'd0, wq_str[wq_st]};
            if (in_last) begin
                wq_in <= ~wq_in;
                in_i  <= 0;
            end else if (inj) begin
                in_i <= in_i + 16'd1;
            end
            // occupancy per bank and per OBUF half (hazard interlocks)
            for (i = 0; i < 2; i = i + 1) begin
                wpend[i] <= wpend[i] + {1'b0, issue_wave && f_bank == i[0]}
                                     - {1'b0, in_last && in_bank == i[0]};
                hpend[i] <= hpend[i] + {1'b0, issue_wave && wave_half == i[0]}
                                     - {1'b0, in_last && in_half == i[0]};
                infl[i]  <= infl[i] + {15'd0, inj && in_bank == i[0]}
                                    - {15'd0, x_vld && x_bank == i[0]};
                hinfl[i] <= hinfl[i] + {15'd0, inj && in_half == i[0]}
                                     - {15'd0, x_vld && x_half == i[0]};
            end
        end
    end

    // OBUF writes straight from the tags of the bottom lanes
    genvar x;
    generate
        for (x = 0; x < F; x = x + 1) begin : g_ob
            assign ob_wr_en[x] = out_vld[x];
            assign ob_wr_addr[x*OBUF_AW +: OBUF_AW] = out_tag[x*TAGW +: OBUF_AW];
            assign ob_wr_acc[x] = out_tag[x*TAGW + OBUF_AW];
        end
    endgenerate
    // population count of the lanes written this cycle
    reg [7:0] nwr;
    always @(*) begin
        nwr = 8'd0;
        for (i = 0; i < F; i = i + 1) nwr = nwr + {7'd0, out_vld[i]};
    end
    assign ev_obuf_writes = nwr;

    // ------------------------------------------------------------------ drain engine
    // DRAINs wait in a small queue so that the next tile's LDW/WAVEs (other OBUF half) issue
    // while the previous tile drains; dpend counts queued + active drains per half.
    localparam DQW = 16 + OBUF_AW + 16 + 16 + 2 + 1;
    wire [DQW-1:0] dq_dout;
    wire           dq_empty;
    wire [2:0]     dq_count;
    // a queued DRAIN starts once every row of its half has left the array (later waves go
    // to the other half: dpend blocks them from this one)
    wire           dq_half = dq_dout[DQW-1];
    wire           dq_pop = !dr_act && !dq_empty && hpend[dq_half] == 2'd0 && hinfl[dq_half] == 16'd0;
    npu_fifo #(.W(DQW), .DEPTH(4)) u_dq (
        .clk(clk), .rst_n(rst_n),
        .push(issue_drain),
        .din({drain_half, t_psh_nxt, t_psh_prv, f_w2hi, f_w2lo, f_w1lo[OBUF_AW-1:0], f_cnt}),
        .pop(dq_pop), .dout(dq_dout), .full(dq_full), .empty(dq_empty), .count(dq_count)
    );
    // Two SPM words per OBUF row (lanes 0..S-1, then S..2S-1); the next row is read while the
    // high word is written, so a row takes two cycles.
    wire hold_done = hold_vld && hold_hi && wr_gnt;
    assign ob_rd_en   = dr_act && dr_ri != dr_rows && !rd_infl && (!hold_vld || hold_done);
    assign ob_rd_addr = dr_ob + dr_ri[OBUF_AW-1:0];
    assign wr_req  = hold_vld;
    assign wr_addr = hold_addr[SPM_AW-1:0] + {{(SPM_AW-1){1'b0}}, hold_hi};
    assign wr_data = hold_hi ? hold[2*S*32-1:S*32] : hold[S*32-1:0];
    wire dr_last = hold_done && dr_wi == dr_rows - 16'd1;
    assign ev_drain_row = hold_done;

    always @(posedge clk) begin
        if (!rst_n) begin
            dr_act <= 1'b0; rd_infl <= 1'b0; hold_vld <= 1'b0; hold_hi <= 1'b0;
            dr_ri <= 0; dr_wi <= 0; dpend[0] <= 3'd0; dpend[1] <= 3'd0;
        end else begin
            rd_infl <= ob_rd_en;
            if (dq_pop) begin
                {dr_half, dr_push, dr_stride, dr_spm_next[15:0], dr_ob, dr_rows} <= dq_dout;
                dr_spm_next[31:16] <= 16'd0;
                dr_act <= 1'b1;
                dr_ri <= 0; dr_wi <= 0;
            end
            if (ob_rd_en) begin
                dr_ri       <= dr_ri + 16'd1;
                dr_spm_next <= dr_spm_next + {16'd0, dr_stride};
                hold_addr   <= dr_spm_next;
            end
            if (rd_infl) begin
                hold     <= ob_rd_data;
                hold_vld <= 1'b1;
                hold_hi  <= 1'b0;
            end else if (hold_vld && wr_gnt) begin
                if (hold_hi) hold_vld <= 1'b0;
                hold_hi <= ~hold_hi;
            end
            if (hold_done) dr_wi <= dr_wi + 16'd1;
            if (dr_last) dr_act <= 1'b0;
            for (i = 0; i < 2; i = i + 1)
                dpend[i] <= dpend[i] + {2'd0, issue_drain && drain_half == i[0]}
                                     - {2'd0, dr_last && dr_half == i[0]};
        end
    end

    // ------------------------------------------------------------------ completion
    wire wave_done = x_last;
    wire [1:0] wave_push = wave_done ? cf_dout : 2'b00;
    wire [1:0] ldw_p  = ldw_done ? ldw_push : 2'b00;
    wire [1:0] dr_p   = dr_last ? dr_push : 2'b00;
    wire [1:0] sy_p   = issue_sync ? {t_psh_nxt, t_psh_prv} : 2'b00;
    assign push_e2l = {2'd0, ldw_p[0]} + {2'd0, wave_push[0]} + {2'd0, dr_p[0]} + {2'd0, sy_p[0]};
    assign push_e2s = {2'd0, ldw_p[1]} + {2'd0, wave_push[1]} + {2'd0, dr_p[1]} + {2'd0, sy_p[1]};
    assign done_cnt = {2'd0, ldw_done} + {2'd0, wave_done} + {2'd0, dr_last} + {2'd0, issue_sync};
    assign busy     = ldw_act || wq_cnt != 2'd0 || infl[0] != 16'd0 || infl[1] != 16'd0
                   || dr_act || !dq_empty || !cf_empty || !rdw_idle || !rda_idle;
    assign progress = can_issue || inj || (|lbv_pop) || hold_done || x_vld || st_fire;

    wire unused = &{1'b0, cf_count, dq_count, ldw_rdy, q_insn[127:96], lbh_empty[3], lbh_empty[1],
                    lbh_dout[3*S*16 +: S*16], lbh_dout[S*16 +: S*16], hold_addr[31:SPM_AW], st_addr[31:SPM_AW]};
endmodule
`default_nettype wire
