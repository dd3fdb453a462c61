`default_nettype none
// npu_fp32_add: fp32 + fp32 -> fp32, round to nearest even; combinational (docs/datapath.md,
// "bf16 arithmetic"). Denormal inputs read as zero of their sign; a result below 2^-126 flushes
// to zero of its sign (such a sum is exact, so flushing before rounding loses nothing else).
// An exact-zero sum is +0 unless both addends are -0. Overflow gives Inf of the sum's sign.
// Any NaN input and Inf + -Inf give the canonical NaN 32'h7FC00000.
// Bit-exact C model: npu_fp32_add() in sw/ref/bf16.c (the same steps).
module npu_fp32_add (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output reg  [31:0] s
);
    wire [7:0] ea = a[30:23], eb = b[30:23];
    wire       a_zero = ea == 8'd0, b_zero = eb == 8'd0;    // zero or denormal
    wire       a_inf = &ea && ~|a[22:0], b_inf = &eb && ~|b[22:0];
    wire       a_nan = &ea && |a[22:0],  b_nan = &eb && |b[22:0];
    wire       sub = a[31] ^ b[31];

    // x: the operand of larger magnitude (exponent, then fraction: the unsigned order of the
    // low 31 bits); the sum takes its sign.
    wire        swap = b[30:0] > a[30:0];
    wire [30:0] x = swap ? b[30:0] : a[30:0];
    wire [30:0] y = swap ? a[30:0] : b[30:0];
    wire        sx = swap ? b[31] : a[31];
    wire [7:0]  d = x[30:23] - y[30:23];

    // Significands with the hidden bit and three bits below the LSB (guard, round, sticky).
    // y is shifted right by d; whatever falls off ORs into the sticky bit (all of it for d >= 27).
    wire [26:0] mx = {1'b1, x[22:0], 3'd0};
    wire [26:0] my = {1'b1, y[22:0], 3'd0};
    wire [26:0] my_sh = my >> d;
    wire        sticky = |(my & ~({27{1'b1}} << d));
    wire [26:0] my_al = {my_sh[26:1], my_sh[0] | sticky};
    wire [27:0] sum = sub ? {1'b0, mx} - {1'b0, my_al} : {1'b0, mx} + {1'b0, my_al};

    // Leading zeros of a 27-bit value (27 for zero).
    function [4:0] lzc27;
        input [26:0] v;
        integer i;
        begin
            lzc27 = 5'd27;
            for (i = 0; i < 27; i = i + 1)
                if (v[i]) lzc27 = 5'd26 - i[4:0];
        end
    endfunction

    // Normalise: a carry (bit 27) shifts right one place keeping the sticky bit; otherwise the
    // leading one moves left to bit 26 (cancellation). Exponent in 10-bit two's complement.
    wire [4:0]  lz = lzc27(sum[26:0]);
    // m[26] is that leading one, hidden in the result: unused by design.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [26:0] m = sum[27] ? {sum[27:2], sum[1] | sum[0]} : sum[26:0] << lz;
    /* verilator lint_on UNUSEDSIGNAL */
    wire [9:0]  e = sum[27] ? {2'd0, x[30:23]} + 10'd1 : {2'd0, x[30:23]} - {5'd0, lz};

    // Round to nearest even on the guard bit m[2]; a carry out of the fraction runs into the
    // exponent field ({exponent, fraction} + 1), possibly into Inf.
    wire        up = m[2] && (m[1] || m[0] || m[3]);
    wire [32:0] r = {e, m[25:3]} + {32'd0, up};
    wire        underflow = e[9] || e == 10'd0;
    wire        overflow = !r[32] && r[31:23] >= 9'd255;

    always @* begin
        if (a_nan || b_nan || (a_inf && b_inf && sub))
            s = 32'h7FC0_0000;
        else if (a_inf)
            s = a;
        else if (b_inf)
            s = b;
        else if (a_zero && b_zero)
            s = {a[31] & b[31], 31'd0};
        else if (a_zero)
            s = b;
        else if (b_zero)
            s = a;
        else if (sum == 28'd0)
            s = 32'd0;                           // x - x = +0
        else if (underflow)
            s = {sx, 31'd0};
        else if (overflow)
            s = {sx, 8'hFF, 23'd0};
        else
            s = {sx, r[30:0]};
    end
endmodule
`default_nettype wire
