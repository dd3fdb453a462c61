`default_nettype none
`include "npu_assert.vh"
// npu_flexsa: the 2x2 FlexSA arrangement of four S x S cores (docs/datapath.md, brief §2.1-2.4).
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
// Modes are per row: `mode` is the mode of the rows injected this cycle, and every mux decides
// from the mode of the row passing it (carried in the +S ring and in the tag pipelines), so rows
// of different modes may be in the array at the same time and a mode change needs no drained
// array. What the injector must guarantee (npu_exec, "mode change gap"): no two rows enter one
// core in the same cycle, and each core sees its rows in injection order. A row injected at t
// enters core (0, 1, 2, 3) at t + (0, S, S, 2S) in FW, (0, S, 0, S) in HSW, (0, 0, S, S) in VSW,
// (0, 0, 0, 0) in ISW, so a row of mode Y may follow the last row of mode X after
// max_core(off_X - off_Y) + 1 cycles.
// Each stream's a is zeroed by its own inj_vld, so in FW/VSW inj_vld[0]=1 with inj_vld[2]=0 runs
// the row with its lower half A[S:2S] = 0 (tag and valid come from stream 0).
// Requires S >= 2.
module npu_flexsa #(
    parameter S    = 8,
    parameter TAGW = 16,
    parameter BF16 = 0   // the cores' number format (npu_pe); the zero psum entering cores 0/1 is +0 in both
) (
    input  wire                clk,
    input  wire                rst_n,
    input  wire [1:0]          mode,
    input  wire [3:0]          inj_vld,
    input  wire [4*S*16-1:0]   inj_a,
    input  wire [3:0]          inj_sel,
    input  wire [4*TAGW-1:0]   inj_tag,
    input  wire [4*S-1:0]      w_row,     // per core (S bits): one-hot PE row written
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
    // vfuse: cores 2/3 continue the columns of cores 0/1 (M_P2/M_P3 pass psums; +S input skew).
    // Of the rows injected this cycle; each row carries its pair {hf, vf} through the array.
    wire hfuse = (mode == M_FW) || (mode == M_HSW);
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
                    // Lower half of a vertically fused column: its rows are fused rows S..2S-1,
                    // so a vfuse row waits S cycles in the ring (entry bit 17: "take me then");
                    // a row of another mode goes straight in. The injector never has both.
                    reg [PW:0] xm [0:S-1];
                    always @(posedge clk) xm[xp] <= {inj_vld[k] && vfuse, p};
                    wire [PW:0] xo = xm[xp];
                    assign q = xo[PW] ? xo[PW-1:0] : (vfuse ? {PW{1'b0}} : p);
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

    // Per-row / per-column mux selects from the tag pipelines (g_tag below; stage i of core k
    // holds the row that entered core k's row 0 i+1 cycles ago, with its {hf, vf}):
    //   M_H1/M_H3 row j: core 0/2's right edge row j carries the row that entered that core
    //     S + j cycles ago (stage S+j-1); take it if it is an hfuse row, else the bypass (1).
    //   M_P2/M_P3 column c: the row in core 2/3's row 0, column c entered c cycles ago (the entry
    //     itself for c = 0, else stage c-1); pass core 0/1's psum if it is a vfuse row, else 0.
    wire [4*2*S-1:0] st_hf, st_vf;   // core k, stage i (0..2S-2) at k*2S+i: valid row and hf / vf
    wire             e_vf2, e_vf3;   // the entries of cores 2/3 are valid vfuse rows
    wire [S*16-1:0] c1_ai, c3_ai;
    wire [S-1:0]    c1_si, c3_si;
    wire [S*32-1:0] c2_pi, c3_pi;
    generate
        for (j = 0; j < S; j = j + 1) begin : g_mux
            wire h1 = st_hf[0*2*S + S + j - 1];
            wire h3 = st_hf[2*2*S + S + j - 1];
            assign c1_ai[j*16 +: 16] = h1 ? c0_ao[j*16 +: 16] : sk_a[(1*S+j)*16 +: 16];  // M_H1
            assign c1_si[j]          = h1 ? c0_so[j] : sk_sel[1*S+j];
            assign c3_ai[j*16 +: 16] = h3 ? c2_ao[j*16 +: 16] : sk_a[(3*S+j)*16 +: 16];  // M_H3
            assign c3_si[j]          = h3 ? c2_so[j] : sk_sel[3*S+j];
            wire v2 = (j == 0) ? e_vf2 : st_vf[2*2*S + j - 1];
            wire v3 = (j == 0) ? e_vf3 : st_vf[3*2*S + j - 1];
            assign c2_pi[j*32 +: 32] = v2 ? c0_po[j*32 +: 32] : 32'd0;                  // M_P2
            assign c3_pi[j*32 +: 32] = v3 ? c1_po[j*32 +: 32] : 32'd0;                  // M_P3
        end
    endgenerate

    npu_core #(.S(S), .BF16(BF16)) u_core0 (
        .clk(clk), .a_in(sk_a[0*S*16 +: S*16]), .sel_in(sk_sel[0*S +: S]),
        .a_out(c0_ao), .sel_out(c0_so), .psum_in({S*32{1'b0}}), .psum_out(c0_po),
        .w_row(w_row[0*S +: S]), .w_bank(w_bank[0]), .w_in(w_in[0*S*16 +: S*16]));
    npu_core #(.S(S), .BF16(BF16)) u_core1 (
        .clk(clk), .a_in(c1_ai), .sel_in(c1_si),
        .a_out(c1_ao), .sel_out(c1_so), .psum_in({S*32{1'b0}}), .psum_out(c1_po),
        .w_row(w_row[1*S +: S]), .w_bank(w_bank[1]), .w_in(w_in[1*S*16 +: S*16]));
    npu_core #(.S(S), .BF16(BF16)) u_core2 (
        .clk(clk), .a_in(sk_a[2*S*16 +: S*16]), .sel_in(sk_sel[2*S +: S]),
        .a_out(c2_ao), .sel_out(c2_so), .psum_in(c2_pi), .psum_out(c2_po),
        .w_row(w_row[2*S +: S]), .w_bank(w_bank[2]), .w_in(w_in[2*S*16 +: S*16]));
    npu_core #(.S(S), .BF16(BF16)) u_core3 (
        .clk(clk), .a_in(c3_ai), .sel_in(c3_si),
        .a_out(c3_ao), .sel_out(c3_so), .psum_in(c3_pi), .psum_out(c3_po),
        .w_row(w_row[3*S +: S]), .w_bank(w_bank[3]), .w_in(w_in[3*S*16 +: S*16]));

    // ---------------- output tag pipeline ----------------
    // e_* is the tag/valid of the row entering core k's row 0 this cycle, with the row's {hf, vf};
    // core k's bottom column c holds that row's result S+c cycles later. A row reaches core 1 (3)
    // row 0 S cycles after core 0 (2) when it is an hfuse row, and core 2 (3) row 0 S cycles after
    // core 0 (1) when it is a vfuse row, so the entry of a continued core is the delay-S tap of the
    // core it continues (the row owner) when that tap holds such a row; otherwise it is the
    // core's own stream (rows of the modes that inject into it directly).
    localparam EW = TAGW + 2;        // {hf, vf, tag}
    wire [3:0]        e_vld;
    wire [4*EW-1:0]   e_tag;
    wire [4*S-1:0]    lane_vld;   // core k, bottom column c at k*S+c
    wire [4*S*EW-1:0] lane_tag;
    wire [EW-1:0] inj_e0 = {hfuse, vfuse, inj_tag[0*TAGW +: TAGW]};
    wire [EW-1:0] inj_e1 = {hfuse, vfuse, inj_tag[1*TAGW +: TAGW]};
    wire [EW-1:0] inj_e2 = {hfuse, vfuse, inj_tag[2*TAGW +: TAGW]};
    wire [EW-1:0] inj_e3 = {hfuse, vfuse, inj_tag[3*TAGW +: TAGW]};
    wire [EW-1:0] tap0 = lane_tag[(0*S)*EW +: EW];
    wire [EW-1:0] tap1 = lane_tag[(1*S)*EW +: EW];
    wire [EW-1:0] tap2 = lane_tag[(2*S)*EW +: EW];
    wire t0h = lane_vld[0*S] && tap0[EW-1];
    wire t0v = lane_vld[0*S] && tap0[EW-2];
    // core 3 continues core 2 for hfuse rows (FW, HSW) and core 1 for VSW rows (an FW row is
    // in both taps at once: it comes from core 2)
    wire t1v = lane_vld[1*S] && tap1[EW-2] && !tap1[EW-1];
    wire t2h = lane_vld[2*S] && tap2[EW-1];

    assign e_vf2 = e_vld[2] && e_tag[2*EW + EW-2];
    assign e_vf3 = e_vld[3] && e_tag[3*EW + EW-2];
    assign {e_vld[0], e_tag[0*EW +: EW]} = {inj_vld[0], inj_e0};
    assign {e_vld[1], e_tag[1*EW +: EW]} = t0h ? {1'b1, tap0} : {inj_vld[1] && !hfuse, inj_e1};
    assign {e_vld[2], e_tag[2*EW +: EW]} = t0v ? {1'b1, tap0} : {inj_vld[2] && !vfuse, inj_e2};
    assign {e_vld[3], e_tag[3*EW +: EW]} = t2h ? {1'b1, tap2} : t1v ? {1'b1, tap1}
                                         : {inj_vld[3] && !hfuse && !vfuse, inj_e3};

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
                reg [EW-1:0] t;
                if (i == 0) begin : g_first
                    always @(posedge clk) t <= e_tag[k*EW +: EW];
                end else begin : g_next
                    always @(posedge clk) t <= g_st[i-1].t;
                end
                assign st_hf[k*2*S + i] = cv[i] && t[EW-1];
                assign st_vf[k*2*S + i] = cv[i] && t[EW-2];
                if (i >= S-1) begin : g_lane
                    assign lane_tag[(k*S+i-(S-1))*EW +: EW] = t;
                end
            end
            assign st_hf[k*2*S + 2*S-1] = 1'b0;   // padding (2S-1 stages)
            assign st_vf[k*2*S + 2*S-1] = 1'b0;
            assign lane_vld[k*S +: S] = cv[S-1 +: S];
        end
    endgenerate

    // lane outputs: the tag without {hf, vf}; path (2) lanes only for rows that do not continue
    // into cores 2/3
    wire [2*S*TAGW-1:0] lt_out, lt_top;
    wire [2*S-1:0]      lv_top;
    generate
        for (i = 0; i < 2*S; i = i + 1) begin : g_lane_out
            assign lt_top[i*TAGW +: TAGW] = lane_tag[i*EW +: TAGW];
            assign lt_out[i*TAGW +: TAGW] = lane_tag[(2*S+i)*EW +: TAGW];
            assign lv_top[i] = lane_vld[i] && !lane_tag[i*EW + EW-2];
        end
    endgenerate
    assign out_vld  = lane_vld[2*S +: 2*S];
    assign out_tag  = lt_out;
    assign out_data = {c3_po, c2_po};
    // Path (2): cores 0/1 bottoms are results only when they do not feed cores 2/3.
    assign top_vld  = lv_top;
    assign top_tag  = lt_top;
    assign top_data = {c1_po, c0_po};

`ifdef NPU_ASSERTS
    // The injector's mode change gap: never two rows entering one core in one cycle.
    always @(posedge clk) if (rst_n) begin
        if (t0h && inj_vld[1] && !hfuse) `NPU_ASSERT_FAIL("FlexSA: two rows enter core 1 in one cycle")
        if (t0v && inj_vld[2] && !vfuse) `NPU_ASSERT_FAIL("FlexSA: two rows enter core 2 in one cycle")
        if ((t2h && t1v) || ((t2h || t1v) && inj_vld[3] && !hfuse && !vfuse))
            `NPU_ASSERT_FAIL("FlexSA: two rows enter core 3 in one cycle")
        if ((g_str[2].g_row[0].g_xd.xo[PW] && inj_vld[2] && !vfuse)
            || (g_str[3].g_row[0].g_xd.xo[PW] && inj_vld[3] && !vfuse))
            `NPU_ASSERT_FAIL("FlexSA: a delayed and a direct row meet at a lower stream")
    end
`endif
endmodule
`default_nettype wire
