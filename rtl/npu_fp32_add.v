`default_nettype none
// npu_fp32_add: fp32 + fp32 -> fp32, round to nearest even; combinational (docs/datapath.md,
// "bf16 arithmetic"): fn_fp32_add of npu_fp_fn.vh, which states the rules (FTZ, RNE, one NaN).
// Bit-exact C model: npu_fp32_add() in sw/ref/bf16.c (the same steps).
module npu_fp32_add (
    input  wire [31:0] a,
    input  wire [31:0] b,
    output reg  [31:0] s
);
`include "npu_fp_fn.vh"
    always @* s = fn_fp32_add(a, b);
endmodule
`default_nettype wire
