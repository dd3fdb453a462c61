`default_nettype none
// npu_bf16_mul: bf16 x bf16 -> fp32, exact; combinational (docs/datapath.md, "bf16 arithmetic"):
// fn_bf16_mul of npu_fp_fn.vh, which states the rules (FTZ, Inf, 0 x Inf = NaN, one NaN).
// Bit-exact C model: npu_bf16_mul() in sw/ref/bf16.c.
module npu_bf16_mul (
    input  wire [15:0] a,
    input  wire [15:0] b,
    output reg  [31:0] p
);
`include "npu_fp_fn.vh"
    always @* p = fn_bf16_mul(a, b);
endmodule
`default_nettype wire
