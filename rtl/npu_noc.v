`default_nettype none
`include "npu_assert.vh"
// npu_noc: one multicast channel from the SPM side to NEP core endpoints.
// A flit (WORDS words of 2S int16 lanes) with group id in_gid goes to every endpoint e with
// accept[e*16+gid]; endpoint e keeps the low (half[e]=0, lanes 0..S-1) or high (half[e]=1, lanes
// S..2S-1) half of word word[e] (WORDS = 2: the V channel's pair flits, npu_exec_ldw).
// Each endpoint has exactly one output register (one link stage). The flit moves only when all
// its destinations can take it (register empty or emptied this cycle), so a multicast is atomic
// and in_rdy depends combinationally on in_gid and out_rdy. A flit with no destination is
// consumed and flagged with err_nodest.
module npu_noc #(
    parameter integer S   = 8,
    parameter integer NEP = 4,
    parameter integer WORDS = 1      // 1 or 2
) (
    input  wire                       clk,
    input  wire                       rst_n,
    input  wire                       in_vld,
    output wire                       in_rdy,
    input  wire [3:0]                 in_gid,
    input  wire [WORDS*2*S*16-1:0]    in_data,
    input  wire [NEP*16-1:0]          accept,
    input  wire [NEP-1:0]             half,
    input  wire [NEP-1:0]             word,       // per endpoint: the word it keeps (WORDS = 2)
    output reg  [NEP-1:0]             out_vld,
    output reg  [NEP*S*16-1:0]        out_data,
    input  wire [NEP-1:0]             out_rdy,
    output wire                       err_nodest,
    output wire                       cnt_flit,
    output wire [NEP-1:0]             cnt_link,   // per endpoint: a flit crossed its link
    output reg  [$clog2(NEP+1)-1:0]   cnt_deliv,
    output wire [NEP-1:0]             blocked     // endpoints a waiting flit cannot enter yet
);
    localparam integer HW = S * 16;   // bits kept by one endpoint
    localparam integer DW = $clog2(NEP + 1);

    wire [NEP-1:0] dest;
    wire [NEP-1:0] can_take;   // endpoint register free (or freed) this cycle
    genvar e;
    generate
        for (e = 0; e < NEP; e = e + 1) begin : g_ep
            wire [15:0] acc_e = accept[e*16 +: 16];
            assign dest[e]     = acc_e[in_gid];
            assign can_take[e] = !out_vld[e] || out_rdy[e];
        end
    endgenerate

    assign in_rdy     = &(~dest | can_take);
    wire   fire       = in_vld && in_rdy;
    assign err_nodest = fire && (dest == {NEP{1'b0}});
    assign cnt_flit   = fire;
    assign cnt_link   = {NEP{fire}} & dest;
    assign blocked    = {NEP{in_vld}} & dest & ~can_take;   // the watchdog's view (NOCSTATE)

    integer i;
    always @(*) begin
        cnt_deliv = {DW{1'b0}};
        for (i = 0; i < NEP; i = i + 1)
            if (fire && dest[i]) cnt_deliv = cnt_deliv + 1'b1;
    end

    // per endpoint the S lanes it keeps: word, then half
    wire [NEP*HW-1:0] kept;
    generate
        for (e = 0; e < NEP; e = e + 1) begin : g_kept
            wire [2*HW-1:0] w_e;
            if (WORDS > 1) begin : g_two
                assign w_e = word[e] ? in_data[2*HW +: 2*HW] : in_data[0 +: 2*HW];
            end else begin : g_one
                assign w_e = in_data[0 +: 2*HW];
                wire unused_w = &{1'b0, word[e]};
            end
            assign kept[e*HW +: HW] = half[e] ? w_e[HW +: HW] : w_e[0 +: HW];
        end
    endgenerate

    always @(posedge clk) begin
        for (i = 0; i < NEP; i = i + 1)
            if (fire && dest[i])
                out_data[i*HW +: HW] <= kept[i*HW +: HW];
    end

    always @(posedge clk) begin
        if (!rst_n) out_vld <= {NEP{1'b0}};
        else        out_vld <= (out_vld & ~out_rdy) | ({NEP{fire}} & dest);
    end

`ifdef NPU_ASSERTS
    // Valid/ready: a flit offered and not taken stays offered, unchanged (the sources are
    // show-ahead FIFOs); every flit has a destination; a link register is never overwritten.
    reg              a_hold;
    reg [3:0]        a_gid;
    reg [WORDS*2*S*16-1:0] a_data;
    always @(posedge clk) begin
        if (!rst_n) a_hold <= 1'b0;
        else        a_hold <= in_vld && !in_rdy;
        a_gid  <= in_gid;
        a_data <= in_data;
    end
    always @(posedge clk) if (rst_n) begin
        if (a_hold && !in_vld) `NPU_ASSERT_FAIL("NoC flit withdrawn before it was taken")
        if (a_hold && in_vld && (in_gid != a_gid || in_data != a_data))
            `NPU_ASSERT_FAIL("NoC flit changed while waiting")
        if (err_nodest) `NPU_ASSERT_FAIL("NoC flit with no destination")
        for (i = 0; i < NEP; i = i + 1)
            if (fire && dest[i] && out_vld[i] && !out_rdy[i])
                `NPU_ASSERT_FAIL("NoC link register overwritten")
    end
`endif
endmodule
`default_nettype wire
