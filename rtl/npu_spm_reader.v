`default_nettype none
`include "npu_assert.vh"
// npu_spm_reader: turns a stream of SPM word requests into NoC flits, one per cycle.
// A request either reads the SPM (one-cycle latency after the grant) or injects an all-zero
// word (rows past the valid k of a stationary tile) without touching the SPM. Every request
// passes through the same one-cycle stage so zeros and reads stay in order.
// ZEROS = 0: the requestor never asks for a zero word (req_zero unused), so the SPM grant
// reaches req_rdy through one gate (synthesis: requestor -> SPM -> requestor path).
module npu_spm_reader #(
    parameter AW    = 12,
    parameter WB    = 256,
    parameter GW    = 4,
    parameter ZEROS = 1
) (
    input  wire          clk,
    input  wire          rst_n,
    // request stream
    input  wire          req_vld,
    input  wire [AW-1:0] req_addr,
    input  wire          req_zero,
    input  wire [GW-1:0] req_gid,
    output wire          req_rdy,
    // SPM read port
    output wire          rd_req,
    output wire [AW-1:0] rd_addr,
    input  wire          rd_gnt,
    input  wire [WB-1:0] rd_data,
    // flit stream (to a NoC channel)
    output wire          out_vld,
    output wire [GW-1:0] out_gid,
    output wire [WB-1:0] out_data,
    input  wire          out_rdy,
    output wire          idle
);
    // Depth 3: one item in the read stage and one waiting still leave room, so the
    // stream sustains one word per cycle without a combinational path from out_rdy.
    localparam DEPTH = 3;
    reg          s1_vld, s1_zero;
    reg [GW-1:0] s1_gid;
    wire         f_full, f_empty;
    wire [1:0]   f_count;
    wire [GW+WB-1:0] f_dout;

    wire space = ({1'b0, f_count} + {2'b0, s1_vld}) < DEPTH;
    wire   zero    = ZEROS != 0 && req_zero;
    wire   rd_ok   = !zero && space;
    assign rd_req  = req_vld && rd_ok;
    assign rd_addr = req_addr;
    assign req_rdy = space && (zero || rd_gnt);
    wire   accept  = req_vld && req_rdy;

    always @(posedge clk) begin
        if (!rst_n) s1_vld <= 1'b0;
        else        s1_vld <= accept;
        s1_zero <= zero;
        s1_gid  <= req_gid;
    end

    npu_fifo #(.W(GW + WB), .DEPTH(DEPTH)) u_q (
        .clk(clk), .rst_n(rst_n),
        .push(s1_vld), .din({s1_gid, s1_zero ? {WB{1'b0}} : rd_data}),
        .pop(out_vld && out_rdy), .dout(f_dout),
        .full(f_full), .empty(f_empty), .count(f_count)
    );
    assign out_vld  = !f_empty;
    assign out_gid  = f_dout[GW+WB-1:WB];
    assign out_data = f_dout[WB-1:0];
    assign idle     = f_empty && !s1_vld;
    wire unused = f_full;

`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (s1_vld && f_full) `NPU_ASSERT_FAIL("SPM reader: read returned into a full queue")
        if (zero && rd_req) `NPU_ASSERT_FAIL("SPM reader: zero word read the SPM")
        if (ZEROS == 0 && req_vld && req_zero) `NPU_ASSERT_FAIL("SPM reader: zero word asked with ZEROS = 0")
    end
`endif
endmodule
`default_nettype wire
