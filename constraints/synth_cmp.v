`default_nettype none
// Reference designs for the FlexSA overhead comparison of `make synth` (issue 7). Synthesis only:
// not part of the NPU, not simulated. See constraints/README.md.
//
// npu_core_ref: one stand-alone S x S core as a design without FlexSA would build it, with the
// same per-stream logic npu_flexsa gives each of its cores and nothing else:
//   - a zeroed while the stream is invalid (the PEs have no valid bit),
//   - row j skewed by j cycles ({sel, a}, j registers of 17 bits),
//   - the output tag/valid pipeline (2S-1 stages; lane c of the bottom row is valid S+c cycles
//     after its row entered), valid bits reset, tags not.
// What it lacks compared with a FlexSA core: the M_H / M_P muxes, the +S delay rings of streams
// 2/3, the tag-entry muxes, top_vld masking and the ring pointer.
// With S' = 2S it is the monolithic 2S x 2S array with its own (2S-row) skew and tags.
module npu_core_ref #(
    parameter S    = 8,
    parameter TAGW = 12
) (
    input  wire              clk,
    input  wire              rst_n,
    input  wire              inj_vld,
    input  wire [S*16-1:0]   inj_a,
    input  wire              inj_sel,
    input  wire [TAGW-1:0]   inj_tag,
    input  wire [S-1:0]      w_row,
    input  wire              w_bank,
    input  wire [S*16-1:0]   w_in,
    output wire [S-1:0]      out_vld,
    output wire [S*TAGW-1:0] out_tag,
    output wire [S*32-1:0]   out_data
);
    localparam PW = 17;
    wire [S*16-1:0] sk_a;
    wire [S-1:0]    sk_sel;
    genvar j, i;
    generate
        for (j = 0; j < S; j = j + 1) begin : g_row
            wire [PW-1:0] p = {inj_sel, inj_vld ? inj_a[j*16 +: 16] : 16'd0};
            for (i = 0; i < j; i = i + 1) begin : g_st
                reg [PW-1:0] r;
                if (i == 0) begin : g_first
                    always @(posedge clk) r <= p;
                end else begin : g_next
                    always @(posedge clk) r <= g_st[i-1].r;
                end
            end
            if (j == 0) begin : g_d0
                assign {sk_sel[j], sk_a[j*16 +: 16]} = p;
            end else begin : g_dn
                assign {sk_sel[j], sk_a[j*16 +: 16]} = g_st[j-1].r;
            end
        end
    endgenerate

    /* verilator lint_off UNUSED */
    wire [S*16-1:0] a_o;
    wire [S-1:0]    s_o;
    /* verilator lint_on UNUSED */
    npu_core #(.S(S)) u_core (
        .clk(clk), .a_in(sk_a), .sel_in(sk_sel), .a_out(a_o), .sel_out(s_o),
        .psum_in({S*32{1'b0}}), .psum_out(out_data),
        .w_row(w_row), .w_bank(w_bank), .w_in(w_in));

    reg [2*S-2:0] cv;
    always @(posedge clk) begin
        if (!rst_n) cv <= {(2*S-1){1'b0}};
        else        cv <= {cv[2*S-3:0], inj_vld};
    end
    generate
        for (i = 0; i < 2*S-1; i = i + 1) begin : g_tag
            reg [TAGW-1:0] t;
            if (i == 0) begin : g_first
                always @(posedge clk) t <= inj_tag;
            end else begin : g_next
                always @(posedge clk) t <= g_tag[i-1].t;
            end
            if (i >= S-1) begin : g_lane
                assign out_tag[(i-(S-1))*TAGW +: TAGW] = t;
            end
        end
    endgenerate
    assign out_vld = cv[S-1 +: S];
endmodule

// synth_cmp: holds the reference designs side by side (hierarchical synthesis: each is reported
// on its own; this wrapper only passes ports through). Design (a), npu_flexsa as built, and the
// PE come from the NPU's own netlist (synth.sh blackboxes npu_pe here), so all three designs
// share one gate-level PE.
module synth_cmp #(
    parameter S         = 8,
    parameter OBUF_ROWS = 256,
    parameter TAGW      = $clog2(2 * OBUF_ROWS) + 3    // as npu_top: {last, bank, acc, obuf row}
) (
    input  wire                clk,
    input  wire                rst_n,
    // (b) one naive core (the report counts it four times)
    input  wire                b_inj_vld,
    input  wire [S*16-1:0]     b_inj_a,
    input  wire                b_inj_sel,
    input  wire [TAGW-1:0]     b_inj_tag,
    input  wire [S-1:0]        b_w_row,
    input  wire                b_w_bank,
    input  wire [S*16-1:0]     b_w_in,
    output wire [S-1:0]        b_out_vld,
    output wire [S*TAGW-1:0]   b_out_tag,
    output wire [S*32-1:0]     b_out_data,
    // (c) monolithic 2S x 2S
    input  wire                c_inj_vld,
    input  wire [2*S*16-1:0]   c_inj_a,
    input  wire                c_inj_sel,
    input  wire [TAGW-1:0]     c_inj_tag,
    input  wire [2*S-1:0]      c_w_row,
    input  wire                c_w_bank,
    input  wire [2*S*16-1:0]   c_w_in,
    output wire [2*S-1:0]      c_out_vld,
    output wire [2*S*TAGW-1:0] c_out_tag,
    output wire [2*S*32-1:0]   c_out_data
);
    npu_core_ref #(.S(S), .TAGW(TAGW)) u_four (
        .clk(clk), .rst_n(rst_n), .inj_vld(b_inj_vld), .inj_a(b_inj_a), .inj_sel(b_inj_sel),
        .inj_tag(b_inj_tag), .w_row(b_w_row), .w_bank(b_w_bank), .w_in(b_w_in),
        .out_vld(b_out_vld), .out_tag(b_out_tag), .out_data(b_out_data));

    npu_core_ref #(.S(2*S), .TAGW(TAGW)) u_mono (
        .clk(clk), .rst_n(rst_n), .inj_vld(c_inj_vld), .inj_a(c_inj_a), .inj_sel(c_inj_sel),
        .inj_tag(c_inj_tag), .w_row(c_w_row), .w_bank(c_w_bank), .w_in(c_w_in),
        .out_vld(c_out_vld), .out_tag(c_out_tag), .out_data(c_out_data));
endmodule
`default_nettype wire
