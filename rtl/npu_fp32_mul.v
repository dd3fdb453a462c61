`default_nettype none
// npu_fp32_mul: fp32 x fp32 -> fp32, round to nearest even; combinational (docs/datapath.md,
// "bf16 arithmetic"; the vector unit's scaling, npu_vec_lane). Denormal inputs read as zero of
// their sign; the product is rounded with an unbounded exponent and flushed to zero of its sign
// when that rounded value is below 2^-126 (x86's FTZ, tininess after rounding); Inf of its sign
// at 2^128 and above. Any NaN input, and 0 x Inf, give the canonical NaN 32'h7FC00000.
// Bit-exact C model: npu_fp32_mul() in sw/ref/bf16.c (same steps).
module npu_fp32_mul (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output reg  [31:0] p
);
    wire       sign = a[31] ^ b[31];
    wire [7:0] ea = a[30:23], eb = b[30:23];
    wire       a_zero = ea == 8'd0, b_zero = eb == 8'd0;   // zero or denormal
    wire       a_inf = &ea && ~|a[22:0], b_inf = &eb && ~|b[22:0];
    wire       a_nan = &ea && |a[22:0],  b_nan = &eb && |b[22:0];

    // 24 x 24 significand bits: the exact product in [2^46, 2^48)
    wire [47:0] m  = {24'd0, 1'b1, a[22:0]} * {24'd0, 1'b1, b[22:0]};
    // leading one at bit 47 (one place left when the product is in [1, 2))
    wire [47:0] mn = m[47] ? m : {m[46:0], 1'b0};
    wire [23:0] mant = mn[47:24];
    wire [23:0] rest = mn[23:0];
    // round to nearest even on the 24 bits below the significand
    wire        up = rest[23] && (|rest[22:0] || mant[0]);
    wire [24:0] mr = {1'b0, mant} + {24'd0, up};
    // biased exponent, two's complement in 10 bits: ea + eb - 127, + 1 for a product in [2, 4)
    // and + 1 more when rounding carries into the next binade (mr = 2^24)
    wire [9:0]  e = {2'd0, ea} + {2'd0, eb} + {9'd0, m[47]} + {9'd0, mr[24]} - 10'd127;
    wire [22:0] frac = mr[24] ? mr[23:1] : mr[22:0];
    wire        overflow  = !e[9] && e[8:0] >= 9'd255;
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
