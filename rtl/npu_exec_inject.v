`default_nettype none
`include "npu_assert.vh"
// npu_exec_inject: the injector of npu_exec: the A rows of the issued WAVEs, LBUF_H -> FlexSA.
//   in:  issue (a WAVE issues) with its bank, array mode, acc flag, per set row counts and
//        OBUF start rows, the fed-lane mask (npu_exec_decode's wv_*) and early (its LDW is
//        still loading, npu_exec_ldw); ldw_done; the LBUF_H heads; r_bank: rows retired per
//        bank this cycle (npu_exec_obuf_hazard).
//   out: lbh_pop, the injected rows (mode, inj_*: a row of every set in one slot per cycle,
//        the tag {mode, last, bank, acc, OBUF row}); full (two waves queued, no WAVE issues);
//        per bank the waves not fully injected (wpend), the mode of its last row and the cycles
//        since it was injected (bank_lmode, bank_since), for the weight loader; the injection
//        decision and its slot (inj, in_last, mode_sw, in_act, in_mode, in_need, in_cores,
//        in_nrows) for npu_exec_events; busy.
// A slot goes in when every LBUF_H it needs has data, the wave is not early (wq_early, until
// its LDW completes) and the array runs the wave's mode; a different mode waits for the mode
// change gap, then switches (amode). It keeps its own copy of the fields it needs of the (at
// most two) waves issued and not fully injected (the wave queue), in issue order.
module npu_exec_inject #(
    parameter S         = 8,
    parameter OBUF_AW   = 9,
    parameter TAGW      = OBUF_AW + 5    // row tag {mode, last, bank, acc, OBUF row}
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  issue,
    input  wire                  bank,
    input  wire [1:0]            wv_mode,
    input  wire                  wv_acc,
    input  wire [63:0]           wv_len,
    input  wire [4*OBUF_AW-1:0]  wv_ob,
    input  wire [4*S-1:0]        wv_pass,
    input  wire                  early,
    input  wire                  ldw_done,
    input  wire                  ldw_cmt,    // the LDW commits: its early waves may inject
    input  wire                  ldw_cmtd,   // the active LDW has committed (checks only)
    input  wire                  ldw_bank,   // the writing LDW's bank (its commit releases that bank's early waves)
    input  wire [5:0]            r_bank,     // per bank (3 bits): rows retired this cycle
    output wire                  full,
    output wire [3:0]            wpend,      // per bank (2 bits): waves issued, not fully injected
    output wire [3:0]            bank_lmode, // per bank (2 bits): mode of the last row injected on it
    output wire [15:0]           bank_since, // per bank (8 bits): x - t - 1 in cycle x, t its last injection (saturates at 2S)
    output wire                  busy,
    // the wave queue's slots, shared with npu_exec_wave (which streams them from its own pointer)
    output wire                  q_wr,       // the slot the next issued wave takes
    output wire [2*2-1:0]        q_modes,    // per slot: array mode
    output wire [2*64-1:0]       q_lens,     // per slot: rows per set
    // LBUF_H and FlexSA
    input  wire [3:0]            lbh_empty,
    input  wire [4*S*16-1:0]     lbh_dout,
    output wire [3:0]            lbh_pop,
    output wire [1:0]            mode,
    output wire [3:0]            inj_vld,
    output wire [4*S*16-1:0]     inj_a,
    output wire [3:0]            inj_sel,
    output wire [4*TAGW-1:0]     inj_tag,
    // the injection (events)
    output wire                  inj,
    output wire                  in_last,
    output wire                  mode_sw,
    output wire                  in_act,
    output wire [1:0]            in_mode,
    output reg  [3:0]            in_need,    // LBUF_Hs (streams) the slot pops
    output reg  [3:0]            in_cores,   // cores its rows pass through
    output reg  [2:0]            in_nrows,   // rows in the slot
    // checks only (NPU_ASSERTS)
    input  wire                  ldw_act,
    input  wire                  ldw_shift,
    input  wire [1:0]            st_waves    // npu_exec_wave's waves not fully read
);
`include "npu_defs.vh"
`include "npu_mode_fn.vh"
    localparam F  = 2 * S;           // fused array side
    localparam FW_ = 7;              // counters 0..2S (S <= 64) in FW_+1 bits
    localparam [FW_:0] FC  = F[FW_:0];
    localparam [FW_:0] SC  = S[FW_:0];

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

    // the wave queue: written at wq_wr, injected from wq_in
    reg  [1:0]   wq_cnt;
    reg          wq_wr, wq_in;
    reg  [1:0]   wq_mode [0:1];
    reg          wq_bank [0:1];
    reg  [1:0]   wq_early;           // issued early (before its LDW completed): not injected yet
    reg          wq_acc  [0:1];
    reg  [63:0]  wq_len  [0:1];      // per set: rows
    reg  [4*OBUF_AW-1:0] wq_ob [0:1];  // per set: OBUF row of its first row
    reg  [4*S-1:0] wq_pass [0:1];    // per stream and lane: fed (k-block lane >= k_lo), else zero
    reg  [15:0]  in_t;
    reg  [1:0]   wpend_r [0:1];      // per bank: waves issued, not fully injected
    reg  [15:0]  infl  [0:1];        // per bank: rows in the array
    reg  [FW_:0] bsince [0:1];       // per bank: cycles since its last injection (below)
    reg  [1:0]   blmode [0:1];       // per bank: mode of its last injected row
    reg  [1:0]   amode;              // mode of the array (rows in flight)
    wire [2:0]   r_bank0 = r_bank[2:0];
    wire [2:0]   r_bank1 = r_bank[5:3];

    // injector: one slot per cycle when every LBUF_H the slot needs has data and the array
    // runs the wave's mode (a different mode waits for the array to empty, then switches)
    assign      q_wr    = wq_wr;
    assign      q_modes = {wq_mode[1], wq_mode[0]};
    assign      q_lens  = {wq_len[1], wq_len[0]};
    assign      in_act  = wq_cnt != 2'd0;
    assign      in_mode = wq_mode[wq_in];
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
    wire [63:0] len_cur = (issue && wq_wr == wq_in) ? wv_len : in_len;
    wire [63:0] len_nxt = (issue && wq_wr == nx_wq) ? wv_len : wq_len[nx_wq];
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
    // since_inj = x - t_last - 1 in cycle x (saturating at 2S); a switch in cycle x lets the
    // first new slot go in cycle x + 1, so gap G * S needs since_inj >= G * S - 1
    reg  [FW_:0] since_inj;
    wire [1:0]   gap_s  = mode_gap(amode, in_mode);
    wire         gap_ok = gap_s == 2'd0 || (gap_s == 2'd1 && since_inj >= SC - 1'b1)
                       || since_inj >= FC - 1'b1;
    assign      mode_sw = in_act && in_mode != amode && gap_ok;
    // in_go = in_act && !wq_early[wq_in] (a wave is at the injector and not early), registered
    // like in_sets (the value for the next head, selected by in_last), so the injection decision
    // has no more terms than before early issue
    reg         in_go;
    // The writing LDW's commit (or completion) releases the early waves on its bank (ldw_bank);
    // those on the pending LDW's bank wait for its own.
    wire        ldw_rel  = ldw_cmt || ldw_done;
    wire [1:0]  early_is = issue ? (wq_wr ? {early, wq_early[0]} : {wq_early[1], early}) : wq_early;
    wire [1:0]  bank_is  = {(issue && wq_wr) ? bank : wq_bank[1], (issue && !wq_wr) ? bank : wq_bank[0]};
    wire [1:0]  early_nx = early_is & ~({2{ldw_rel}} & ~(bank_is ^ {2{ldw_bank}}));
    wire [1:0]  cnt_s   = wq_cnt + {1'b0, issue};
    assign      inj     = in_go && in_mode == amode && (in_need & lbh_empty) == 4'd0;
    assign      in_last = inj && !lt_step[0];
    assign mode    = amode;
    assign lbh_pop = inj ? in_need : 4'd0;
    assign inj_vld = inj ? in_need : 4'd0;
    assign inj_sel = {4{in_bank}};
    // window start k_lo: lanes below it are fed as zeros (the mask is a register of the wave,
    // applied on the data side so the late injection decision meets no extra gate)
    wire [4*S-1:0] in_pass = wq_pass[wq_in];
    wire [4*S*16-1:0] lbh_win;       // LBUF_H heads with the lanes below k_lo zeroed
    genvar k;
    generate
        for (k = 0; k < 4*S; k = k + 1) begin : g_lane
            assign lbh_win[k*16 +: 16] = in_pass[k] ? lbh_dout[k*16 +: 16] : 16'd0;
        end
        for (k = 0; k < 4; k = k + 1) begin : g_inj
            wire [1:0] sj = stream_set(in_mode, k);
            wire [OBUF_AW-1:0] row = in_ob[sj*OBUF_AW +: OBUF_AW] + in_t[OBUF_AW-1:0];
            wire lst = in_t == in_len[sj*16 +: 16] - 16'd1;
            assign inj_a[k*S*16 +: S*16] = (inj && in_need[k]) ? lbh_win[k*S*16 +: S*16] : {S*16{1'b0}};
            assign inj_tag[k*TAGW +: TAGW] = {in_mode, lst, in_bank, in_acc, row};
        end
    endgenerate

    // Weight bank clearance. A row injected in cycle t uses PE (r, c) of core k in cycle
    // t + 1 + S * mode_off(k) + r + c (npu_top's injection register, then npu_flexsa's skew).
    // npu_exec_ldw decides a bank's rows one a cycle, top row first, and core k writes its row S *
    // mode_off(k) cycles after the decision (the LDW's mode), npu_core column c c cycles after that;
    // a PE reads the old value in the cycle its bank is written. So an LDW whose mode is the last
    // rows' may decide row 0 from cycle t + 1 on, one of another mode S * mode_gap(last, new)
    // cycles later: the bank's last mode and bsince = x - t - 1 (saturating at 2S) tell it.

    integer i;
    always @(posedge clk) begin
        if (!rst_n) begin
            bsince[0] <= FC; bsince[1] <= FC; blmode[0] <= MODE_FW; blmode[1] <= MODE_FW;
            wq_cnt <= 0; wq_wr <= 0; wq_in <= 0; wq_early <= 2'b00;
            in_t <= 0; since_inj <= FC; in_sets <= 4'd0; in_go <= 1'b0; amode <= MODE_FW;
            wpend_r[0] <= 0; wpend_r[1] <= 0; infl[0] <= 0; infl[1] <= 0;
        end else begin
            if (issue) begin
                wq_mode[wq_wr]  <= wv_mode;
                wq_bank[wq_wr]  <= bank;
                wq_acc[wq_wr]   <= wv_acc;
                wq_len[wq_wr]   <= wv_len;
                wq_ob[wq_wr]    <= wv_ob;
                wq_pass[wq_wr]  <= wv_pass;
                wq_wr <= ~wq_wr;
            end
            wq_early <= early_nx;             // the issue above, less the released ones
            wq_cnt  <= wq_cnt + {1'b0, issue} - {1'b0, in_last};
            in_sets <= in_last ? lt_next : inj ? lt_step : lt_same;
            in_go   <= in_last ? cnt_s != 2'd1 && !early_nx[~wq_in] : cnt_s != 2'd0 && !early_nx[wq_in];
            if (in_last) begin
                wq_in <= ~wq_in;
                in_t  <= 0;
            end else if (inj) begin
                in_t <= in_t + 16'd1;
            end
            if (mode_sw) amode <= in_mode;
            if (inj)                since_inj <= {(FW_+1){1'b0}};
            else if (since_inj < FC) since_inj <= since_inj + 1'b1;
            // occupancy per bank (weight hazards)
            for (i = 0; i < 2; i = i + 1) begin
                wpend_r[i] <= wpend_r[i] + {1'b0, issue && bank == i[0]}
                                         - {1'b0, in_last && in_bank == i[0]};
            end
            for (i = 0; i < 2; i = i + 1) begin
                if (inj && in_bank == i[0]) begin
                    bsince[i] <= {(FW_+1){1'b0}};
                    blmode[i] <= in_mode;
                end else if (bsince[i] < FC) begin
                    bsince[i] <= bsince[i] + 1'b1;
                end
            end
            infl[0]  <= infl[0]  + ((inj && !in_bank) ? {13'd0, in_nrows} : 16'd0) - {13'd0, r_bank0};
            infl[1]  <= infl[1]  + ((inj &&  in_bank) ? {13'd0, in_nrows} : 16'd0) - {13'd0, r_bank1};
        end
    end

    assign full      = wq_cnt == 2'd2;
    assign wpend     = {wpend_r[1], wpend_r[0]};
    assign bank_lmode = {blmode[1], blmode[0]};
    assign bank_since = {bsince[1], bsince[0]};   // FW_ = 7: 8 bits each
    assign busy      = wq_cnt != 2'd0 || infl[0] != 16'd0 || infl[1] != 16'd0;

    wire unused = &{1'b0, ldw_act, ldw_shift, ldw_cmtd, st_waves};

`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        // one mode per core per wave: rows enter only in the array's mode, and the mode
        // changes only on an empty array
        if (inj && in_mode != amode)    `NPU_ASSERT_FAIL("row injected in another mode than the array's")
        if (in_act && in_sets != {in_t < in_len[48 +: 16], in_t < in_len[32 +: 16],
                                  in_t < in_len[16 +: 16], in_t < in_len[0 +: 16]})
            `NPU_ASSERT_FAIL("registered row sets differ from the slot's")
        if (mode_sw && !gap_ok)         `NPU_ASSERT_FAIL("mode switch before the mode change gap")
        if ((lbh_pop & lbh_empty) != 4'd0) `NPU_ASSERT_FAIL("LBUF_H popped while empty")
        if (wq_cnt == 2'd3 || st_waves > wq_cnt) `NPU_ASSERT_FAIL("wave queue count out of range")
        if ({13'd0, r_bank0} > infl[0] || {13'd0, r_bank1} > infl[1])
            `NPU_ASSERT_FAIL("row retired that was not in flight")
        if (ldw_shift && !ldw_cmtd && in_act && in_bank == ldw_bank && !wq_early[wq_in])
            `NPU_ASSERT_FAIL("weights written into the bank of a wave issued before the LDW")
        if (inj && ldw_act && !ldw_cmtd && in_bank == ldw_bank && wq_early[wq_in])
            `NPU_ASSERT_FAIL("early wave injected before its LDW committed")
        if (in_go != (in_act && !wq_early[wq_in])) `NPU_ASSERT_FAIL("registered in_go differs from the wave queue")
    end
`endif
endmodule
`default_nettype wire
