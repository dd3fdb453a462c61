// npu_fp_fn.vh: the bf16 / fp32 arithmetic as functions (docs/datapath.md section 6), included
// inside a module. The combinational units npu_bf16_mul and npu_fp32_add are these functions;
// npu_pe calls them from its clocked block, so a simulator evaluates them only in the cycles that
// need them (an idle bf16 array then costs little to simulate). Bit-exact C models:
// npu_bf16_mul() and npu_fp32_add() in sw/ref/bf16.c.

// bf16 x bf16 -> fp32, exact. The 8-bit significands' 16-bit product fits fp32's 24, so nothing
// is rounded: the exact product, Inf of its sign at 2^128 and above, zero of its sign below
// 2^-126 (FTZ). Denormal inputs read as zero of their sign. Any NaN input, and 0 x Inf, give the
// canonical NaN 32'h7FC00000.
function [31:0] fn_bf16_mul(input [15:0] f_a, input [15:0] f_b);
    reg       f_sign, f_a_zero, f_b_zero, f_a_inf, f_b_inf, f_a_nan, f_b_nan, f_overflow, f_underflow;
    reg [15:0] f_m;
    reg [9:0]  f_e;
    reg [22:0] f_frac;
    begin
        f_sign = f_a[15] ^ f_b[15];
        f_a_zero = f_a[14:7] == 8'd0;
        f_b_zero = f_b[14:7] == 8'd0;                  // zero or denormal
        f_a_inf = &f_a[14:7] && ~|f_a[6:0];
        f_b_inf = &f_b[14:7] && ~|f_b[6:0];
        f_a_nan = &f_a[14:7] && |f_a[6:0];
        f_b_nan = &f_b[14:7] && |f_b[6:0];
        // Significands with their hidden bits: the product is in [2^14, 2^16).
        f_m = {8'd0, 1'b1, f_a[6:0]} * {8'd0, 1'b1, f_b[6:0]};
        // Biased exponent, two's complement in 10 bits (-125 .. 382 for normal inputs); a product
        // in [2, 4) (m[15]) moves up one binade.
        f_e = {2'd0, f_a[14:7]} + {2'd0, f_b[14:7]} + {9'd0, f_m[15]} - 10'd127;
        f_frac = f_m[15] ? {f_m[14:0], 8'd0} : {f_m[13:0], 9'd0};
        f_overflow = !f_e[9] && f_e[8:0] >= 9'd255;
        f_underflow = f_e[9] || f_e == 10'd0;
        if (f_a_nan || f_b_nan || (f_a_inf && f_b_zero) || (f_a_zero && f_b_inf))
            fn_bf16_mul = 32'h7FC0_0000;
        else if (f_a_inf || f_b_inf || (!f_a_zero && !f_b_zero && f_overflow))
            fn_bf16_mul = {f_sign, 8'hFF, 23'd0};
        else if (f_a_zero || f_b_zero || f_underflow)
            fn_bf16_mul = {f_sign, 31'd0};
        else
            fn_bf16_mul = {f_sign, f_e[7:0], f_frac};
    end
endfunction

// Leading zeros of a 27-bit value (27 for zero).
function [4:0] fn_lzc27(input [26:0] f_v);
    integer f_i;
    begin
        fn_lzc27 = 5'd27;
        for (f_i = 0; f_i < 27; f_i = f_i + 1)
            if (f_v[f_i]) fn_lzc27 = 5'd26 - f_i[4:0];
    end
endfunction

// fp32 + fp32 -> fp32, round to nearest even. Denormal inputs read as zero of their sign; a
// result below 2^-126 flushes to zero of its sign (such a sum is exact, so flushing before
// rounding loses nothing else). An exact-zero sum is +0 unless both addends are -0. Overflow
// gives Inf of the sum's sign. Any NaN input and Inf + -Inf give the canonical NaN.
function [31:0] fn_fp32_add(input [31:0] f_a, input [31:0] f_b);
    reg        f_a_zero, f_b_zero, f_a_inf, f_b_inf, f_a_nan, f_b_nan, f_sub, f_swap, f_sx, f_sticky, f_up;
    reg        f_underflow, f_overflow;
    reg [30:0] f_x, f_y;
    reg [7:0]  f_d;
    reg [26:0] f_mx, f_my, f_my_sh, f_my_al;
    // f_m[26] is the leading one, hidden in the result: unused by design.
    /* verilator lint_off UNUSEDSIGNAL */
    reg [26:0] f_m;
    /* verilator lint_on UNUSEDSIGNAL */
    reg [27:0] f_sum;
    reg [4:0]  f_lz;
    reg [9:0]  f_e;
    reg [32:0] f_r;
    begin
        f_a_zero = f_a[30:23] == 8'd0;
        f_b_zero = f_b[30:23] == 8'd0;                 // zero or denormal
        f_a_inf = &f_a[30:23] && ~|f_a[22:0];
        f_b_inf = &f_b[30:23] && ~|f_b[22:0];
        f_a_nan = &f_a[30:23] && |f_a[22:0];
        f_b_nan = &f_b[30:23] && |f_b[22:0];
        f_sub = f_a[31] ^ f_b[31];
        // x: the operand of larger magnitude (exponent, then fraction: the unsigned order of the
        // low 31 bits); the sum takes its sign.
        f_swap = f_b[30:0] > f_a[30:0];
        f_x = f_swap ? f_b[30:0] : f_a[30:0];
        f_y = f_swap ? f_a[30:0] : f_b[30:0];
        f_sx = f_swap ? f_b[31] : f_a[31];
        f_d = f_x[30:23] - f_y[30:23];
        // Significands with the hidden bit and three bits below the LSB (guard, round, sticky).
        // y is shifted right by d; whatever falls off ORs into the sticky bit (all for d >= 27).
        f_mx = {1'b1, f_x[22:0], 3'd0};
        f_my = {1'b1, f_y[22:0], 3'd0};
        f_my_sh = f_my >> f_d;
        f_sticky = |(f_my & ~({27{1'b1}} << f_d));
        f_my_al = {f_my_sh[26:1], f_my_sh[0] | f_sticky};
        f_sum = f_sub ? {1'b0, f_mx} - {1'b0, f_my_al} : {1'b0, f_mx} + {1'b0, f_my_al};
        // Normalise: a carry (bit 27) shifts right one place keeping the sticky bit; otherwise
        // the leading one moves left to bit 26 (cancellation). Exponent in 10-bit two's
        // complement. m[26] is that leading one, hidden in the result.
        f_lz = fn_lzc27(f_sum[26:0]);
        f_m = f_sum[27] ? {f_sum[27:2], f_sum[1] | f_sum[0]} : f_sum[26:0] << f_lz;
        f_e = f_sum[27] ? {2'd0, f_x[30:23]} + 10'd1 : {2'd0, f_x[30:23]} - {5'd0, f_lz};
        // Round to nearest even on the guard bit m[2]; a carry out of the fraction runs into the
        // exponent field ({exponent, fraction} + 1), possibly into Inf.
        f_up = f_m[2] && (f_m[1] || f_m[0] || f_m[3]);
        f_r = {f_e, f_m[25:3]} + {32'd0, f_up};
        f_underflow = f_e[9] || f_e == 10'd0;
        f_overflow = !f_r[32] && f_r[31:23] >= 9'd255;
        if (f_a_nan || f_b_nan || (f_a_inf && f_b_inf && f_sub))
            fn_fp32_add = 32'h7FC0_0000;
        else if (f_a_inf)
            fn_fp32_add = f_a;
        else if (f_b_inf)
            fn_fp32_add = f_b;
        else if (f_a_zero && f_b_zero)
            fn_fp32_add = {f_a[31] & f_b[31], 31'd0};
        else if (f_a_zero)
            fn_fp32_add = f_b;
        else if (f_b_zero)
            fn_fp32_add = f_a;
        else if (f_sum == 28'd0)
            fn_fp32_add = 32'd0;                   // x - x = +0
        else if (f_underflow)
            fn_fp32_add = {f_sx, 31'd0};
        else if (f_overflow)
            fn_fp32_add = {f_sx, 8'hFF, 23'd0};
        else
            fn_fp32_add = {f_sx, f_r[30:0]};
    end
endfunction
