`default_nettype none
// npu_exec_events: the counter events of npu_exec's waves (npu_top's performance counters).
//   in:  issue (a WAVE issues) with its array mode and its counting fields (npu_exec_decode's
//        wv_*: per core MACs of a row, idle PEs of a sub-array, counted lanes, n); the
//        injector's decision of this cycle (npu_exec_inject: inj, in_last, mode_sw, in_act,
//        in_mode, amode, in_need, in_cores, in_nrows); the LBUF_H heads; the array's output
//        valid bits.
//   out: the ev_* events of this cycle (per core busy, stall, MACs; per mode WAVEs issued,
//        slots, rows; mode switches, bypass words, path (2) results, OBUF writes, idle PEs
//        of the tile shape), ev_macs_zero three cycles after its injection; busy (a
//        macs_zero event still to be counted).
// It keeps the counting fields of the (at most two) waves issued and not fully injected, in
// issue order, popped with the injector's (in_last), so its entry is the injector's wave.
module npu_exec_events #(
    parameter S = 8
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  issue,
    input  wire [1:0]            wv_mode,
    input  wire [63:0]           wv_macs,    // per core: MACs of one row passing through it
    input  wire [15:0]           wv_idle,    // PEs of one sub-array outside the wave's k x n
    input  wire [4*S-1:0]        wv_cntm,    // per stream and lane: counted (k_lo <= lane < k)
    input  wire [7:0]            wv_n,
    input  wire                  inj,
    input  wire                  in_last,
    input  wire                  mode_sw,
    input  wire                  in_act,
    input  wire [1:0]            in_mode,
    input  wire [1:0]            amode,
    input  wire [3:0]            in_need,
    input  wire [3:0]            in_cores,
    input  wire [2:0]            in_nrows,
    input  wire [3:0]            lbh_empty,
    input  wire [4*S*16-1:0]     lbh_dout,
    input  wire [2*S-1:0]        out_vld,
    input  wire [2*S-1:0]        top_vld,
    output wire                  busy,
    output wire [3:0]            ev_busy,      // per core: a valid row entered
    output wire [3:0]            ev_stall,     // per core: wave waiting for its LBUF_H
    output wire [4*16-1:0]       ev_macs,      // per core: useful MACs this cycle
    output wire [3:0]            ev_wave,      // one-hot mode of a WAVE issued this cycle
    output wire [3:0]            ev_row,       // one-hot mode of an injection slot this cycle
    output wire [11:0]           ev_rows,      // per mode (3 bits each): rows injected this cycle
    output wire                  ev_mode_switch, // the injection mode changed
    output wire [1:0]            ev_bypass,    // S-element A words over bypass (1) to cores 1/3 (VSW/ISW)
    output wire [7:0]            ev_path2,     // int32 results of cores 0/1 over path (2) (HSW/ISW)
    output wire [7:0]            ev_obuf_writes,
    output wire [15:0]           ev_idle_shape,  // PEs of row-carrying sub-arrays outside k x n
    output wire [15:0]           ev_macs_zero    // MACs fed a zero A element (lanes k_lo..k-1 x n)
);
`include "npu_defs.vh"
    localparam F = 2 * S;

    // the counting fields of the waves at the injector: written at wq_wr, read at wq_in
    reg          wq_wr, wq_in;
    reg  [63:0]  wq_macs [0:1];      // per core: MACs of one row passing through it
    reg  [15:0]  wq_idle [0:1];      // PEs of one sub-array outside the wave's k x n
    reg  [4*S-1:0] wq_cntm [0:1];    // per stream and lane: counted by macs_zero (k_lo <= lane < k)
    reg  [7:0]   wq_n    [0:1];      // n (macs_zero: zero lanes x n)
    always @(posedge clk) begin
        if (!rst_n) begin
            wq_wr <= 1'b0; wq_in <= 1'b0;
        end else begin
            if (issue) begin
                wq_macs[wq_wr] <= wv_macs;
                wq_idle[wq_wr] <= wv_idle;
                wq_cntm[wq_wr] <= wv_cntm;
                wq_n[wq_wr]    <= wv_n;
                wq_wr <= ~wq_wr;
            end
            if (in_last) wq_in <= ~wq_in;
        end
    end

    wire [4*S-1:0] in_cntm = wq_cntm[wq_in];
    wire [4*S-1:0] lane_zero;        // counted lanes (k_lo <= j < k) whose element is zero
    genvar k;
    generate
        for (k = 0; k < 4*S; k = k + 1) begin : g_lane
            assign lane_zero[k] = in_cntm[k] && lbh_dout[k*16 +: 16] == 16'd0;
        end
        for (k = 0; k < 4; k = k + 1) begin : g_core
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
    assign busy     = mz_vld != 3'd0;
    assign ev_wave  = issue ? (4'b0001 << wv_mode) : 4'b0000;   // bcast counts as HSW
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

    // population counts of the OBUF lanes written this cycle (both ports), and of path (2)
    reg [7:0] nwr, n2;
    integer i;
    always @(*) begin
        nwr = 8'd0;
        for (i = 0; i < F; i = i + 1) nwr = nwr + {7'd0, out_vld[i]} + {7'd0, top_vld[i]};
    end
    assign ev_obuf_writes = nwr;
    always @(*) begin
        n2 = 8'd0;
        for (i = 0; i < F; i = i + 1) n2 = n2 + {7'd0, top_vld[i]};
    end
    assign ev_path2 = n2;
endmodule
`default_nettype wire
