`default_nettype none
// npu_vec_lane_fp: one lane of the vector unit in bf16 configs (docs/isa.md "VEC", element rules
// of the bf16 configs). fp32 arithmetic with the units of docs/datapath.md section 6: products
// npu_fp32_mul, sums npu_fp32_add (RNE, FTZ, canonical NaN); 16-bit results npu_fp32_to_bf16.
//   in:  x, y: the lane's a and b elements, raw (16-bit: bf16 in [15:0]; x16 says which);
//        alpha, beta: fp32 scalars; vop; mul: stage 1 takes x, y (products registered);
//        add: stage 2 takes stage 1 (the result registered in r); first: SUM's first row (the
//        running sum restarts from +0).
//   out: r (fp32, registered), r16 = bf16 RNE of r (combinational).
// Two stages, so a product and a sum are never in one cycle (the PE's depth is the reference).
module npu_vec_lane_fp (
    input  wire        clk,
    input  wire [3:0]  vop,
    input  wire        x16,
    input  wire [31:0] x,
    input  wire [31:0] y,
    input  wire [31:0] alpha,
    input  wire [31:0] beta,
    input  wire        mul,
    input  wire        add,
    input  wire        first,
    output reg  [31:0] r,
    output wire [15:0] r16
);
`include "npu_defs.vh"
    // a bf16 element is the high half of an fp32
    wire [31:0] xf = x16 ? {x[15:0], 16'd0} : x;
    wire [31:0] yf = x16 ? {y[15:0], 16'd0} : y;
    wire [31:0] pa, pb;
    // VMUL multiplies a by the lane's b instead of alpha
    npu_fp32_mul u_ma (.a(vop == VOP_VMUL ? yf : alpha), .b(xf), .p(pa));
    npu_fp32_mul u_mb (.a(beta),  .b(yf), .p(pb));

    reg [31:0] pa_q, pb_q, x_q, y_q;
    always @(posedge clk) if (mul) begin
        pa_q <= pa; pb_q <= pb; x_q <= xf; y_q <= yf;
    end

    // stage 2: the adder's operands by op (SUM: the running sum r, +0 on the first row)
    wire [31:0] s1 = vop == VOP_AXPBY ? pa_q : vop == VOP_SUM ? (first ? 32'd0 : r) : x_q;
    wire [31:0] s2 = vop == VOP_AXPBY ? pb_q : vop == VOP_SUM ? x_q : y_q;
    wire [31:0] sum;
    npu_fp32_add u_add (.a(s1), .b(s2), .s(sum));
    // greater than zero: positive, normal or Inf (a denormal reads as zero), not NaN
    wire x_nan = &x_q[30:23] && |x_q[22:0];
    wire y_nan = &y_q[30:23] && |y_q[22:0];
    wire x_pos = !x_q[31] && |x_q[30:23] && !x_nan;
    wire y_pos = !y_q[31] && |y_q[30:23] && !y_nan;
    // x as every unit passes a value on: NaN canonical, a denormal to zero of its sign
    wire [31:0] x_can = x_nan ? 32'h7FC0_0000 : |x_q[30:23] ? x_q : {x_q[31], 31'd0};
    always @(posedge clk) if (add) begin
        case (vop)
            VOP_ADD, VOP_AXPBY, VOP_SUM: r <= sum;
            VOP_MUL, VOP_VMUL: r <= pa_q;
            VOP_RELU:     r <= x_nan ? 32'h7FC0_0000 : x_pos ? x_q : 32'd0;
            VOP_RELU_BWD: r <= y_pos ? x_can : 32'd0;
            default:      r <= x_can;                 // NARROW, WIDEN
        endcase
    end
    npu_fp32_to_bf16 u_cvt (.x(r), .y(r16));
endmodule
`default_nettype wire
