`default_nettype none
// npu_core: one S x S FlexSA core (docs/datapath.md). No internal skew: the caller delivers
// row j already delayed j cycles. A enters at the left and leaves at the right edge (for the
// neighbouring core), psums enter at the top and leave at the bottom. Weights: a bus per column
// (w_in, lane c) and a one-hot row select (w_row): the selected row's PEs write bank w_bank,
// column c c cycles after the row is offered (a delay line per column), so a row's writes follow
// the A rows' wavefront as it crosses the core (docs/datapath.md "Weight banks").
// PE nets are declared per PE (not as one flattened vector) because event-driven simulators
// re-evaluate every reader of a vector when any slice of it changes.
// Not traced: the S x S PE internals would dominate the FST and slow every traced build by a
// quarter; a core's inputs and outputs are visible in npu_flexsa.
/* verilator tracing_off */
module npu_core #(
    parameter S    = 8,
    parameter BF16 = 0   // npu_pe's number format: 0 int16/int32, 1 bf16/fp32
) (
    input  wire            clk,
    input  wire [S*16-1:0] a_in,      // left edge, row j
    input  wire [S-1:0]    sel_in,
    output wire [S*16-1:0] a_out,     // right edge (column S-1), row j
    output wire [S-1:0]    sel_out,
    input  wire [S*32-1:0] psum_in,   // top, column c
    output wire [S*32-1:0] psum_out,  // bottom (row S-1), column c
    input  wire [S-1:0]    w_row,     // one-hot: the PE row whose bank w_bank is written
    input  wire            w_bank,
    input  wire [S*16-1:0] w_in       // column c's weight bus (every row)
);
    genvar r, c;
    // column c's weight write, delayed c cycles: {row select, bank, data}
    wire [S-1:0]    wr_c [0:S-1];
    wire            wb_c [0:S-1];
    wire [15:0]     wd_c [0:S-1];
    generate
        for (c = 0; c < S; c = c + 1) begin : g_wskew
            if (c == 0) begin : g_now
                assign wr_c[c] = w_row;
                assign wb_c[c] = w_bank;
                assign wd_c[c] = w_in[15:0];
            end else begin : g_delay
                reg [S+16:0] d [0:c-1];   // stage j: the write offered j + 1 cycles ago
                integer j;
                always @(posedge clk) begin
                    d[0] <= {w_row, w_bank, w_in[c*16 +: 16]};
                    for (j = 1; j < c; j = j + 1) d[j] <= d[j-1];
                end
                assign wr_c[c] = d[c-1][S+16:17];
                assign wb_c[c] = d[c-1][16];
                assign wd_c[c] = d[c-1][15:0];
            end
        end
        for (r = 0; r < S; r = r + 1) begin : g_row
            for (c = 0; c < S; c = c + 1) begin : g_col
                wire [15:0] a_i, a_o;
                wire        s_i, s_o;
                wire [31:0] p_i, p_o;

                if (c == 0) begin : g_left
                    assign a_i = a_in[r*16 +: 16];
                    assign s_i = sel_in[r];
                end else begin : g_inner_h
                    assign a_i = g_row[r].g_col[c-1].a_o;
                    assign s_i = g_row[r].g_col[c-1].s_o;
                end
                if (r == 0) begin : g_top
                    assign p_i = psum_in[c*32 +: 32];
                end else begin : g_inner_v
                    assign p_i = g_row[r-1].g_col[c].p_o;
                end

                npu_pe #(.BF16(BF16)) u_pe (
                    .clk       (clk),
                    .a_in      (a_i),
                    .a_sel_in  (s_i),
                    .psum_in   (p_i),
                    .w_we      (wr_c[c][r]),
                    .w_bank    (wb_c[c]),
                    .w_in      (wd_c[c]),
                    .a_out     (a_o),
                    .a_sel_out (s_o),
                    .psum_out  (p_o)
                );
            end
            assign a_out[r*16 +: 16] = g_row[r].g_col[S-1].a_o;
            assign sel_out[r]        = g_row[r].g_col[S-1].s_o;
        end
        for (c = 0; c < S; c = c + 1) begin : g_bottom
            assign psum_out[c*32 +: 32] = g_row[S-1].g_col[c].p_o;
        end
    endgenerate
endmodule
`default_nettype wire
