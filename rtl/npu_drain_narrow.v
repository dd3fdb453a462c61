`default_nettype none
// npu_drain_narrow: one OBUF row's 2S 32-bit lanes as 2S 16-bit lanes in one SPM word, for a
// DRAIN with narrow = 1 (docs/isa.md "DRAIN"): lane l of the row -> lane l of the word.
//   BF16 = 1: fp32 -> bf16, round to nearest even (npu_fp32_to_bf16); shift is 0 (BAD_DESC else).
//   BF16 = 0: int32 -> int16 by a rounding arithmetic shift right by `shift` (add 2^(shift-1)
//             when shift > 0, in 33 bits so it cannot wrap, then >>> shift), saturated to
//             [-32768, 32767]: a layer's int32 output scaled back to the int16 operands of the
//             next layer.
// Combinational: it sits between the OBUF's registered read data and the SPM write port.
module npu_drain_narrow #(
    parameter S    = 8,
    parameter BF16 = 0
) (
    input  wire [2*S*32-1:0] row,
    input  wire [4:0]        shift,
    output wire [2*S*16-1:0] word
);
    genvar l;
    generate
        for (l = 0; l < 2*S; l = l + 1) begin : g_lane
            wire [31:0] x = row[l*32 +: 32];
            if (BF16 != 0) begin : g_bf16
                npu_fp32_to_bf16 u_cvt (.x(x), .y(word[l*16 +: 16]));
            end else begin : g_int16
                wire [32:0] half = (shift == 5'd0) ? 33'd0 : (33'd1 << (shift - 5'd1));
                wire signed [32:0] xr = $signed({x[31], x}) + $signed(half);
                wire signed [32:0] xs = xr >>> shift;
                // saturate: in range iff bits [32:15] are all equal (sign extension of bit 15)
                wire in_range = (xs[32:15] == {18{1'b0}}) || (xs[32:15] == {18{1'b1}});
                assign word[l*16 +: 16] = in_range ? xs[15:0] : (xs[32] ? 16'h8000 : 16'h7FFF);
            end
        end
        if (BF16 != 0) begin : g_unused
            wire unused = &{1'b0, shift};
        end
    endgenerate
endmodule
`default_nettype wire
