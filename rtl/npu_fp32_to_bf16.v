`default_nettype none
// npu_fp32_to_bf16: fp32 -> bf16, round to nearest even; combinational (docs/datapath.md,
// "bf16 arithmetic"). Rounding up carries into the exponent, and from the largest finite values
// into Inf (the overflow rule); Inf stays Inf, any NaN gives the canonical 16'h7FC0 (truncating
// a NaN whose payload sits in the low half would make it Inf), a denormal gives zero of its sign.
// Bit-exact C model: npu_fp32_to_bf16() in sw/ref/bf16.c.
module npu_fp32_to_bf16 (
    input  wire [31:0] x,
    output reg  [15:0] y
);
    wire [7:0] e = x[30:23];
    // Guard bit x[15]; up on more than half an ulp, or exactly half with an odd result.
    wire       up = x[15] && (|x[14:0] || x[16]);

    always @* begin
        if (&e && |x[22:0])
            y = 16'h7FC0;
        else if (e == 8'd0)
            y = {x[31], 15'd0};
        else
            y = x[31:16] + {15'd0, up};
    end
endmodule
`default_nettype wire
