`default_nettype none
// npu_pe: one weight-stationary MAC cell of the FlexSA array (docs/design.md §5).
// A moves right, partial sums move down, both registered (one cycle per PE).
// Two stationary registers: the bank named by a_sel computes while the other bank can be
// shifted in from above (w_bank), so the next tile preloads during the current wave.
// Invalid A rows carry a = 0, so there is no valid bit. No reset: datapath only.
module npu_pe (
    input  wire        clk,
    input  wire [15:0] a_in,
    input  wire        a_sel_in,
    input  wire [31:0] psum_in,
    input  wire        w_shift,
    input  wire        w_bank,
    input  wire [15:0] w_in,
    output reg  [15:0] a_out,
    output reg         a_sel_out,
    output reg  [31:0] psum_out,
    output wire [15:0] w_out
);
    reg [15:0] w0, w1;

    wire [15:0] w_cur = a_sel_in ? w1 : w0;
    // Product of the sign-extended operands: its low 32 bits are the exact int16*int16 product,
    // and the sum wraps at 32 bits as the contract requires.
    wire [31:0] prod = {{16{a_in[15]}}, a_in} * {{16{w_cur[15]}}, w_cur};

    always @(posedge clk) begin
        a_out     <= a_in;
        a_sel_out <= a_sel_in;
        psum_out  <= psum_in + prod;
        if (w_shift) begin
            if (w_bank) w1 <= w_in;
            else        w0 <= w_in;
        end
    end

    // Column shift chain: the PE below loads what this PE held in the bank being shifted.
    assign w_out = w_bank ? w1 : w0;
endmodule
`default_nettype wire
