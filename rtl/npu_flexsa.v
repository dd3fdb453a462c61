`default_nettype none
// npu_flexsa: the 2x2 FlexSA arrangement of four S x S cores (docs/design.md §5, brief §2.1-2.4).
//
//   core 0 (top-left)    -- M_H1 --> core 1 (top-right)      A: left to right
//      | M_P2                           | M_P3                 psums: top to bottom
//   core 2 (bottom-left) -- M_H3 --> core 3 (bottom-right)
//
// mode 0 FW : one 2S x 2S array. Streams 0 and 2 carry the same row (A[i][0:S], A[i][S:2S]) in
//             the same cycle with the same sel/tag/vld; streams 1 and 3 are unused.
// mode 1 VSW: two 2S-tall x S-wide arrays {0,2} and {1,3}. Streams 0/2 carry one row (upper/lower
//             halves of k), streams 1/3 another row (fed to core 1/3 over bypass (1)).
// mode 2 HSW: two S-tall x 2S-wide arrays {0,1} (stream 0) and {2,3} (stream 2).
// mode 3 ISW: four independent S x S arrays, stream k feeds core k.
// Cores 0/1 results leave on top_* (path (2)) in HSW/ISW; cores 2/3 results always on out_*.
//
// Timing (a stream sampled at the clock edge ending cycle t; outputs are registers, lane valid
// during the cycle given; c = 0..S-1):
//   FW : out lane X (0..2S-1)           at t0 + 2S + X
//   VSW: out lane c (stream 0/2 row)    at t0 + 2S + c;  out lane S+c (stream 1/3 row) at t1 + 2S + c
//   HSW: top lane c at t0 + S + c,  top lane S+c at t0 + 2S + c  (stream 0 row)
//        out lane c at t2 + S + c,  out lane S+c at t2 + 2S + c  (stream 2 row)
//   ISW: top lane c at t0 + S + c,  top lane S+c at t1 + S + c,
//        out lane c at t2 + S + c,  out lane S+c at t3 + S + c
// There are no pipeline stages at core boundaries, so the fused arrays time exactly like one
// monolithic array. The last lane retiring means the row has left the array.
// Tags/valids: top lanes and FW/VSW out lanes carry stream 0/1's tag (the row owner); in HSW/ISW
// out lanes carry stream 2/3's. top_vld is 0 in FW/VSW.
// The mode must not change while rows are in flight (the muxes act on the rows in the array).
// Each stream's a is zeroed by its own inj_vld, so in FW/VSW inj_vld[0]=1 with inj_vld[2]=0 runs
// the row with its lower half A[S:2S] = 0 (tag and valid come from stream 0).
// Requires S >= 2.
module npu_flexsa #(
    parameter S    = 8,
    parameter TAGW = 16
) (
    input  wire                clk,
    input  wire                rst_n,
    input  wire [1:0]          mode,
    input  wire [3:0]          inj_vld,
    input  wire [4*S*16-1:0]   inj_a,
    input  wire [3:0]          inj_sel,
    input  wire [4*TAGW-1:0]   inj_tag,
    input  wire [3:0]          w_shift,
    input  wire [3:0]          w_bank,
    input  wire [4*S*16-1:0]   w_in,
    output wire [2*S-1:0]      out_vld,
    output wire [2*S*TAGW-1:0] out_tag,
    output wire [2*S*32-1:0]   out_data,
    output wire [2*S-1:0]      top_vld,
    output wire [2*S*TAGW-1:0] top_tag,
    output wire [2*S*32-1:0]   top_data
);
    localparam [1:0] M_FW = 2'd0, M_VSW = 2'd1, M_HSW = 2'd2;
    localparam PW = 17;  // a skew-line element: {sel, a}

    // hfuse: cores 1/3 continue the rows of cores 0/2 (M_H1/M_H3 pick the neighbour, not (1)).
    wire hfuse = (mode == M_FW) || (mode == M_HSW);
    // vfuse: cores 2/3 continue the columns of cores 0/1 (M_P2/M_P3 pass psums; +S input skew).
    wire vfuse = (mode == M_FW) || (mode == M_VSW);

    // ---------------- input skew: row j of stream k delayed j (+S in FW/VSW for k >= 2) ----------------
    // stream k, row j at k*S+j. split_var: let Verilator keep the rows as separate variables
    // instead of packing a wide vector every cycle.
    wire [4*S*16-1:0] sk_a   /*verilator split_var*/;
    wire [4*S-1:0]    sk_sel /*verilator split_var*/;

    // The +S delay of streams 2/3 is a ring of S entries per row (a small register file, far cheaper
    // to simulate than an S-deep shift of the whole vector): written every cycle at xp and read at
    // xp before the write, i.e. S cycles later. One pointer serves all rows of both streams.
    localparam XW = $clog2(S);
    localparam integer XLAST = S - 1;
    reg [XW-1:0] xp;
    always @(posedge clk) begin
        if (!rst_n || xp == XLAST[XW-1:0]) xp <= {XW{1'b0}};
        else                               xp <= xp + 1'b1;
    end

    genvar k, j, i;
    generate
        for (k = 0; k < 4; k = k + 1) begin : g_str
            for (j = 0; j < S; j = j + 1) begin : g_row
                // {sel, a}, a zeroed when the stream is invalid (the PEs have no valid bit)
                wire [PW-1:0] p = {inj_sel[k], inj_vld[k] ? inj_a[(k*S+j)*16 +: 16] : 16'd0};
                wire [PW-1:0] q;  // after the optional +S delay
                if (k >= 2) begin : g_xd
                    // Lower half of a vertically fused column: its rows are fused rows S..2S-1.
                    reg [PW-1:0] xm [0:S-1];
                    always @(posedge clk) xm[xp] <= p;
                    assign q = vfuse ? xm[xp] : p;
                end else begin : g_nxd
                    assign q = p;
                end
                // Skew: a shift register of j stages (one variable per stage: no wide-vector shifts).
                for (i = 0; i < j; i = i + 1) begin : g_st
                    reg [PW-1:0] r;
                    if (i == 0) begin : g_first
                        always @(posedge clk) r <= q;
                    end else begin : g_next
                        always @(posedge clk) r <= g_st[i-1].r;
                    end
                end
                if (j == 0) begin : g_d0
                    assign {sk_sel[k*S+j], sk_a[(k*S+j)*16 +: 16]} = q;
                end else begin : g_dn
                    assign {sk_sel[k*S+j], sk_a[(k*S+j)*16 +: 16]} = g_st[j-1].r;
                end
            end
        end
    endgenerate

    // ---------------- cores and the M_H / M_P muxes ----------------
    wire [S*16-1:0] c0_ao, c2_ao;
    wire [S-1:0]    c0_so, c2_so;
    // The right edge of cores 1 and 3 is the edge of the whole array.
    /* verilator lint_off UNUSED */
    wire [S*16-1:0] c1_ao, c3_ao;
    wire [S-1:0]    c1_so, c3_so;
    /* verilator lint_on UNUSED */
    wire [S*32-1:0] c0_po, c1_po, c2_po, c3_po;

    wire [S*16-1:0] c1_ai = hfuse ? c0_ao : sk_a[1*S*16 +: S*16];    // M_H1
    wire [S-1:0]    c1_si = hfuse ? c0_so : sk_sel[1*S +: S];
    wire [S*16-1:0] c3_ai = hfuse ? c2_ao : sk_a[3*S*16 +: S*16];    // M_H3
    wire [S-1:0]    c3_si = hfuse ? c2_so : sk_sel[3*S +: S];
    wire [S*32-1:0] c2_pi = vfuse ? c0_po : {S*32{1'b0}};             // M_P2
    wire [S*32-1:0] c3_pi = vfuse ? c1_po : {S*32{1'b0}};             // M_P3

    npu_core #(.S(S)) u_core0 (
        .clk(clk), .a_in(sk_a[0*S*16 +: S*16]), .sel_in(sk_sel[0*S +: S]),
        .a_out(c0_ao), .sel_out(c0_so), .psum_in({S*32{1'b0}}), .psum_out(c0_po),
        .w_shift(w_shift[0]), .w_bank(w_bank[0]), .w_in(w_in[0*S*16 +: S*16]));
    npu_core #(.S(S)) u_core1 (
        .clk(clk), .a_in(c1_ai), .sel_in(c1_si),
        .a_out(c1_ao), .sel_out(c1_so), .psum_in({S*32{1'b0}}), .psum_out(c1_po),
        .w_shift(w_shift[1]), .w_bank(w_bank[1]), .w_in(w_in[1*S*16 +: S*16]));
    npu_core #(.S(S)) u_core2 (
        .clk(clk), .a_in(sk_a[2*S*16 +: S*16]), .sel_in(sk_sel[2*S +: S]),
        .a_out(c2_ao), .sel_out(c2_so), .psum_in(c2_pi), .psum_out(c2_po),
        .w_shift(w_shift[2]), .w_bank(w_bank[2]), .w_in(w_in[2*S*16 +: S*16]));
    npu_core #(.S(S)) u_core3 (
        .clk(clk), .a_in(c3_ai), .sel_in(c3_si),
        .a_out(c3_ao), .sel_out(c3_so), .psum_in(c3_pi), .psum_out(c3_po),
        .w_shift(w_shift[3]), .w_bank(w_bank[3]), .w_in(w_in[3*S*16 +: S*16]));

    // ---------------- output tag pipeline ----------------
    // e_* is the tag/valid of the row entering core k's row 0 this cycle; core k's bottom column c
    // holds that row's result S+c cycles later. A row reaches core 1 (3) row 0 S cycles after
    // core 0 (2) when hfuse, and core 2 (3) row 0 S cycles after core 0 (1) when vfuse, so the
    // entry of a continued core is the delay-S tap of the core it continues (the row owner).
    wire [3:0]        e_vld;
    wire [4*TAGW-1:0] e_tag;
    wire [4*S-1:0]    lane_vld;   // core k, bottom column c at k*S+c
    wire [4*S*TAGW-1:0] lane_tag;

    assign {e_vld[0], e_tag[0*TAGW +: TAGW]} = {inj_vld[0], inj_tag[0*TAGW +: TAGW]};
    assign {e_vld[1], e_tag[1*TAGW +: TAGW]} = hfuse ? {lane_vld[0*S], lane_tag[(0*S)*TAGW +: TAGW]}
                                                     : {inj_vld[1], inj_tag[1*TAGW +: TAGW]};
    assign {e_vld[2], e_tag[2*TAGW +: TAGW]} = vfuse ? {lane_vld[0*S], lane_tag[(0*S)*TAGW +: TAGW]}
                                                     : {inj_vld[2], inj_tag[2*TAGW +: TAGW]};
    assign {e_vld[3], e_tag[3*TAGW +: TAGW]} = hfuse ? {lane_vld[2*S], lane_tag[(2*S)*TAGW +: TAGW]}
                                             : vfuse ? {lane_vld[1*S], lane_tag[(1*S)*TAGW +: TAGW]}
                                                     : {inj_vld[3], inj_tag[3*TAGW +: TAGW]};

    generate
        for (k = 0; k < 4; k = k + 1) begin : g_tag
            // Stage i holds the entry delayed i+1 cycles; stages S-1 .. 2S-2 are the S lanes.
            // Valid bits are control state (reset); tags are per-stage datapath registers.
            reg [2*S-2:0] cv;
            always @(posedge clk) begin
                if (!rst_n) cv <= {(2*S-1){1'b0}};
                else        cv <= {cv[2*S-3:0], e_vld[k]};
            end
            for (i = 0; i < 2*S-1; i = i + 1) begin : g_st
                reg [TAGW-1:0] t;
                if (i == 0) begin : g_first
                    always @(posedge clk) t <= e_tag[k*TAGW +: TAGW];
                end else begin : g_next
                    always @(posedge clk) t <= g_st[i-1].t;
                end
                if (i >= S-1) begin : g_lane
                    assign lane_tag[(k*S+i-(S-1))*TAGW +: TAGW] = t;
                end
            end
            assign lane_vld[k*S +: S] = cv[S-1 +: S];
        end
    endgenerate

    assign out_vld  = lane_vld[2*S +: 2*S];
    assign out_tag  = lane_tag[2*S*TAGW +: 2*S*TAGW];
    assign out_data = {c3_po, c2_po};
    // Path (2): cores 0/1 bottoms are results only when they do not feed cores 2/3.
    assign top_vld  = lane_vld[0 +: 2*S] & {(2*S){~vfuse}};
    assign top_tag  = lane_tag[0 +: 2*S*TAGW];
    assign top_data = {c1_po, c0_po};
endmodule
`default_nettype wire
