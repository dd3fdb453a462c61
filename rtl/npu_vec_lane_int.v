`default_nettype none
// npu_vec_lane_int: one lane of the vector unit in int16 configs (docs/isa.md "VEC", element
// rules of the int16 configs): exact integer arithmetic; a 32-bit result keeps the low 32 bits
// of the exact value (wrap-around), a 16-bit one saturates it to int16. MUL, VMUL, AXPBY and
// NARROW divide by 2^shift rounding half up: (v + 2^(shift-1)) >>> shift, on the exact value (the
// DRAIN narrow's rule). VMUL (16-bit only) multiplies by the lane's b instead of alpha.
//   in:  x, y: the lane's a and b elements, raw (16-bit: int16 in [15:0]; x16 says which);
//        alpha, beta: int16 scalars; shift; vop; mul, add, first: the stages (npu_vec_lane_fp).
//   out: r32 = the low 32 bits of the result, r16 = the result saturated to int16.
// Widths: alpha * x is 48 bits (int16 x int32), alpha * x + beta * y 49, with the rounding
// constant (< 2^31) 50; r is 50 bits, so SUM's exact sum of up to 4095 int32 rows fits too.
module npu_vec_lane_int (
    input  wire        clk,
    input  wire [3:0]  vop,
    input  wire        x16,
    input  wire [31:0] x,
    input  wire [31:0] y,
    input  wire [15:0] alpha,
    input  wire [15:0] beta,
    input  wire [4:0]  shift,
    input  wire        mul,
    input  wire        add,
    input  wire        first,
    output wire [31:0] r32,
    output wire [15:0] r16
);
`include "npu_defs.vh"
    localparam W = 50;
    wire signed [31:0] xs = x16 ? {{16{x[15]}}, x[15:0]} : x;
    wire signed [31:0] ys = x16 ? {{16{y[15]}}, y[15:0]} : y;
    // VMUL's multiplier is b's int16 (no 32-bit VMUL: its b is y[15:0]); the other ops' alpha
    wire        [15:0] ma = vop == VOP_VMUL ? y[15:0] : alpha;
    wire signed [47:0] pa = $signed(ma) * xs;
    wire signed [47:0] pb = $signed(beta) * ys;

    reg signed [47:0] pa_q, pb_q;
    reg signed [31:0] x_q, y_q;
    // vop and shift hold for the whole VEC, so their decodes are registered with the products
    reg narrow_q, axpby_q;
    reg [31:0] half_q; // the rounding constant 2^(shift-1), 0 without a shift
    always @(posedge clk) if (mul) begin
        pa_q <= pa; pb_q <= pb; x_q <= xs; y_q <= ys;
        narrow_q <= vop == VOP_NARROW; axpby_q <= vop == VOP_AXPBY;
        half_q <= shift == 5'd0 ? 32'd0 : 32'd1 << (shift - 5'd1);
    end

    reg signed [W-1:0] r;
    wire signed [W-1:0] xw = {{(W-32){x_q[31]}}, x_q};
    // The rounded shift of MUL alpha * x, AXPBY alpha * x + beta * y, NARROW x: the operands are
    // selected first and summed with the rounding constant in one three-input add (one
    // carry-save level and one carry chain instead of two chains: the lane's depth).
    wire signed [W-1:0] va = narrow_q ? xw : {{(W-48){pa_q[47]}}, pa_q};
    wire signed [W-1:0] vb = axpby_q ? {{(W-48){pb_q[47]}}, pb_q} : {W{1'b0}};
    wire signed [W-1:0] vr = (va + vb + $signed({{(W-32){1'b0}}, half_q})) >>> shift;
    wire signed [W-1:0] yw = {{(W-32){y_q[31]}}, y_q};
    always @(posedge clk) if (add) begin
        case (vop)
            VOP_ADD:                     r <= xw + yw;
            VOP_MUL, VOP_VMUL, VOP_AXPBY, VOP_NARROW: r <= vr;
            VOP_RELU:                    r <= x_q > 0 ? xw : {W{1'b0}};
            VOP_RELU_BWD:                r <= y_q > 0 ? xw : {W{1'b0}};
            VOP_SUM:                     r <= (first ? {W{1'b0}} : r) + xw;
            default:                     r <= xw;               // WIDEN
        endcase
    end
    assign r32 = r[31:0];
    wire hi = !r[W-1] && r[W-2:15] != {(W-16){1'b0}};   // above 32767
    wire lo = r[W-1] && r[W-2:15] != {(W-16){1'b1}};    // below -32768
    assign r16 = hi ? 16'h7FFF : lo ? 16'h8000 : r[15:0];
endmodule
`default_nettype wire
