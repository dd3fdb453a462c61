`default_nettype none
// npu_pe: one weight-stationary MAC cell of the FlexSA array (docs/datapath.md).
// A moves right, partial sums move down, both registered (one cycle per PE).
// Two stationary registers: the bank named by a_sel (which travels with the row) computes while
// the other bank is written (w_we, w_bank) from the column's weight bus, so the next tile
// preloads during the current wave. A bank is written one PE row per cycle, top row first, right
// behind the last row that uses it (npu_exec_ldw): the write follows the data's wavefront.
// BF16 = 0: int16 x int16 -> int32 with wrap-around. BF16 = 1 (issue 15; no config uses it
// yet): a and w are bf16, psum fp32, psum + a * w with the product exact and one RNE rounding
// (docs/datapath.md section 6, C model npu_bf16_mac in sw/ref/bf16.c).
// Invalid A rows carry a = 0, so there is no valid bit. In bf16, 0 x Inf is NaN: weights of
// K lanes that see a = 0 in valid rows must be finite (LDW's zero rows are).
// No reset: datapath only.
// Not traced: the S x S PE internals would dominate the FST and slow every traced build by a
// quarter; a core's inputs and outputs are visible in npu_flexsa.
/* verilator tracing_off */
module npu_pe #(
    parameter BF16 = 0
) (
    input  wire        clk,
    input  wire [15:0] a_in,
    input  wire        a_sel_in,
    input  wire [31:0] psum_in,
    input  wire        w_we,
    input  wire        w_bank,
    input  wire [15:0] w_in,
    output reg  [15:0] a_out,
    output reg         a_sel_out,
    output reg  [31:0] psum_out
);
    reg [15:0] w0, w1;

    wire [15:0] w_cur = a_sel_in ? w1 : w0;
`include "npu_fp_fn.vh"
    generate
        if (BF16 != 0) begin : g_bf16
            // The MAC in the clocked block, through the functions of npu_fp_fn.vh (the units
            // npu_bf16_mul and npu_fp32_add are the same functions), so that a simulator
            // computes it only when it matters: with a zero or denormal a and a finite weight
            // the product is a zero of sign a ^ w, and psum + that zero is psum (a NaN psum:
            // the canonical NaN; a zero or denormal psum: the zero of sign psum & product), as
            // fn_fp32_add's cases say. An idle array (a = 0) then costs little to simulate.
            // Synthesis builds the same function either way.
            wire a_zero = a_in[14:7] == 8'd0;
            wire w_finite = w_cur[14:7] != 8'hFF;
            wire p_nan = &psum_in[30:23] && |psum_in[22:0];
            always @(posedge clk) begin
                if (a_zero && w_finite)
                    psum_out <= p_nan ? 32'h7FC0_0000
                              : psum_in[30:23] == 8'd0 ? {psum_in[31] & (a_in[15] ^ w_cur[15]), 31'd0}
                              : psum_in;
                else
                    psum_out <= fn_fp32_add(psum_in, fn_bf16_mul(a_in, w_cur));
            end
        end else begin : g_int16
            // Operands sign-extended to 32 bits. (x ^ 0x8000) - 0x8000 equals {{16{x[15]}}, x},
            // but the simulator's C++ for it is 3 instructions instead of 5, and this MAC is the
            // hot spot of the whole NPU simulation. The low 32 bits of the product are the exact
            // int16 x int16 product; the accumulation wraps at 32 bits as the contract requires.
            // Synthesis sees the plain signed 16 x 16 product instead (same value): from the
            // xor/subtract form Yosys builds a 32 x 32 multiplier, 30% larger (Yosys defines
            // SYNTHESIS, Verilator not).
`ifdef SYNTHESIS
            wire [31:0] prod = $signed(a_in) * $signed(w_cur);
`else
            wire [31:0] a_x = ({16'd0, a_in}  ^ 32'h8000) - 32'h8000;
            wire [31:0] w_x = ({16'd0, w_cur} ^ 32'h8000) - 32'h8000;
            wire [31:0] prod = a_x * w_x;
`endif
            always @(posedge clk) psum_out <= psum_in + prod;
        end
    endgenerate

    always @(posedge clk) begin
        a_out     <= a_in;
        a_sel_out <= a_sel_in;
        if (w_we) begin
            if (w_bank) w1 <= w_in;
            else        w0 <= w_in;
        end
    end
endmodule
`default_nettype wire
