`default_nettype none
// npu_burst_len: length of the next AXI-like burst, the one rule shared by the fetch unit and both
// DMA engines: the beats still wanted, at most MAX_BURST, and never across a 4 KiB line (AXI).
// Beats are 4S bytes (S a power of two), so the beats left before the line are a shift.
module npu_burst_len #(
    parameter S         = 8,
    parameter MAX_BURST = 16
) (
    input  wire [11:0] addr,     // low bits of the burst's byte address
    input  wire [15:0] want,     // beats still wanted (>= 1)
    output wire [15:0] len       // beats in this burst
);
    localparam integer LB = $clog2(4 * S);
    localparam [31:0] MAXB32 = MAX_BURST;
    localparam [15:0] MAXB16 = MAXB32[15:0];
    wire [12:0] to4k = (13'd4096 - {1'b0, addr}) >> LB;   // beats before the 4 KiB line
    wire [15:0] lmax = (MAXB16 < {3'd0, to4k}) ? MAXB16 : {3'd0, to4k};
    assign len = (want < lmax) ? want : lmax;
endmodule
`default_nettype wire
