`default_nettype none
`include "npu_assert.vh"
// npu_fifo: synchronous show-ahead FIFO (dout is the oldest entry while !empty).
// Any DEPTH >= 1 (pointers wrap explicitly, so non-powers of 2 work).
// push while full is ignored unless a valid pop happens in the same cycle
// (then one entry leaves and one enters); pop while empty is ignored.
module npu_fifo #(
    parameter integer W     = 8,
    parameter integer DEPTH = 4
) (
    input  wire                       clk,
    input  wire                       rst_n,
    input  wire                       push,
    input  wire [W-1:0]               din,
    input  wire                       pop,
    output wire [W-1:0]               dout,
    output wire                       full,
    output wire                       empty,
    output reg  [$clog2(DEPTH+1)-1:0] count
);
    localparam integer CW = $clog2(DEPTH + 1);
    // A 1-bit pointer even for DEPTH = 1 (it then stays 0).
    localparam integer PW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    localparam [31:0]   DEPTH32  = DEPTH;
    localparam [31:0]   LAST32   = DEPTH - 1;
    localparam [CW-1:0] FULL_CNT = DEPTH32[CW-1:0];
    localparam [PW-1:0] LAST_PTR = LAST32[PW-1:0];

    reg [W-1:0]  mem [0:DEPTH-1];   // storage: no reset (datapath)
    reg [PW-1:0] rd_ptr;
    reg [PW-1:0] wr_ptr;

    wire do_pop  = pop && !empty;
    wire do_push = push && (!full || do_pop);

    assign empty = (count == {CW{1'b0}});
    assign full  = (count == FULL_CNT);
    assign dout  = mem[rd_ptr];

    always @(posedge clk) begin
        if (do_push) mem[wr_ptr] <= din;
    end

    always @(posedge clk) begin
        if (!rst_n) begin
            rd_ptr <= {PW{1'b0}};
            wr_ptr <= {PW{1'b0}};
            count  <= {CW{1'b0}};
        end else begin
            if (do_push) wr_ptr <= (wr_ptr == LAST_PTR) ? {PW{1'b0}} : wr_ptr + 1'b1;
            if (do_pop)  rd_ptr <= (rd_ptr == LAST_PTR) ? {PW{1'b0}} : rd_ptr + 1'b1;
            if (do_push && !do_pop)      count <= count + 1'b1;
            else if (do_pop && !do_push) count <= count - 1'b1;
        end
    end

`ifdef NPU_ASSERTS
    // Simulation-only checks: every user gates push on !full and pop on !empty; a dropped push
    // or a pop of nothing would silently lose or invent a word.
    always @(posedge clk) if (rst_n) begin
        if (push && full && !pop) `NPU_ASSERT_FAIL("FIFO overflow: push while full")
        if (pop && empty)         `NPU_ASSERT_FAIL("FIFO underflow: pop while empty")
    end
`endif
endmodule
`default_nettype wire
