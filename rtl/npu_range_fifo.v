`default_nettype none
`include "npu_assert.vh"
// npu_range_fifo: a small in-order table of ranges [lo, hi), kept beside a FIFO of the same
// order and depth (npu_exec: the OBUF rows of the in-flight waves beside the completion records,
// and of the queued DRAINs beside the drain queue), whose entries are all visible at once for
// the overlap compares the FIFO's single head cannot give. Entry = push count mod DEPTH; push
// writes the entry at wp and marks it valid, pop clears the oldest (rp); a push and a pop of the
// same entry in one cycle leave it valid (the push wins). The owner pushes and pops exactly when
// its FIFO does, so the table never overflows (asserted). Ranges are not reset (only vld is).
module npu_range_fifo #(
    parameter integer DEPTH = 8,     // a power of 2, >= 2
    parameter integer W     = 10     // bits of lo and hi
) (
    input  wire               clk,
    input  wire               rst_n,
    input  wire               push,
    input  wire [W-1:0]       push_lo,
    input  wire [W-1:0]       push_hi,
    input  wire               pop,
    output reg  [DEPTH-1:0]   vld,    // per entry: holds a range
    output wire [DEPTH-1:0]   head,   // one-hot: the oldest entry (rp)
    output reg  [DEPTH*W-1:0] lo,
    output reg  [DEPTH*W-1:0] hi
);
    localparam integer PW = $clog2(DEPTH);
    reg  [PW-1:0] wp, rp;
    integer y;
    always @(posedge clk) begin
        if (!rst_n) begin
            wp <= {PW{1'b0}}; rp <= {PW{1'b0}}; vld <= {DEPTH{1'b0}};
        end else begin
            if (push) wp <= wp + 1'b1;
            if (pop)  rp <= rp + 1'b1;
            for (y = 0; y < DEPTH; y = y + 1)
                if (push && wp == y[PW-1:0])     vld[y] <= 1'b1;
                else if (pop && rp == y[PW-1:0]) vld[y] <= 1'b0;
        end
        for (y = 0; y < DEPTH; y = y + 1)
            if (push && wp == y[PW-1:0]) begin
                lo[y*W +: W] <= push_lo;
                hi[y*W +: W] <= push_hi;
            end
    end
    genvar g;
    generate
        for (g = 0; g < DEPTH; g = g + 1) begin : g_head
            assign head[g] = rp == g[PW-1:0];
        end
    endgenerate

`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (push && vld[wp] && !(pop && rp == wp)) `NPU_ASSERT_FAIL("range table: push over a valid entry")
        if (pop && !vld[rp])                       `NPU_ASSERT_FAIL("range table: pop of an empty entry")
    end
`endif
endmodule
`default_nettype wire
