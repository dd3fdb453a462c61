`default_nettype none
// npu_core: one S x S FlexSA core (docs/design.md §5). No internal skew: the caller delivers
// row j already delayed j cycles. A enters at the left and leaves at the right edge (for the
// neighbouring core), psums enter at the top and leave at the bottom. The weight chain runs
// down each column: after S pushes the first word pushed sits in row S-1.
module npu_core #(
    parameter S = 8
) (
    input  wire            clk,
    input  wire [S*16-1:0] a_in,      // left edge, row j
    input  wire [S-1:0]    sel_in,
    output wire [S*16-1:0] a_out,     // right edge (column S-1), row j
    output wire [S-1:0]    sel_out,
    input  wire [S*32-1:0] psum_in,   // top, column c
    output wire [S*32-1:0] psum_out,  // bottom (row S-1), column c
    input  wire            w_shift,
    input  wire            w_bank,
    input  wire [S*16-1:0] w_in       // top of column c
);
    // Inter-PE nets. ah/sh: horizontal, index r*(S+1)+c (c = S is the right edge).
    // pv/wv: vertical, index r*S+c (r = S is the bottom edge).
    wire [S*(S+1)*16-1:0] ah;
    wire [S*(S+1)-1:0]    sh;
    wire [(S+1)*S*32-1:0] pv;
    // The bottom row's w_out has nowhere to go.
    /* verilator lint_off UNUSED */
    wire [(S+1)*S*16-1:0] wv;
    /* verilator lint_on UNUSED */

    genvar r, c;
    generate
        for (r = 0; r < S; r = r + 1) begin : g_edge_r
            assign ah[(r*(S+1))*16 +: 16] = a_in[r*16 +: 16];
            assign sh[r*(S+1)]            = sel_in[r];
            assign a_out[r*16 +: 16]      = ah[(r*(S+1)+S)*16 +: 16];
            assign sel_out[r]             = sh[r*(S+1)+S];
        end
        for (c = 0; c < S; c = c + 1) begin : g_edge_c
            assign pv[c*32 +: 32]           = psum_in[c*32 +: 32];
            assign wv[c*16 +: 16]           = w_in[c*16 +: 16];
            assign psum_out[c*32 +: 32]     = pv[(S*S+c)*32 +: 32];
        end
        for (r = 0; r < S; r = r + 1) begin : g_row
            for (c = 0; c < S; c = c + 1) begin : g_col
                npu_pe u_pe (
                    .clk       (clk),
                    .a_in      (ah[(r*(S+1)+c)*16 +: 16]),
                    .a_sel_in  (sh[r*(S+1)+c]),
                    .psum_in   (pv[(r*S+c)*32 +: 32]),
                    .w_shift   (w_shift),
                    .w_bank    (w_bank),
                    .w_in      (wv[(r*S+c)*16 +: 16]),
                    .a_out     (ah[(r*(S+1)+c+1)*16 +: 16]),
                    .a_sel_out (sh[r*(S+1)+c+1]),
                    .psum_out  (pv[((r+1)*S+c)*32 +: 32]),
                    .w_out     (wv[((r+1)*S+c)*16 +: 16])
                );
            end
        end
    endgenerate
endmodule
`default_nettype wire
