`default_nettype none
// npu_dma_load: executes LOAD instructions (DRAM -> SPM), see docs/isa.md.
// Fields: w0[14:12] tag, w0[15] transpose, w0[31:16] rows, w1 dram_addr, w2[15:0] spm_addr,
// w2[31:16] spm_stride (words), w3[15:0] row_bytes, w3[31:16] dram_stride (beats).
//
// Structure: an address generator (AG) issues AXI read bursts and runs up to MAX_OUT bursts ahead
// of the data; an address FIFO remembers each outstanding burst (for the limit and for the address
// of a failing beat). The data side walks the same words in the same order (data returns in
// request order), so it needs no per-burst bookkeeping besides r_last.
//  - normal mode: each row is split into bursts of <= MAX_BURST beats that never cross 4 KiB;
//    a beat goes into a holding register that writes the SPM; r_rdy = !hold_vld || wr_gnt,
//    which sustains one beat per cycle while the SPM grants.
//  - transposed mode: blocks of 2S source rows x TB column blocks (a group: the TB = 2 beats
//    cb0, cb0+1 of each row, or the last beat alone); the group fills TB transpose buffers, then
//    its columns are written out one SPM word per cycle. A group's beats are read in bursts:
//    one burst per source row (its TB beats are adjacent), or, when the rows are adjacent too
//    (dram_stride = the group's beats: dense pixels of <= 2 beats, dY and Z of dW), the whole
//    block as one run split by the burst rule like a normal row. Single-beat bursts cost the
//    DRAM's per-burst time and a MAX_OUT share of its latency each (~10 cycles at small);
//    a 2S-row run of 16 beats costs 16 + 4. Each buffer is stored by column (tcm[t*2S + k] =
//    element k of every buffered row of beat t), so a filling beat scatters its elements into
//    lane dp_i of the columns and a column write is a plain array read: nothing wide is shifted
//    or rebuilt while the engine idles.
// FILL (opcode 0x09, the LOAD format without its DRAM side): the same engine without the DRAM:
// after the descriptor checks (rows/row_bytes zero: BAD_DESC; SPM range as LOAD; no DRAM
// check) the data side makes a zero beat whenever the holding register is free or being
// written, instead of accepting an R beat, so it writes one zero word per granted cycle through
// the same SPM write port, walking the words of a normal LOAD. No AXI request is issued.
// Checks happen in one CHECK cycle before any request. A DRAM error response stops the address
// generator; the beats of bursts already issued are accepted and dropped (DRAIN) so the shared
// read channel is not blocked, then the engine returns to idle.
// Assumes S is a power of 2 (beats divide 4 KiB) and SPM_AW <= 16 (spm_addr is 16 bits).
module npu_dma_load #(
    parameter integer S         = 8,
    parameter integer SPM_AW    = 12,
    parameter integer SPM_WORDS = 4096,
    parameter integer DRAM_AW   = 24,
    parameter integer MAX_BURST = 16,
    parameter integer MAX_OUT   = 4
) (
    input  wire              clk,
    input  wire              rst_n,
    input  wire              run,        // 0 after an error: issue no new burst (those in flight finish)
    // descriptor
    input  wire              cmd_vld,
    output wire              cmd_rdy,
    input  wire [127:0]      cmd_insn,
    output wire              busy,
    output reg               done,
    output reg               err,
    output reg  [7:0]        err_code,
    output reg  [31:0]       err_info,
    // AXI-like read master
    output wire              ar_vld,
    input  wire              ar_rdy,
    output wire [31:0]       ar_addr,
    output wire [7:0]        ar_len,
    input  wire              r_vld,
    output wire              r_rdy,
    input  wire [32*S-1:0]   r_data,
    input  wire              r_last,
    input  wire              r_resp,
    // SPM write port
    output wire              wr_req,
    output wire [SPM_AW-1:0] wr_addr,
    output wire [32*S-1:0]   wr_data,
    input  wire              wr_gnt,
    // counter pulses
    output wire              cnt_beat,
    output wire [2:0]        cnt_tag,
    output wire              cnt_burst,
    output wire              cnt_fill      // an SPM word zeroed by FILL was written
);
`include "npu_defs.vh"
    localparam integer B  = 4 * S;          // bytes per beat / SPM word
    localparam integer WB = 32 * S;         // bits per beat
    localparam integer E  = 2 * S;          // int16 elements per beat (transpose block side)
    localparam integer LB = $clog2(B);
    localparam integer LE = $clog2(E);
    localparam integer OW = $clog2(MAX_OUT + 1);
    localparam [31:0] E32      = E;
    localparam [15:0] E16      = E32[15:0];

    // engine states (SM_: npu_defs.vh's ST_ are the NPU's run states)
    localparam [1:0] SM_IDLE = 2'd0, SM_CHECK = 2'd1, SM_RUN = 2'd2, SM_DRAIN = 2'd3;

    // ---------------- descriptor ----------------
    reg [1:0]  state;
    // the descriptor and its start checks, latched when the instruction is accepted
    wire [2:0]  f_tag;
    wire        f_tr;
    wire [15:0] f_rows;
    wire [31:0] f_daddr;
    wire [15:0] f_saddr, f_sstride, f_rbytes, f_dstride;
    wire [15:0] nbeats_m1;   // nbeats - 1 (registered in u_desc: not in series with the compares)
    wire [15:0] nbeats;      // beats per row (= column blocks in transposed mode)
    wire        c_vld;       // the checks are ready (two cycles after acceptance)
    wire        c_bad, c_dram, c_spm;
    wire [31:0] c_dlast, c_slast;
    // The LOAD queue hands this engine LOAD and FILL only (npu_fetch routes SYNC_L to npu_dmaq,
    // which runs it): the opcode bits in which they differ tell them apart (one bit: OP_LOAD ^
    // OP_FILL folds to a constant mask), no opcode compare in front of the descriptor's
    // multipliers (asserted below).
    wire [F_INSN_OP_W-1:0] cmd_op = cmd_insn[F_INSN_OP_LSB +: F_INSN_OP_W];
    wire        cmd_fill = |((cmd_op ^ OP_LOAD) & (OP_LOAD ^ OP_FILL));
    reg         f_fill;      // the descriptor is a FILL
    npu_dma_desc #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .DRAM_AW(DRAM_AW),
                   .TRANSPOSE(1)) u_desc (
        .clk(clk), .rst_n(rst_n), .load(cmd_fire), .cmd_insn(cmd_insn), .fill(cmd_fill),
        .tag(f_tag), .tr(f_tr), .rows(f_rows), .daddr(f_daddr), .saddr(f_saddr),
        .sstride(f_sstride), .rbytes(f_rbytes), .dstride(f_dstride), .nbeats(nbeats),
        .nbeats_m1(nbeats_m1),
        .vld(c_vld), .bad(c_bad), .dram_err(c_dram), .spm_err(c_spm), .dlast(c_dlast), .slast(c_slast)
    );


    assign cmd_rdy = (state == SM_IDLE);
    assign busy    = (state != SM_IDLE);
    wire cmd_fire  = cmd_vld && cmd_rdy;
    // opcode and token bits are the queue's business
    // verilator lint_off UNUSEDSIGNAL
    wire unused_desc = &{1'b0, f_saddr, f_sstride};   // bits above SPM_AW: checked at cmd_fire
    // verilator lint_on UNUSEDSIGNAL

    // the C = row_bytes/2 columns
    wire [15:0] ncols    = {1'b0, f_rbytes[15:1]};
    wire [31:0] strideB  = {16'd0, f_dstride} << LB;          // DRAM row pitch in bytes
    wire [31:0] strideBE = {16'd0, f_dstride} << (LB + LE);   // pitch of a 2S-row block
    wire [SPM_AW-1:0] saddr_s   = f_saddr[SPM_AW-1:0];
    wire [SPM_AW-1:0] sstride_s = f_sstride[SPM_AW-1:0];
    wire [SPM_AW-1:0] sstrideE2 = sstride_s << (LE + 1);   // a group's 2 x 2S columns

    wire chk_bad  = c_bad;
    wire chk_dram = c_dram;
    wire chk_spm  = c_spm;
    wire in_check = (state == SM_CHECK);
    wire go       = in_check && c_vld && !chk_bad && !chk_dram && !chk_spm;
    wire in_run   = (state == SM_RUN);

    // ---------------- address generator ----------------
    reg         ag_act;
    reg [31:0]  ag_addr;    // next burst address
    reg [31:0]  ag_row;     // normal: current row start; transposed: current row-block start
    reg [15:0]  ag_rem;     // normal: beats left in the row
    reg [15:0]  ag_rows;    // normal: rows left; transposed: rows left from this row block
    reg [LE-1:0] ag_i;      // transposed: row inside the block (per-row bursts)
    reg [15:0]  ag_cols;    // transposed: columns left from this group's first (group: 2 beats
                            // when > 2S, else 1)
    reg [31:0]  ag_cboff;   // transposed: the group's first beat * B
    reg [31:0]  ag_seg;     // transposed: start of the current row's burst run
    reg [LE:0]  ag_nr;      // transposed: rows in this block (<= 2S)
    reg         t_run1, t_run2;   // dram_stride == 1 / 2: a 1- / 2-beat group's rows are adjacent

    wire [15:0] blen;
    wire        blen_ok;     // blen and ag_row_end belong to ag_addr/ag_rem (npu_burst_len)
    wire        ag_row_end;  // this burst ends the row (blen == ag_rem)
    // registered burst rule: the next burst's length is ready one cycle after each burst
    npu_burst_len #(.S(S), .MAX_BURST(MAX_BURST)) u_blen (
        .clk(clk), .rst_n(rst_n), .addr(ag_addr[11:0]), .want(ag_rem), .upd(go || ar_fire),
        .len(blen), .whole(ag_row_end), .ok(blen_ok));
    wire [7:0]  blen_m1 = blen[7:0] - 8'd1;   // MAX_BURST <= 256: 256 wraps to 255
    // transposed groups: g2 = the group has two beats per row; run = its rows are adjacent
    // (the whole block is one run of burst beats), else one burst of the g beats per row
    wire [15:0] ag_i16   = {{(16-LE){1'b0}}, ag_i};
    wire [15:0] ag_nr16  = {{(15-LE){1'b0}}, ag_nr};
    wire ag_g2       = (ag_cols > E16);
    wire ag_run      = ag_g2 ? t_run2 : t_run1;
    wire ag_grp_last = ag_run || (ag_i16 + 16'd1 == ag_nr16);   // with ag_row_end: the group's last burst
    wire ag_cb_last  = (ag_cols <= {E16[14:0], 1'b0});          // the block's last group
    // the first group of a block: its burst run (beats) for nr rows
    wire        n_g2     = (ncols > E16);
    wire [15:0] rows_nx  = ag_rows - E16;                       // rows left after this block
    wire [LE:0] nr_nx    = (rows_nx > E16) ? E16[LE:0] : rows_nx[LE:0];
    wire [LE:0] nr_go    = (f_rows > E16) ? E16[LE:0] : f_rows[LE:0];
    // (one_run: the group's rows are one burst run)
    function [15:0] run_len(input g2, input one_run, input [LE:0] nr);
        run_len = !one_run ? (g2 ? 16'd2 : 16'd1)
                           : (g2 ? {{(14-LE){1'b0}}, nr, 1'b0} : {{(15-LE){1'b0}}, nr});
    endfunction
    wire        g2_nx    = (ag_cols - {E16[14:0], 1'b0} > E16);   // the block's next group

    wire        af_full, af_empty;
    wire [31:0] af_dout;
    // verilator lint_off UNUSEDSIGNAL
    wire [OW-1:0] af_count;   // the limit uses af_full
    // verilator lint_on UNUSEDSIGNAL

    // both modes wait for the registered burst length
    assign ar_vld  = in_run && run && ag_act && !af_full && blen_ok;
    assign ar_addr = ag_addr;
    assign ar_len  = blen_m1;
    wire ar_fire   = ar_vld && ar_rdy;

    // ---------------- data side ----------------
    reg              hold_vld, hold_last;
    reg [SPM_AW-1:0] hold_addr;
    reg [WB-1:0]     hold_data;
    reg [WB-1:0]     tmask;     // keeps the row_bytes of the last beat of a row
    reg [7:0]        dp_bc;     // beat inside the current burst (for err_info)
    reg [15:0]       dp_j;      // normal: beat in the row
    reg [15:0]       dp_rows;   // rows left (normal) / rows left from this row block (transposed)
    reg [SPM_AW-1:0] dp_spm, dp_srow;
    // transposed
    reg              t_fill;    // 1: filling buffer rows from DRAM, 0: writing columns to the SPM
    reg [LE-1:0]     dp_i, dp_k;
    reg              dp_t;      // beat of the group (fill) / buffer of the column (write)
    reg [15:0]       dp_cols;   // columns left from this group's first
    reg [SPM_AW-1:0] dp_rbaddr, dp_cbaddr, dp_caddr;
    reg [WB-1:0]     tcm [0:2*E-1];   // two transpose buffers by column: lane i = source row i

    wire [15:0] dp_i16 = {{(16-LE){1'b0}}, dp_i};
    wire [15:0] dp_k16 = {{(16-LE){1'b0}}, dp_k};
    wire dp_row_end   = (dp_j == nbeats_m1);
    wire dp_g2        = (dp_cols > E16);   // two beats per row in this group
    wire [15:0] dp_tk16 = {{(15-LE){1'b0}}, dp_t, dp_k};   // column index in the group
    wire t_fill_last  = (dp_t || !dp_g2) && ((dp_i16 == E16 - 16'd1) || (dp_i16 + 16'd1 == dp_rows));
    wire t_col_last   = (dp_t == dp_g2 && dp_k16 == E16 - 16'd1) || (dp_tk16 + 16'd1 == dp_cols);
    wire t_last_cb    = (dp_cols <= {E16[14:0], 1'b0});
    wire t_last_rb    = (dp_rows <= E16);

    wire [WB-1:0] tcol = tcm[{dp_t, dp_k}];   // current column

    assign r_rdy   = (state == SM_DRAIN) || (in_run && (f_tr ? t_fill : (!hold_vld || wr_gnt)));
    wire r_fire    = r_vld && r_rdy;
    wire r_err     = r_fire && r_resp && in_run;
    // FILL: a zero beat whenever the holding register can take one (fl_act: words left)
    reg  fl_act;
    wire fl_beat   = fl_act && (!hold_vld || wr_gnt);
    wire beat_ok   = (r_fire && !r_resp && in_run) || fl_beat;
    wire [WB-1:0] bdata = r_data & {WB{!f_fill}};

    assign wr_req  = in_run && (f_tr ? !t_fill : hold_vld);
    assign wr_addr = f_tr ? dp_caddr : hold_addr;
    assign wr_data = f_tr ? tcol : hold_data;
    wire wr_fire   = wr_req && wr_gnt;
    wire dp_rows_en = (beat_ok && !f_tr && dp_row_end) || (wr_fire && f_tr && t_col_last && t_last_cb);
    wire fin       = f_tr ? (wr_fire && t_col_last && t_last_cb && t_last_rb)
                          : (wr_fire && hold_last);

    npu_fifo #(.W(32), .DEPTH(MAX_OUT)) u_af (
        .clk(clk), .rst_n(rst_n),
        .push(ar_fire), .din(ag_addr),
        .pop(r_fire && r_last), .dout(af_dout),
        .full(af_full), .empty(af_empty), .count(af_count)
    );

    assign cnt_beat  = r_fire;
    assign cnt_burst = ar_fire;
    assign cnt_fill  = wr_fire && f_fill;
    assign cnt_tag   = f_tag;

    // ---------------- control state ----------------
    always @(posedge clk) begin
        if (!rst_n) begin
            state    <= SM_IDLE;
            done     <= 1'b0;
            err      <= 1'b0;
            err_code <= 8'd0;
            err_info <= 32'd0;
            ag_act   <= 1'b0;
            fl_act   <= 1'b0;
            dp_bc    <= 8'd0;
        end else begin
            done <= 1'b0;
            err  <= 1'b0;
            if (r_fire) dp_bc <= r_last ? 8'd0 : dp_bc + 8'd1;
            case (state)
                SM_IDLE: if (cmd_fire) state <= SM_CHECK;
                SM_CHECK: if (c_vld) begin   // the descriptor's checks take two cycles
                    if (chk_bad) begin
                        err <= 1'b1; err_code <= ERR_BAD_DESC; err_info <= f_daddr;
                        state <= SM_IDLE;
                    end else if (chk_dram) begin
                        err <= 1'b1; err_code <= ERR_DRAM_ADDR; err_info <= c_dlast;
                        state <= SM_IDLE;
                    end else if (chk_spm) begin
                        err <= 1'b1; err_code <= ERR_SPM_ADDR; err_info <= c_slast;
                        state <= SM_IDLE;
                    end else begin
                        ag_act   <= !f_fill;
                        fl_act   <= f_fill;
                        state    <= SM_RUN;
                    end
                end
                SM_RUN: begin
                    if (fl_beat && dp_row_end && dp_rows == 16'd1) fl_act <= 1'b0;
                    if (ar_fire) begin
                        if (!f_tr) begin
                            if (ag_row_end && ag_rows == 16'd1) ag_act <= 1'b0;
                        end else begin
                            if (ag_row_end && ag_grp_last && ag_cb_last && ag_rows <= E16) ag_act <= 1'b0;
                        end
                    end
                    if (r_err) begin
                        err <= 1'b1; err_code <= ERR_DRAM_RESP;
                        err_info <= af_dout + ({24'd0, dp_bc} << LB);
                        state <= SM_DRAIN;
                    end else if (fin) begin
                        done  <= 1'b1;
                        state <= SM_IDLE;
                    end
                end
                default: if (af_empty) state <= SM_IDLE;   // SM_DRAIN
            endcase
        end
    end

    // The two data-side flags as set/clear pairs outside the state machine: the SPM grant and
    // the R handshake arrive late (through the SPM arbiter), so they pass through a few gates,
    // not the state mux. A beat and a write never meet in transposed mode (r_rdy needs t_fill,
    // wr_req needs !t_fill); in normal mode a beat wins over the write that empties the register.
    always @(posedge clk) begin
        // the AG finishes a group's requests / the data side writes its last column
        hold_vld <= rst_n && !go && !r_err
                    && ((beat_ok && !f_tr) || (hold_vld && !(wr_fire && !f_tr)));
        t_fill   <= !rst_n || go || (t_fill && !(beat_ok && f_tr && t_fill_last))
                    || (wr_fire && f_tr && t_col_last);
    end

    // ---------------- datapath (no reset) ----------------
    always @(posedge clk) begin
        if (cmd_fire) f_fill <= cmd_fill;
        if (go) begin
            tmask    <= (f_rbytes[LB-1:0] == {LB{1'b0}}) ? {WB{1'b1}}
                        : ~({WB{1'b1}} << {f_rbytes[LB-1:0], 3'b000});
            ag_addr  <= f_daddr;
            ag_row   <= f_daddr;
            ag_rem   <= f_tr ? run_len(n_g2, n_g2 ? (f_dstride == 16'd2) : (f_dstride == 16'd1), nr_go)
                             : nbeats;
            ag_rows  <= f_rows;
            ag_i     <= {LE{1'b0}};
            ag_cols  <= ncols;
            ag_cboff <= 32'd0;
            ag_seg   <= f_daddr;
            ag_nr    <= nr_go;
            t_run1   <= (f_dstride == 16'd1);
            t_run2   <= (f_dstride == 16'd2);
            dp_j     <= 16'd0;
            dp_rows  <= f_rows;
            dp_spm   <= saddr_s;
            dp_srow  <= saddr_s;
            dp_i     <= {LE{1'b0}};
            dp_k     <= {LE{1'b0}};
            dp_t     <= 1'b0;
            dp_cols  <= ncols;
            dp_rbaddr <= saddr_s;
            dp_cbaddr <= saddr_s;
            dp_caddr  <= saddr_s;
        end

        // address generator
        if (ar_fire) begin
            if (!ag_row_end) begin            // the row (transposed: the run) goes on
                ag_rem  <= ag_rem - blen;
                ag_addr <= ag_addr + ({16'd0, blen} << LB);
            end else if (!f_tr) begin
                ag_rem  <= nbeats;
                ag_rows <= ag_rows - 16'd1;
                ag_row  <= ag_row + strideB;
                ag_addr <= ag_row + strideB;
            end else if (ag_grp_last) begin
                ag_i <= {LE{1'b0}};
                if (ag_cb_last) begin         // next row block, first group
                    ag_cols  <= ncols;
                    ag_cboff <= 32'd0;
                    ag_rows  <= rows_nx;
                    ag_nr    <= nr_nx;
                    ag_rem   <= run_len(n_g2, n_g2 ? t_run2 : t_run1, nr_nx);
                    ag_row   <= ag_row + strideBE;
                    ag_seg   <= ag_row + strideBE;
                    ag_addr  <= ag_row + strideBE;
                end else begin                // next group of the block
                    ag_cols  <= ag_cols - {E16[14:0], 1'b0};
                    ag_cboff <= ag_cboff + 2 * B;
                    ag_rem   <= run_len(g2_nx, g2_nx ? t_run2 : t_run1, ag_nr);
                    ag_seg   <= ag_row + ag_cboff + 2 * B;
                    ag_addr  <= ag_row + ag_cboff + 2 * B;
                end
            end else begin                    // next row of the group
                ag_i    <= ag_i + 1'b1;
                ag_rem  <= ag_g2 ? 16'd2 : 16'd1;
                ag_seg  <= ag_seg + strideB;
                ag_addr <= ag_seg + strideB;
            end
        end

        // rows left: one writer with a precomputed value, so the late beat/grant handshakes
        // only enable it (they come through the SPM arbiter)
        if (dp_rows_en) dp_rows <= f_tr ? dp_rows - E16 : dp_rows - 16'd1;

        // normal data side: beat -> holding register
        if (beat_ok && !f_tr) begin
            hold_addr <= dp_spm;
            hold_data <= dp_row_end ? (bdata & tmask) : bdata;
            hold_last <= dp_row_end && (dp_rows == 16'd1);
            if (dp_row_end) begin
                dp_j    <= 16'd0;
                dp_srow <= dp_srow + sstride_s;
                dp_spm  <= dp_srow + sstride_s;
            end else begin
                dp_j    <= dp_j + 16'd1;
                dp_spm  <= dp_spm + 1'b1;
            end
        end

        // transposed data side: fill rows, then write columns
        // a group's beats come row by row, the g beats of a row in turn (beat t -> buffer t)
        if (beat_ok && f_tr) begin
            dp_t <= dp_g2 && !dp_t;
            if (dp_t || !dp_g2) dp_i <= t_fill_last ? {LE{1'b0}} : dp_i + 1'b1;
        end
        if (wr_fire && f_tr) begin
            if (t_col_last) begin
                dp_k <= {LE{1'b0}};
                dp_t <= 1'b0;
                if (t_last_cb) begin
                    dp_cols   <= ncols;
                    dp_rbaddr <= dp_rbaddr + 1'b1;
                    dp_cbaddr <= dp_rbaddr + 1'b1;
                    dp_caddr  <= dp_rbaddr + 1'b1;
                end else begin
                    dp_cols   <= dp_cols - {E16[14:0], 1'b0};
                    dp_cbaddr <= dp_cbaddr + sstrideE2;
                    dp_caddr  <= dp_cbaddr + sstrideE2;
                end
            end else begin
                if (dp_k16 == E16 - 16'd1) dp_t <= 1'b1;
                dp_k     <= dp_k + 1'b1;
                dp_caddr <= dp_caddr + sstride_s;
            end
        end
    end

    // Transpose buffer fill: row dp_i's beat dp_t goes to lane dp_i of every column of buffer
    // dp_t; the first row of a group also clears the other lanes (rows past `rows` read as zero
    // lanes).
    // Blocking writes, updated in place (a non-blocking write to an array element costs a
    // shadow value and flag per element every cycle). This is race-free: tcm is read only
    // through wr_data, which the SPM samples only in column-write cycles (t_fill = 0), while
    // it is written only in fill cycles (beat_ok in transposed mode needs t_fill = 1).
    integer k;
    /* verilator lint_off BLKSEQ */
    always @(posedge clk) begin
        if (beat_ok && f_tr) begin
            for (k = 0; k < E; k = k + 1) begin
                if (dp_i == {LE{1'b0}}) tcm[{dp_t, k[LE-1:0]}] = {{(WB-16){1'b0}}, r_data[k*16 +: 16]};
                else                    tcm[{dp_t, k[LE-1:0]}][dp_i*16 +: 16] = r_data[k*16 +: 16];
            end
        end
    end
    /* verilator lint_on BLKSEQ */

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // AXI AR: valid and payload hold until ready (an error stop, leaving RUN, may withdraw);
    // bursts within the rule; the bookkeeping FIFO and the holding register never overflow.
    reg        ar_pend, wr_pend;
    reg [31:0] ar_addr_q;
    reg [7:0]  ar_len_q;
    reg [SPM_AW-1:0] wr_addr_q;
    always @(posedge clk) begin
        ar_pend   <= rst_n && ar_vld && !ar_rdy;
        wr_pend   <= rst_n && wr_req && !wr_gnt;
        ar_addr_q <= ar_addr;
        ar_len_q  <= ar_len;
        wr_addr_q <= wr_addr;
    end
    always @(posedge clk) if (rst_n) begin
        if (ar_pend && in_run && run && !ar_vld) `NPU_ASSERT_FAIL("LOAD AR valid dropped before ready")
        if (ar_pend && ar_vld && (ar_addr != ar_addr_q || ar_len != ar_len_q))
            `NPU_ASSERT_FAIL("LOAD AR payload changed before ready")
        if (ar_vld && (blen == 16'd0 || {16'd0, blen} > MAX_BURST || blen > ag_rem))
            `NPU_ASSERT_FAIL("LOAD burst length not in 1..min(MAX_BURST and beats left in row/run)")
        if (ar_vld && {20'd0, ag_addr[11:0]} + ({16'd0, blen} << LB) > 32'd4096)
            `NPU_ASSERT_FAIL("LOAD burst crosses a 4 KiB line")
        if (ar_fire && af_full) `NPU_ASSERT_FAIL("LOAD burst address FIFO overflow")
        if (r_fire && af_empty) `NPU_ASSERT_FAIL("LOAD read beat without an outstanding burst")
        if (beat_ok && !f_tr && hold_vld && !wr_fire)
            `NPU_ASSERT_FAIL("LOAD beat overwrites an unwritten holding register")
        if (wr_pend && in_run && (!wr_req || wr_addr != wr_addr_q))
            `NPU_ASSERT_FAIL("LOAD SPM write request changed before its grant")
        if (go && (c_bad || c_dram || c_spm)) `NPU_ASSERT_FAIL("LOAD starts a descriptor that failed its checks")
        if (f_fill && in_run && (ar_vld || r_fire)) `NPU_ASSERT_FAIL("FILL touches the DRAM read channel")
        if (cmd_fire && cmd_op != OP_LOAD && cmd_op != OP_FILL)
            `NPU_ASSERT_FAIL("LOAD engine given an opcode other than LOAD or FILL")
        if (fl_act && !in_run) `NPU_ASSERT_FAIL("FILL beat source active outside RUN")
    end
`endif
endmodule
`default_nettype wire
