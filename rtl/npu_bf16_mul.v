`default_nettype none
// npu_bf16_mul: bf16 x bf16 -> fp32, exact; combinational (docs/datapath.md, "bf16 arithmetic").
// The 8-bit significands' 16-bit product fits fp32's 24, so nothing is rounded: p is the exact
// product, Inf of its sign at 2^128 and above, zero of its sign below 2^-126 (FTZ). Denormal
// inputs read as zero of their sign. Any NaN input, and 0 x Inf, give the canonical NaN
// 32'h7FC00000. Bit-exact C model: npu_bf16_mul() in sw/ref/bf16.c.
module npu_bf16_mul (
    input  wire [15:0] a,
    input  wire [15:0] b,
    output reg  [31:0] p
);
    wire       sign = a[15] ^ b[15];
    wire [7:0] ea = a[14:7], eb = b[14:7];
    wire       a_zero = ea == 8'd0, b_zero = eb == 8'd0;   // zero or denormal
    wire       a_inf = &ea && ~|a[6:0], b_inf = &eb && ~|b[6:0];
    wire       a_nan = &ea && |a[6:0],  b_nan = &eb && |b[6:0];

    // Significands with their hidden bits: the product is in [2^14, 2^16).
    wire [15:0] m = {8'd0, 1'b1, a[6:0]} * {8'd0, 1'b1, b[6:0]};
    // Biased exponent, two's complement in 10 bits (-125 .. 382 for normal inputs); a product in
    // [2, 4) (m[15]) moves up one binade.
    wire [9:0]  e = {2'd0, ea} + {2'd0, eb} + {9'd0, m[15]} - 10'd127;
    wire [22:0] frac = m[15] ? {m[14:0], 8'd0} : {m[13:0], 9'd0};
    wire        overflow = !e[9] && e[8:0] >= 9'd255;
    wire        underflow = e[9] || e == 10'd0;

    always @* begin
        if (a_nan || b_nan || (a_inf && b_zero) || (a_zero && b_inf))
            p = 32'h7FC0_0000;
        else if (a_inf || b_inf || (!a_zero && !b_zero && overflow))
            p = {sign, 8'hFF, 23'd0};
        else if (a_zero || b_zero || underflow)
            p = {sign, 31'd0};
        else
            p = {sign, e[7:0], frac};
    end
endmodule
`default_nettype wire
