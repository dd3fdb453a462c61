`default_nettype none
`include "npu_assert.vh"
// npu_exec_obuf_hazard: the OBUF side of npu_exec's waves: writes, retirement, completion, and
// the row-granular OBUF hazards between waves and DRAINs (docs/isa.md "Ordering inside
// EXEC", §5 "OBUF hazards").
//   in:  issue_wave with its per-lane row ranges, set count, token pushes and OBUF rows
//        [rows_lo, rows_hi); issue_drain with its rows [rows_lo, rows_hi) (npu_exec_decode);
//        the array's output lanes (valid, tag); the drain engine's rows (npu_exec_drain: the
//        active DRAIN's [dr_lo, dr_end) and next rows dr_row / dr_row1, the queue head's
//        [dq_lo, dq_end), dq_pop: the head becomes the active DRAIN).
//   out: the OBUF write ports (straight from the tags); r_bank: rows retired per bank;
//        wave_done / wave_push: the oldest wave's last row retired, its token pushes; full
//        (no WAVE issues), busy (a wave in flight), progress (a row retired);
//        war_blk: a DRAIN queued or reading overlaps the head WAVE's rows (it must not
//        issue); young / pend_a / pend_b: a wave in flight still writes the active DRAIN's
//        rows (young: a wave other than the oldest, over its whole range), dr_row (pend_a),
//        dr_row1 (pend_b): the drain must not read them.
// Waves retire in issue order (their completion records, at most 8 in flight). Everything that
// can only shrink is registered: one cycle stale is conservative.
module npu_exec_obuf_hazard #(
    parameter S         = 8,
    // verilator lint_off UNUSEDPARAM
    parameter OBUF_ROWS = 256,       // the checks' row model only (NPU_ASSERTS)
    // verilator lint_on UNUSEDPARAM
    parameter OBUF_AW   = 9,
    parameter TAGW      = OBUF_AW + 5    // row tag {mode, last, bank, acc, OBUF row}
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  issue_wave,
    input  wire [8*OBUF_AW+7:0]  wv_lr,      // per retirement lane l: rows [s_l, e_l)
    input  wire [2:0]            wv_nset,    // non-empty sets
    input  wire [1:0]            wv_push,    // token pushes {next, prev}
    input  wire                  issue_drain,
    input  wire [OBUF_AW:0]      rows_lo,    // the issuing WAVE's or DRAIN's OBUF rows
    input  wire [OBUF_AW:0]      rows_hi,
    output wire                  full,
    output wire                  busy,
    output wire                  progress,
    output wire                  wave_done,
    output wire [1:0]            wave_push,
    output wire [5:0]            r_bank,     // per bank (3 bits): rows retired this cycle
    output wire                  war_blk,
    output wire                  young,
    output reg                   pend_a,
    output reg                   pend_b,
    // the drain engine
    input  wire                  dr_act,
    input  wire [OBUF_AW:0]      dr_lo,
    input  wire [OBUF_AW:0]      dr_end,
    input  wire [OBUF_AW:0]      dq_lo,
    input  wire [OBUF_AW:0]      dq_end,
    input  wire [OBUF_AW-1:0]    dr_row,
    input  wire [OBUF_AW-1:0]    dr_row1,
    input  wire                  dq_pop,
    // FlexSA outputs -> OBUF writes
    input  wire [2*S-1:0]        out_vld,
    input  wire [2*S*TAGW-1:0]   out_tag,
    input  wire [2*S-1:0]        top_vld,
    input  wire [2*S*TAGW-1:0]   top_tag,
    output wire [2*S-1:0]        ob_wr_en,
    output wire [2*S*OBUF_AW-1:0] ob_wr_addr,
    output wire [2*S-1:0]        ob_wr_acc,
    output wire [2*S-1:0]        ob2_wr_en,    // path (2): results of cores 0/1 (HSW/ISW)
    output wire [2*S*OBUF_AW-1:0] ob2_wr_addr,
    output wire [2*S-1:0]        ob2_wr_acc,
    // checks only (NPU_ASSERTS): the ISA fields of the issuing WAVE / DRAIN and the OBUF reads
    input  wire [15:0]           wv_m,       // rows of the sets
    input  wire [OBUF_AW-1:0]    wv_obuf,    // OBUF row of its first row
    input  wire                  wv_skinny,
    input  wire [15:0]           dr_rows,
    input  wire [OBUF_AW-1:0]    dr_ob,
    input  wire                  ob_rd_en,
    input  wire [OBUF_AW-1:0]    ob_rd_addr,
    input  wire                  ob_rd2_en,
    input  wire [OBUF_AW-1:0]    ob_rd2_addr
);
`include "npu_defs.vh"
    localparam F  = 2 * S;           // fused array side
    localparam RW = OBUF_AW + 1;     // an OBUF row or the end of a range (up to 2 * OBUF_ROWS)
    localparam CFW = 5 + 8 * RW;     // completion record: lane ranges, sets, token pushes

    // OBUF writes straight from the tags: bottom lanes on port 1, path (2) lanes on port 2
    genvar x;
    generate
        for (x = 0; x < F; x = x + 1) begin : g_ob
            assign ob_wr_en[x] = out_vld[x];
            assign ob_wr_addr[x*OBUF_AW +: OBUF_AW] = out_tag[x*TAGW +: OBUF_AW];
            assign ob_wr_acc[x] = out_tag[x*TAGW + OBUF_AW];
            assign ob2_wr_en[x] = top_vld[x];
            assign ob2_wr_addr[x*OBUF_AW +: OBUF_AW] = top_tag[x*TAGW +: OBUF_AW];
            assign ob2_wr_acc[x] = top_tag[x*TAGW + OBUF_AW];
        end
    endgenerate

    wire           cf_empty;
    wire [CFW-1:0] cf_dout;
    wire [3:0]     cf_count;
    reg  [2:0]     lcnt;             // last rows of the oldest wave retired so far
    reg            war_blk_q;        // a DRAIN queued or reading overlaps the head WAVE's rows
    reg            young_q;          // a wave in flight other than Wo writes rows of the active DRAIN
    integer j;
    // retirement: the last lane of each sub-array; which ones carry rows depends on the mode
    //   P0 top lane S-1 (ISW core 0), P1 top lane 2S-1 (HSW top, ISW core 1),
    //   P2 out lane S-1 (VSW left, ISW core 2), P3 out lane 2S-1 (every mode)
    wire [4*TAGW-1:0] p_tag = {out_tag[(F-1)*TAGW +: TAGW], out_tag[(S-1)*TAGW +: TAGW],
                               top_tag[(F-1)*TAGW +: TAGW], top_tag[(S-1)*TAGW +: TAGW]};
    // rows of several modes may be in flight: each lane's tag carries its row's mode
    // (tag bits OBUF_AW+3 .. OBUF_AW+4); top lanes are valid only for HSW/ISW rows (npu_flexsa)
    wire [1:0] p0_md = top_tag[(S-1)*TAGW + OBUF_AW + 3 +: 2];
    wire [1:0] p2_md = out_tag[(S-1)*TAGW + OBUF_AW + 3 +: 2];
    wire [3:0] p_vld = {out_vld[F-1],
                        out_vld[S-1] && (p2_md == MODE_VSW || p2_md == MODE_ISW),
                        top_vld[F-1],
                        top_vld[S-1] && p0_md == MODE_ISW};
    reg  [2:0] r_bank0, r_bank1, r_last;
    always @(*) begin
        r_bank0 = 3'd0; r_bank1 = 3'd0; r_last = 3'd0;
        for (j = 0; j < 4; j = j + 1)
            if (p_vld[j]) begin
                if (p_tag[j*TAGW + OBUF_AW + 1]) r_bank1 = r_bank1 + 3'd1;
                else                             r_bank0 = r_bank0 + 3'd1;
                if (p_tag[j*TAGW + OBUF_AW + 2]) r_last  = r_last + 3'd1;
            end
    end
    wire       x_vld = p_vld != 4'd0;
    wire [2:0] lsum  = lcnt + r_last;
    assign     wave_done = r_last != 3'd0 && lsum == cf_dout[4:2];

    // Completion records of the issued waves, oldest first: {lane ranges, sets, token pushes}.
    // The head is the oldest wave in flight (Wo), whose rows the OBUF hazards track per lane.
    npu_fifo #(.W(CFW), .DEPTH(8)) u_cf (
        .clk(clk), .rst_n(rst_n),
        .push(issue_wave), .din({wv_lr, wv_nset, wv_push}),
        .pop(wave_done), .dout(cf_dout), .full(full), .empty(cf_empty), .count(cf_count)
    );

    // ------------------------------------------------------------------ OBUF row hazards
    // Row granular instead of per OBUF half (docs/isa.md, "OBUF hazards"):
    //  WAR: a WAVE issues only when no DRAIN queued or reading overlaps its OBUF rows (war_blk_q).
    //       So every wave in flight that writes a row of a pending DRAIN was issued before it.
    //  RAW: the drain reads rows r (and its pair) only when no wave in flight still writes them:
    //       the waves other than the oldest (Wo) by their whole row range (wt_*; registered
    //       per drain, young_q), Wo by its lanes: lane l has retired the rows [s_l, wo_f[l]) of
    //       its range [s_l, e_l) (rows retire in order per lane), so r is pending in Wo iff
    //       wo_f[l] <= r < e_l for some l.
    // Everything that can only shrink is registered (the set of in-flight waves overlapping a
    // pending DRAIN, the DRAINs overlapping the head WAVE): one cycle stale = conservative.
    // In-flight waves by issue order (entry = issue count mod 8, the depth of u_cf): OBUF rows.
    wire [7:0]      wt_v, wt_head;
    wire [8*RW-1:0] wt_lo, wt_hi;
    npu_range_fifo #(.DEPTH(8), .W(RW)) u_wt (
        .clk(clk), .rst_n(rst_n),
        .push(issue_wave), .push_lo(rows_lo), .push_hi(rows_hi), .pop(wave_done),
        .vld(wt_v), .head(wt_head), .lo(wt_lo), .hi(wt_hi)
    );
    integer y;
    // Wo's lanes: range [wo_s, wo_e) from the head record, wo_f = first row not yet retired.
    // A retiring row is Wo's when its lane has not finished Wo's range (lanes retire in order,
    // and the older waves are complete), else a younger wave's: per lane, y_any / y_next record
    // the younger rows (the row after the last one). wo_ok = 0 the cycle after Wo changes
    // (the head record of the next wave is visible then): wo_f is loaded from y_next clamped to
    // the new Wo's range (y_next belongs to it, or to a later wave when the new Wo finished that
    // lane: either way its rows below y_next are retired), else from wo_s. In that cycle Wo is
    // not consulted: it was young the cycle before, so young_q covers it (and a wave issued
    // since overlaps no pending DRAIN).
    reg  [4*RW-1:0] wo_f, y_next;
    reg  [3:0]      y_any;
    reg             wo_ok;
    wire [4*RW-1:0] wo_s, wo_e, p_nx, y_nx, wo_ld;
    wire [3:0]      wo_own, y_anx;
    genvar wl;
    generate
        for (wl = 0; wl < 4; wl = wl + 1) begin : g_wo
            assign wo_s[wl*RW +: RW] = cf_dout[5 + 2*wl*RW +: RW];
            assign wo_e[wl*RW +: RW] = cf_dout[5 + (2*wl+1)*RW +: RW];
            assign wo_own[wl] = wo_ok && wo_f[wl*RW +: RW] < wo_e[wl*RW +: RW];
            assign p_nx[wl*RW +: RW] = {1'b0, p_tag[wl*TAGW +: OBUF_AW]} + 1'b1;
            // younger rows up to this cycle (every row retiring while wo_ok = 0 is younger)
            assign y_anx[wl] = y_any[wl] || (p_vld[wl] && !wo_own[wl]);
            assign y_nx[wl*RW +: RW] = (p_vld[wl] && !wo_own[wl]) ? p_nx[wl*RW +: RW] : y_next[wl*RW +: RW];
            assign wo_ld[wl*RW +: RW] = !y_anx[wl] || y_nx[wl*RW +: RW] < wo_s[wl*RW +: RW] ? wo_s[wl*RW +: RW]
                                      : y_nx[wl*RW +: RW] > wo_e[wl*RW +: RW] ? wo_e[wl*RW +: RW]
                                      : y_nx[wl*RW +: RW];
        end
    endgenerate
    always @(posedge clk) begin
        if (!rst_n) begin
            wo_ok <= 1'b0; y_any <= 4'd0;
        end else begin
            wo_ok <= !cf_empty && !wave_done;
            y_any <= wo_ok ? y_anx : 4'd0;
        end
        y_next <= y_nx;
        for (y = 0; y < 4; y = y + 1)
            if (!wo_ok)
                wo_f[y*RW +: RW] <= wo_ld[y*RW +: RW];
            else if (p_vld[y] && wo_own[y])
                wo_f[y*RW +: RW] <= p_nx[y*RW +: RW];
    end

    // The OBUF rows of the queued DRAINs (a copy beside u_dq, same order) for the WAR check.
    wire [3:0]      dqm_v, dqm_head;
    wire [4*RW-1:0] dqm_lo, dqm_hi;
    npu_range_fifo #(.DEPTH(4), .W(RW)) u_dqm (
        .clk(clk), .rst_n(rst_n),
        .push(issue_drain), .push_lo(rows_lo), .push_hi(rows_hi), .pop(dq_pop),
        .vld(dqm_v), .head(dqm_head), .lo(dqm_lo), .hi(dqm_hi)
    );

    // WAR: the head WAVE's rows [rows_lo, rows_hi) against the DRAINs queued or reading
    reg          war_c;
    // RAW: in-flight waves other than Wo over the active DRAIN and over the queue head (which
    // becomes the active one when it leaves the queue); Wo over the rows read next
    reg          young_act, young_head;
    always @(*) begin
        war_c = dr_act && dr_lo < rows_hi && rows_lo < dr_end;
        for (y = 0; y < 4; y = y + 1)
            if (dqm_v[y] && dqm_lo[y*RW +: RW] < rows_hi && rows_lo < dqm_hi[y*RW +: RW])
                war_c = 1'b1;
        young_act = 1'b0; young_head = 1'b0;
        for (y = 0; y < 8; y = y + 1)
            if (wt_v[y] && !wt_head[y]) begin
                if (wt_lo[y*RW +: RW] < dr_end && dr_lo < wt_hi[y*RW +: RW]) young_act  = 1'b1;
                if (wt_lo[y*RW +: RW] < dq_end && dq_lo < wt_hi[y*RW +: RW]) young_head = 1'b1;
            end
        pend_a = 1'b0;
        pend_b = 1'b0;
        for (y = 0; y < 4; y = y + 1)
            if (wo_ok) begin
                if (wo_f[y*RW +: RW] <= {1'b0, dr_row}  && {1'b0, dr_row}  < wo_e[y*RW +: RW]) pend_a = 1'b1;
                if (wo_f[y*RW +: RW] <= {1'b0, dr_row1} && {1'b0, dr_row1} < wo_e[y*RW +: RW]) pend_b = 1'b1;
            end
    end
    always @(posedge clk) begin
        war_blk_q <= war_c;
        young_q   <= dq_pop ? young_head : young_act;
        if (!rst_n) lcnt <= 3'd0;
        else        lcnt <= wave_done ? 3'd0 : lsum;
    end

    assign r_bank    = {r_bank1, r_bank0};
    assign wave_push = wave_done ? cf_dout[1:0] : 2'b00;
    assign busy      = !cf_empty;
    assign progress  = x_vld;
    assign war_blk   = war_blk_q;
    assign young     = young_q;

    wire unused = &{1'b0, cf_count, dqm_head, wv_m, wv_obuf, wv_skinny, dr_rows, dr_ob, ob_rd_en,
                    ob_rd_addr, ob_rd2_en, ob_rd2_addr};

`ifdef NPU_ASSERTS
    integer ax;
    always @(posedge clk) if (rst_n) begin
        for (ax = 0; ax < F; ax = ax + 1) begin
            if (out_vld[ax] && top_vld[ax]
                && out_tag[ax*TAGW +: OBUF_AW] == top_tag[ax*TAGW +: OBUF_AW])
                `NPU_ASSERT_FAIL("both OBUF ports write one lane and row")
        end
        if (wo_ok && !cf_empty) for (ax = 0; ax < 4; ax = ax + 1)
            if (wo_f[ax*RW +: RW] < wo_s[ax*RW +: RW] || wo_f[ax*RW +: RW] > wo_e[ax*RW +: RW])
                `NPU_ASSERT_FAIL("oldest wave's retired row outside its lane range")
    end
    // OBUF row hazards against a per-row model built from the ISA semantics (docs/isa.md,
    // not from the hazard logic above): sb_w[x] = set rows of issued waves that still have to
    // retire into OBUF row x (a skinny row is written by two sets), sb_d[x] = queued or active
    // DRAINs that still have to read row x.
    //   WAR: a WAVE issues only when no pending DRAIN still has to read one of its rows;
    //   RAW: the drain reads a row only when no issued wave still has to write it.
    // Blocking updates in place (several events may hit one row in a cycle; see npu_dma_load).
    integer sb_w [0:2*OBUF_ROWS-1];
    integer sb_d [0:2*OBUF_ROWS-1];
    integer sx, srow, sha;
    /* verilator lint_off BLKSEQ */
    always @(posedge clk) begin
        if (!rst_n) begin
            for (sx = 0; sx < 2*OBUF_ROWS; sx = sx + 1) begin
                sb_w[sx] = 0;
                sb_d[sx] = 0;
            end
        end else begin
            if (issue_wave) begin
                sha = ({16'd0, wv_m} + 1) / 2;
                for (sx = 0; sx < 2*OBUF_ROWS; sx = sx + 1)
                    if (sx < {16'd0, wv_m}) begin
                        srow = {{(32-OBUF_AW){1'b0}}, wv_obuf} + ((wv_skinny && sx >= sha) ? sx - sha : sx);
                        if (srow < 2*OBUF_ROWS) begin
                            if (sb_d[srow] != 0)
                                `NPU_ASSERT_FAIL("WAVE issued over an OBUF row a pending DRAIN has not read")
                            sb_w[srow] = sb_w[srow] + 1;
                        end
                    end
            end
            if (ob_rd_en) begin
                srow = {{(32-OBUF_AW){1'b0}}, ob_rd_addr};
                if (sb_w[srow] != 0) `NPU_ASSERT_FAIL("OBUF row drained before its last wave retired")
                if (sb_d[srow] == 0) `NPU_ASSERT_FAIL("OBUF row drained that no DRAIN was to read")
                sb_d[srow] = sb_d[srow] - 1;
            end
            if (ob_rd2_en) begin
                srow = {{(32-OBUF_AW){1'b0}}, ob_rd2_addr};
                if (sb_w[srow] != 0) `NPU_ASSERT_FAIL("OBUF pair row drained before its last wave retired")
                if (sb_d[srow] == 0) `NPU_ASSERT_FAIL("OBUF pair row drained that no DRAIN was to read")
                sb_d[srow] = sb_d[srow] - 1;
            end
            // a row's last write lands at the end of its retirement cycle: a read in that cycle
            // still gets the old value, so retirements count after the reads
            for (sx = 0; sx < 4; sx = sx + 1)
                if (p_vld[sx]) begin
                    srow = {{(32-OBUF_AW){1'b0}}, p_tag[sx*TAGW +: OBUF_AW]};
                    if (sb_w[srow] == 0) `NPU_ASSERT_FAIL("OBUF row retired that no wave was to write")
                    sb_w[srow] = sb_w[srow] - 1;
                end
            if (issue_drain)
                for (sx = 0; sx < 2*OBUF_ROWS; sx = sx + 1)
                    if (sx < {16'd0, dr_rows} && {{(32-OBUF_AW){1'b0}}, dr_ob} + sx < 2*OBUF_ROWS)
                        sb_d[{{(32-OBUF_AW){1'b0}}, dr_ob} + sx] = sb_d[{{(32-OBUF_AW){1'b0}}, dr_ob} + sx] + 1;
        end
    end
    /* verilator lint_on BLKSEQ */
`endif
endmodule
`default_nettype wire
