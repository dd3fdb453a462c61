`default_nettype none
// npu_dma_load: executes LOAD instructions (DRAM -> SPM), see docs/isa.md.
// Fields: w0[14:12] tag, w0[15] transpose, w0[31:16] rows, w1 dram_addr (bytes), w2[15:0]
// spm_addr, w2[31:16] spm_stride (words), w3[15:0] row_bytes, w3[31:16] dram_stride (bytes).
// Rows start at any element address (dense tensors, docs/memory.md "DMA runs and bursts").
//
// Structure: an address generator (AG) issues AXI read bursts and runs up to MAX_OUT bursts ahead
// of the data; an address FIFO remembers each outstanding burst (for the limit and for the address
// of a failing beat). The AG reads RUNS: the beats floor(start/B) .. floor((end-1)/B) of a byte
// range, split by npu_burst_len (<= MAX_BURST beats, never across 4 KiB). The data side walks
// the words of the same rows in the same order (data returns in request order) and gets each
// from the realigner (npu_dma_align), which takes the beats as the words need them: it needs
// only the word's byte offset in its beat, its length and whether the next word continues in
// the same beat (`keep`), no per-burst bookkeeping besides r_last.
//  - normal mode: one run for the whole transfer when the rows are contiguous (dram_stride ==
//    row_bytes), else one per row. A chunk (one word; two with BW = 2) goes into a holding
//    register that writes the SPM; the realigner's output ready is "the register is empty
//    after this cycle" (hold_free), which sustains one chunk per cycle while the SPM grants
//    (one beat per cycle for long rows).
//  - transposed mode: blocks of 2S source rows x groups of up to 2 column blocks (the sub-row
//    of words cb, cb+1 of each row); the group fills a pair of transpose buffers, then its
//    columns are written out one SPM word per cycle. Two pairs: the fill side fills the next
//    group into one while the write side writes the last group's columns from the other, so
//    the beats and the SPM words of a stream of groups move at one per cycle each. A group's beats are read as one run for the block when
//    its sub-rows are contiguous (dram_stride == the sub-row's bytes) or beat-padded and
//    adjacent (dram_stride == its beats * B, dram_addr beat-aligned: dense pixels of <= 2 beats,
//    dY and Z of dW), else as one run per sub-row. Single-beat bursts cost the DRAM's per-burst
//    time and a MAX_OUT share of its latency each (~10 cycles at small); a 2S-row run of 16
//    beats costs 16 + 4. Each buffer is stored by column (tcm[t*2S + k] = element k of every
//    buffered row of word t), so a filling word scatters its elements into lane dp_i of the
//    columns and a column write is a plain array read.
// FILL (opcode 0x09, the LOAD format without its DRAM side): the same engine without the DRAM:
// after the descriptor checks (rows/row_bytes zero: BAD_DESC; SPM range as LOAD; no DRAM
// check) the realigner is fed zero beats instead of R beats, so the data side writes one zero
// word per granted cycle through the same SPM write port, walking the words of a normal LOAD.
// No AXI request is issued.
// LOAD_SPM (opcode 0x11, the LOAD format with the source in the SPM, docs/isa.md): npu_dma_desc
// turns the source into a byte address src_addr * B and pitch src_stride * B, so the address
// generator, realigner and transposer run as for a LOAD of those bytes; its bursts go, flagged
// (ar_spm = f_spm), to npu_spm_burst instead of the DRAM, whose beats come back (r_spm = d_spm:
// npu_top selects the R source by it) in request order like the DRAM's. Its beats and bursts are
// not DRAM traffic (cnt_beat, cnt_burst gated); cnt_copy counts the SPM words it writes. Order:
// the engine does not mix the two sources: a LOAD_SPM is accepted only when the data side is
// idle (no DRAM burst outstanding: every beat taken), and no descriptor is accepted while a
// LOAD_SPM's data side runs (pipelining, PIPE = 1, stops at a LOAD_SPM). Its errors: BAD_DESC and
// SPM_ADDR (of the source: the DRAM range check against the SPM's bytes; of the destination; an
// overlap of the two: BAD_DESC), ERR_INFO in SPM words (BAD_DESC: src_addr).
// Pipelined descriptors (issue 14): the engine has two sides with their own copy of the
// descriptor. The AG side (state: IDLE -> CHECK -> RUN -> IDLE) uses npu_dma_desc's fields;
// it leaves RUN as soon as its last burst is issued (a FILL, with no bursts, at go), so it can
// accept and check the next descriptor and issue its bursts while the data side still writes
// the last one's words. The data side (ds_busy) latches the fields it uses (d_*) when it starts
// a descriptor (ds_go): at go when it is idle, else (ds_pend) in the cycle after it finishes
// the one before. Data returns in request order on the R channel and the realigner takes
// exactly a descriptor's beats (asserted), so the next descriptor's beats wait on R until the
// data side starts it, and the SPM writes stay in program order. At most two descriptors are
// in the engine (cmd_rdy waits while one waits for the data side: npu_dmaq's INFLIGHT = 2);
// `done` pulses once per descriptor, in order. The realigner is cleared at ds_go.
// PIPE = 0 accepts a descriptor only when the data side is idle too: one at a time, cycle for
// cycle the engine before the split (npu_top's LOAD_PIPELINE, off by default). The beat
// counters count with the data side's tag (d_tag): beats are the data side's.
// Checks happen in one CHECK cycle before any request. A failed check is reported only once
// the data side is idle, so the last descriptor's `done` comes first, as with one descriptor
// at a time (docs/isa.md section 5: the error's pc is then the failing one).
// A DRAM error response stops the address generator and drops the descriptor waiting for the data side, if any; the beats of bursts
// already issued (of both descriptors) are accepted and dropped (DRAIN) so the shared read
// channel is not blocked, then the engine returns to idle.
// Wide beats (BEAT_WORDS = 2, docs/memory.md "Words and beats"): a DRAM beat is DB = 2B bytes.
// The address generator, the burst rule, span/align and every byte offset (dp_o, o_blk) work in
// DRAM beats; the realigner takes DB-byte beats. Normal mode and FILL walk a row in chunks of
// two words (j even: the row's next DB bytes from its offset, one realigner request), and the
// holding register writes them on two SPM write ports (wr, wr2: words w and w+1 in one cycle
// when their sub-banks differ, which they do for w even; else wr2 waits and wr writes w+1 in
// the next cycle), so a long row moves a beat per cycle into the SPM. The transposed mode keeps
// one word per cycle: word j of a sub-row starts at its offset + j*B modulo DB.
// Row pairs (BW = 2, rows of at most one word, contiguous in DRAM or a FILL's: d_pr): a chunk
// is two rows, the next 2 x row_bytes bytes of the run, which the realigner cuts after the
// first row (`cut`); the holding register writes them at w and w + spm_stride on wr and wr2
// (or one after the other on wr), so rows of 10 B move two a cycle instead of one. A transposed
// row block's first row sits at one of two offsets (2S rows of an even pitch are a multiple of
// B, not of DB): the group run lengths are registered for both.
// Assumes S is a power of 2 (beats divide 4 KiB), BEAT_WORDS 1 or 2 and SPM_AW <= 16.
module npu_dma_load #(
    parameter integer S         = 8,
    parameter integer SPM_AW    = 12,
    parameter integer SPM_WORDS = 4096,
    parameter integer DRAM_AW   = 24,
    parameter integer MAX_BURST = 16,
    parameter integer MAX_OUT   = 4,
    parameter integer BW        = 1,    // SPM words per DRAM beat (BEAT_WORDS): 1 or 2
    parameter integer PIPE      = 1     // 1: accept the next descriptor while the data side runs;
                                        // 0: only when both sides are idle (one at a time)
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
    input  wire [32*S*BW-1:0] r_data,
    input  wire              r_last,
    input  wire              r_resp,
    // SPM write port
    output wire              wr_req,
    output wire [SPM_AW-1:0] wr_addr,
    output wire [32*S-1:0]   wr_data,
    input  wire              wr_gnt,
    // second SPM write port (BW = 2; tied off by npu_top at BW = 1): word w+1 of a two-word
    // chunk in the cycle port 1 writes word w, at a lower priority than port 1
    output wire              wr2_req,
    output wire [SPM_AW-1:0] wr2_addr,
    output wire [32*S-1:0]   wr2_data,
    input  wire              wr2_gnt,
    // counter pulses
    output wire              cnt_beat,
    output wire [2:0]        cnt_tag,
    output wire              cnt_burst,
    output wire [1:0]        cnt_fill,     // SPM words zeroed by FILL written this cycle
    output wire [1:0]        cnt_copy,     // SPM words written by LOAD_SPM this cycle
    // LOAD_SPM: the AR request is for npu_spm_burst (with ar_vld), the R beats come from it
    output wire              ar_spm,
    output wire              r_spm
);
`include "npu_defs.vh"
    localparam integer B  = 4 * S;          // bytes per SPM word
    localparam integer WB = 32 * S;         // bits per SPM word
    localparam integer DB = B * BW;         // bytes per DRAM beat
    localparam integer DWB = WB * BW;       // bits per DRAM beat
    localparam integer E  = 2 * S;          // int16 elements per word (transpose block side)
    localparam integer LW = $clog2(B);      // log2 bytes per word
    localparam integer LB = $clog2(DB);     // log2 bytes per beat (span, align, offsets)
    localparam integer LE = $clog2(E);
    localparam integer OW = $clog2(MAX_OUT + 1);
    localparam [31:0] E32      = E;
    localparam [15:0] E16      = E32[15:0];
    localparam [31:0] B32      = B;
    localparam [15:0] BB16     = B32[15:0];             // B
    localparam [15:0] B2       = BB16 << 1;             // 2B: a full transposed group's bytes
    localparam [LB:0] BL       = B32[LB:0];             // a whole word's bytes
    localparam [LB-1:0] B_OFF  = B32[LB-1:0];           // B mod DB: word 1's offset in its beat (0 when BW = 1)

    // engine states (SM_: npu_defs.vh's ST_ are the NPU's run states)
    localparam [1:0] SM_IDLE = 2'd0, SM_CHECK = 2'd1, SM_RUN = 2'd2, SM_DRAIN = 2'd3;

    // ---------------- descriptor ----------------
    reg [1:0]  state;
    // the descriptor and its start checks, latched when the instruction is accepted
    wire [2:0]  f_tag;
    wire        f_tr;
    wire [15:0] f_rows;
    wire [31:0] f_daddr;
    wire [15:0] f_saddr, f_sstride, f_rbytes;
    wire [18:0] f_dstride;   // DRAM row pitch in bytes (the field << stride_shift)
    wire        f_cont;      // dram_stride == row_bytes: one run (normal mode)
    wire [15:0] nbeats_m1;   // nbeats - 1 (registered in u_desc: not in series with the compares)
    wire [15:0] nbeats;      // beats per row (= column blocks in transposed mode)
    wire        c_vld;       // the checks are ready (two cycles after acceptance)
    wire        c_bad, c_dram, c_spm, c_ovl;
    wire [31:0] c_dlast, c_slast;
    // The LOAD queue hands this engine LOAD and FILL only (npu_fetch routes SYNC_L to npu_dmaq,
    // which runs it): the opcode bits in which they differ tell them apart (one bit: OP_LOAD ^
    // OP_FILL folds to a constant mask), no opcode compare in front of the descriptor's
    // multipliers (asserted below).
    wire [F_INSN_OP_W-1:0] cmd_op = cmd_insn[F_INSN_OP_LSB +: F_INSN_OP_W];
    wire        cmd_fill = |((cmd_op ^ OP_LOAD) & (OP_LOAD ^ OP_FILL));
    // LOAD_SPM differs from LOAD in a bit where FILL does not (tests/unit/test_isa.c)
    wire        cmd_spm  = |((cmd_op ^ OP_LOAD) & (OP_LOAD ^ OP_LOAD_SPM));
    reg         f_fill;      // the descriptor is a FILL
    reg         f_spm;       // the descriptor is a LOAD_SPM
    npu_dma_desc #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .DRAM_AW(DRAM_AW),
                   .TR_BYTES(2)) u_desc (
        .clk(clk), .rst_n(rst_n), .load(cmd_fire), .cmd_insn(cmd_insn), .fill(cmd_fill),
        .spm(cmd_spm), .ovl(c_ovl),
        .tag(f_tag), .tr(f_tr), .rows(f_rows), .daddr(f_daddr), .saddr(f_saddr),
        .sstride(f_sstride), .rbytes(f_rbytes), .dstride(f_dstride), .cont(f_cont),
        .nbeats(nbeats), .nbeats_m1(nbeats_m1),
        .vld(c_vld), .bad(c_bad), .dram_err(c_dram), .spm_err(c_spm), .dlast(c_dlast), .slast(c_slast)
    );


    // data side: running a descriptor (ds_busy); a checked descriptor waits for it (ds_pend)
    reg ds_busy, ds_pend;
    reg d_spm;                // the data side runs a LOAD_SPM (its R beats come from the SPM)
    assign cmd_rdy = (state == SM_IDLE) && !ds_pend    // two descriptors at most
                     && (PIPE != 0 || !ds_busy)
                     && !(ds_busy && (d_spm || cmd_spm));   // no DRAM and SPM beats in flight together
    assign busy    = (state != SM_IDLE) || ds_busy || ds_pend;
    wire cmd_fire  = cmd_vld && cmd_rdy;
    // opcode and token bits are the queue's business
    // verilator lint_off UNUSEDSIGNAL
    wire unused_desc = &{1'b0, f_saddr, f_sstride, nbeats};   // bits above SPM_AW: checked at cmd_fire
    // verilator lint_on UNUSEDSIGNAL

    // the C = row_bytes/2 columns
    wire [15:0] ncols    = {1'b0, f_rbytes[15:1]};
    wire [31:0] stride   = {13'd0, f_dstride};             // DRAM row pitch in bytes
    wire [31:0] strideE  = {13'd0, f_dstride} << LE;       // pitch of a 2S-row block
    wire [LB-1:0] o_blk  = f_daddr[LB-1:0];                // offset of the first block's first row
    wire [LB-1:0] o_alt  = o_blk + B_OFF;                  // the other one a block can have: 2S *
                                                           // an even pitch is whole words, and
                                                           // whole beats only when BW = 1
    wire [LB:0] rlast    = (f_rbytes[LW-1:0] == {LW{1'b0}}) ? BL
                         : {{(LB-LW+1){1'b0}}, f_rbytes[LW-1:0]};   // a row's last word's bytes
    wire [SPM_AW-1:0] saddr_s   = f_saddr[SPM_AW-1:0];
    wire [SPM_AW-1:0] sstride_s = f_sstride[SPM_AW-1:0];

    wire chk_bad  = c_bad;
    wire chk_dram = c_dram;
    wire chk_spm  = c_spm;
    wire in_check = (state == SM_CHECK);
    // c_vld is a one-cycle pulse: a failed check waiting for the data side is held
    reg  chk_held;
    wire c_rdy    = c_vld || chk_held;
    wire go       = in_check && c_rdy && !chk_bad && !chk_dram && !chk_spm && !c_ovl;
    wire in_run   = (state == SM_RUN);          // the AG issues the descriptor's bursts
    // the data side starts the checked descriptor: at go if it is idle, else once it is
    // (registered inputs only: no SPM grant in this enable)
    wire ds_go    = (go || ds_pend) && !ds_busy;

    // The data side's copy of the descriptor (latched at ds_go from npu_dma_desc, which holds
    // it until the next cmd_fire: cmd_rdy waits for ds_pend to clear)
    reg          d_tr, d_fill, d_cont;
    reg          d_pr;        // row pairs (above)
    reg  [2:0]   d_tag;
    reg  [15:0]  d_nbm1;      // nbeats - 1
    reg  [LB+1:0] d_dst;      // the DRAM pitch's low bits (offsets move modulo DB)
    reg  [LB-1:0] d_strE;     // the same of a 2S-row block's pitch
    reg  [15:0]  d_ncols;
    reg  [LB:0]  d_rlast;
    reg  [SPM_AW-1:0] d_sstride;
    reg          d_tcf, d_tcl, d_trl;   // t_cont_full, t_cont_last, t_run_last
    wire [SPM_AW-1:0] d_sstrideE2 = d_sstride << (LE + 1);   // a group's 2 x 2S columns

`include "npu_dma_fn.vh"

    // ---------------- address generator ----------------
    reg         ag_act;
    reg [31:0]  ag_addr;    // next burst address (beat-aligned)
    reg [31:0]  ag_row;     // normal: current row start; transposed: current row-block start
    reg [31:0]  ag_rem;     // beats left in the run
    reg [15:0]  ag_rows;    // normal: runs left; transposed: rows left from this row block
    reg [LE-1:0] ag_i;      // transposed: row inside the block (per-sub-row runs)
    reg [15:0]  ag_cols;    // transposed: columns left from this group's first (group: 2 words
                            // when > 2S, else 1)
    reg [31:0]  ag_cboff;   // transposed: the group's first word * B
    reg [31:0]  ag_seg;     // transposed: start of the current sub-row
    reg [LE:0]  ag_nr;      // transposed: rows in this block (<= 2S)
    reg         ag_alt;     // transposed: this block's first row is at o_alt, not o_blk (BW = 2)

    wire [15:0] blen;
    wire        blen_ok;     // blen and ag_row_end belong to ag_addr/ag_rem (npu_burst_len)
    wire        ag_row_end;  // this burst ends the run (blen == ag_rem)
    // the rule needs no more than 16 bits of the beats left: a run longer than 2^16 beats is
    // still longer than any burst
    wire [15:0] ag_want = (ag_rem[31:16] != 16'd0) ? 16'hFFFF : ag_rem[15:0];
    // registered burst rule: the next burst's length is ready one cycle after each burst
    npu_burst_len #(.S(S), .MAX_BURST(MAX_BURST), .BEAT_WORDS(BW)) u_blen (
        .clk(clk), .rst_n(rst_n), .addr(ag_addr[11:0]), .want(ag_want), .upd(go || ar_fire),
        .len(blen), .whole(ag_row_end), .ok(blen_ok));
    wire [7:0]  blen_m1 = blen[7:0] - 8'd1;   // MAX_BURST <= 256: 256 wraps to 255

    // normal mode: the next row's run
    wire [31:0] row_nx   = ag_row + stride;
    // transposed groups: the last group of a row holds its last 2*cols bytes, the others 2B;
    // run = the block's sub-rows are one run: contiguous (pitch = the sub-row) or beat-padded
    // and adjacent (pitch = its words * B, beat-aligned rows)
    wire [15:0] gb_last  = {f_rbytes[15:LW+1], {(LW+1){1'b0}}} == f_rbytes
                           ? B2 : {{(15-LW){1'b0}}, f_rbytes[LW:0]};
    wire [15:0] gw_last  = (gb_last > BB16) ? B2 : BB16;          // its words * B
    wire        t_cont_full = (f_dstride == {3'd0, B2});
    wire        t_cont_last = (f_dstride == {3'd0, gb_last});
    // word-padded: the sub-rows padded to whole words, adjacent, from a word-aligned address
    // (with BW = 2 two padded one-word sub-rows may share a beat: see w_keep)
    wire        t_run_last  = t_cont_last || (f_dstride == {3'd0, gw_last} && f_daddr[LW-1:0] == {LW{1'b0}});
    // the block's run: nr * pitch bytes, 2S * pitch for a full block; the last block's rows
    // (nr_tail) times the pitch (the pitch of a block run is at most 2B: a small product)
    wire [LE:0] nr_tail  = (f_rows[LE-1:0] == {LE{1'b0}}) ? E16[LE:0] : {1'b0, f_rows[LE-1:0]};
    wire [LE+LW+2:0] tail_p = {{(LW+2){1'b0}}, nr_tail} * {{(LE+1){1'b0}}, f_dstride[LW+1:0]};
    wire [31:0] tail_b   = {{(32-LE-LW-3){1'b0}}, tail_p};
    // a group's first run (at the block's first row, offset o_blk or o_alt): the block's run,
    // or the first row's sub-row. Eight values per descriptor (block offset, last group or not,
    // full block or the last one; with BW = 1 the offsets are equal and half of them unused),
    // registered from the descriptor (latched two cycles before go at the earliest), so they are
    // ready at go and stay while the descriptor does. A group's next group starts 2B = BW*B
    // bytes on: the same offset when BW <= 2.
    wire [31:0] g_rem_c[0:7];   // [{other offset, last group, full block}]
    genvar ga;
    generate
        for (ga = 0; ga < 2; ga = ga + 1) begin : g_grp_run
            wire [LB-1:0] o_g = (ga == 0) ? o_blk : o_alt;
            wire [31:0] g_blk_full = span(o_g, strideE);           // a full block's run
            wire [31:0] g_blk_tail = span(o_g, tail_b);            // the last block's run
            wire [31:0] g_sub_full = span(o_g, {16'd0, B2});       // a 2-word sub-row
            wire [31:0] g_sub_last = span(o_g, {16'd0, gb_last});  // a row's last sub-row
            assign g_rem_c[4*ga + 0] = t_cont_full ? g_blk_tail : g_sub_full;
            assign g_rem_c[4*ga + 1] = t_cont_full ? g_blk_full : g_sub_full;
            assign g_rem_c[4*ga + 2] = t_run_last ? g_blk_tail : g_sub_last;
            assign g_rem_c[4*ga + 3] = t_run_last ? g_blk_full : g_sub_last;
        end
    endgenerate
    reg  [31:0] g_rem[0:7];
    integer gi;
    always @(posedge clk) for (gi = 0; gi < 8; gi = gi + 1) g_rem[gi] <= g_rem_c[gi];
    wire [15:0] ag_i16   = {{(16-LE){1'b0}}, ag_i};
    wire [15:0] ag_nr16  = {{(15-LE){1'b0}}, ag_nr};
    wire ag_cb_last  = (ag_cols <= {E16[14:0], 1'b0});          // the block's last group
    wire ag_run      = ag_cb_last ? t_run_last : t_cont_full;
    wire ag_grp_last = ag_run || (ag_i16 + 16'd1 == ag_nr16);   // with ag_row_end: the group's last run
    wire [31:0] ag_gb = ag_cb_last ? {15'd0, ag_cols, 1'b0} : {16'd0, B2};   // sub-row bytes
    wire [31:0] seg_nx   = ag_seg + stride;                     // the group's next sub-row
    wire [15:0] cols_nx  = ag_cols - {E16[14:0], 1'b0};         // the block's next group
    wire        cbl_nx   = (ag_cols <= {E16[13:0], 2'b00});     // cols_nx <= 2E
    wire [15:0] rows_nx  = ag_rows - E16;                       // rows left after this block
    wire [LE:0] nr_nx    = (rows_nx > E16) ? E16[LE:0] : rows_nx[LE:0];
    wire [LE:0] nr_go    = (f_rows > E16) ? E16[LE:0] : f_rows[LE:0];
    wire        cbl_go   = (ncols <= {E16[14:0], 1'b0});
    wire [31:0] blk_nx   = ag_row + strideE;                    // the next row block's first byte
    wire        alt_nx   = (BW > 1) && (blk_nx[LB-1:0] != o_blk);

    // The beats of the run after this one, registered (issue 7: the group and sub-row
    // arithmetic is 29 levels from ag_cols to ag_rem otherwise). Its inputs change only when a
    // burst is issued (or at go), and npu_burst_len allows no burst in the next cycle, so the
    // register is up to date whenever a burst can end a run.
    reg  [31:0] ag_rem_nx;
    wire [31:0] rem_nx_c = !f_tr ? span(row_nx[LB-1:0], {16'd0, f_rbytes})
                         : !ag_grp_last ? span(seg_nx[LB-1:0], ag_gb)
                         : ag_cb_last ? g_rem[{alt_nx, cbl_go, nr_nx == E16[LE:0]}]
                         : g_rem[{ag_alt, cbl_nx, ag_nr == E16[LE:0]}];
    always @(posedge clk) ag_rem_nx <= rem_nx_c;

    wire        af_full, af_empty;
    wire [31:0] af_dout;
    // verilator lint_off UNUSEDSIGNAL
    wire [OW-1:0] af_count;   // the limit uses af_full
    // verilator lint_on UNUSEDSIGNAL

    // this burst is the descriptor's last one
    wire ag_last = !f_tr ? (ag_row_end && ag_rows == 16'd1)
                         : (ag_row_end && ag_grp_last && ag_cb_last && ag_rows <= E16);
    // both modes wait for the registered burst length
    assign ar_vld  = in_run && run && ag_act && !af_full && blen_ok;
    assign ar_addr = ag_addr;
    assign ar_len  = blen_m1;
    wire ar_fire   = ar_vld && ar_rdy;

    // ---------------- data side ----------------
    // holding register: a chunk of up to BW words at hold_addr (hold_vld: its first word is
    // unwritten, hold_v1: its second, BW = 2)
    reg              hold_vld, hold_v1, hold_last;
    reg [SPM_AW-1:0] hold_addr, hold_addr1;   // the chunk's words (hold_addr1 = hold_addr + 1,
                                              // registered: no incrementer before the SPM grant)
    reg [DWB-1:0]    hold_data;
    reg [7:0]        dp_bc;     // beat inside the current burst (for err_info)
    reg              dp_act;    // normal / FILL: words left
    reg [15:0]       dp_j;      // normal: word in the row
    reg [15:0]       dp_rows;   // rows left (normal) / rows left from this row block (transposed)
    reg [LB-1:0]     dp_o;      // byte offset of the current row in its first beat
    reg [LB-1:0]     dp_bo;     // transposed: the same for the current row block's first row
    reg [SPM_AW-1:0] dp_spm, dp_srow;
    // transposed: two buffer pairs; the fill side fills pair fb while the write side writes the
    // columns of pair eb (t_full: the pair holds a whole group not yet written)
    reg              t_act;     // groups left to fill
    reg              t_fb, t_eb;
    reg  [1:0]       t_full;
    reg [LE-1:0]     dp_i, dp_k;
    reg              dp_t;      // fill: word of the group (-> buffer dp_t of the pair)
    reg              dp_et;     // write: buffer of the column
    reg [15:0]       dp_cols;   // fill: columns left from this group's first
    reg [15:0]       dp_ecols;  // write: the same for the group being written
    reg [15:0]       dp_erows;  // write: rows left from the block being written
    reg [SPM_AW-1:0] dp_rbaddr, dp_cbaddr, dp_caddr;
    reg [WB-1:0]     tcm [0:4*E-1];   // two pairs of transpose buffers by column: lane i = source row i

    wire [15:0] dp_i16 = {{(16-LE){1'b0}}, dp_i};
    wire [15:0] dp_k16 = {{(16-LE){1'b0}}, dp_k};
    // normal mode / FILL at BW = 2: the data side walks chunks of two words (j even), one
    // realigner request each, the row's next DB bytes from its offset; c_two: word j+1 exists
    wire c_two        = (BW > 1) && (d_pr ? (dp_rows != 16'd1) : (dp_j != d_nbm1));
    wire pr2          = d_pr && c_two;    // a chunk of two rows (dp_j = 0 = d_nbm1)
    wire dp_row_end   = (dp_j == d_nbm1) || (c_two && dp_j + 16'd1 == d_nbm1);
    // fill side
    wire dp_g2        = (dp_cols > E16);   // two words per row in this group
    wire t_sub_end    = dp_t || !dp_g2;    // the word ends the row's sub-row
    wire t_fill_last  = t_sub_end && ((dp_i16 == E16 - 16'd1) || (dp_i16 + 16'd1 == dp_rows));
    wire t_last_cb    = (dp_cols <= {E16[14:0], 1'b0});
    wire t_last_rb    = (dp_rows <= E16);
    wire t_cont       = t_last_cb ? d_tcl : d_tcf;               // the sub-rows are one byte run
    wire t_fill       = t_act && !t_full[t_fb];                  // a word is wanted
    // write side
    wire e_g2         = (dp_ecols > E16);
    wire [15:0] dp_tk16 = {{(15-LE){1'b0}}, dp_et, dp_k};  // column index in the group
    wire t_col_last   = (dp_et == e_g2 && dp_k16 == E16 - 16'd1) || (dp_tk16 + 16'd1 == dp_ecols);
    wire e_last_cb    = (dp_ecols <= {E16[14:0], 1'b0});
    wire e_last_rb    = (dp_erows <= E16);
    wire t_wr         = t_full[t_eb];                            // a column is to be written

    wire [WB-1:0] tcol = tcm[{t_eb, dp_et, dp_k}];   // current column

    // the word the realigner is asked for: its offset, length (a row's last word: the rest) and
    // whether the next word continues in its last beat (inside a row, or contiguous rows)
    wire          w_rowlast = d_tr ? (t_last_cb && t_sub_end) : dp_row_end;
    // word j of a row (or of a group's sub-row) starts j*B bytes after the row, modulo DB
    wire [LB-1:0] w_off     = dp_o + ((d_tr ? dp_t : dp_j[0]) ? B_OFF : {LB{1'b0}});
    localparam [LB:0] DBL   = BL << (BW - 1);            // a whole chunk's bytes (B or DB)
    wire [LB:0]   w_len     = pr2 ? {d_rlast[LB-1:0], 1'b0}
                            : (!d_tr && c_two) ? (dp_row_end ? BL + d_rlast : DBL)
                            : w_rowlast ? d_rlast : BL;
    // A padded last group's run (BW = 2): the next sub-row, pitch - t*B bytes after this word,
    // may start in the beat this word ends in (a one-word sub-row at offset 0, the next at B; a
    // two-word one from offset B, the next at B of the following beat): keep it then.
    // verilator lint_off UNUSEDSIGNAL
    wire [LB+1:0] kp_end    = {2'b00, w_off} + {1'b0, w_len} - {{(LB+1){1'b0}}, 1'b1};
    wire [LB+1:0] kp_nx     = {2'b00, w_off} + d_dst - (dp_t ? {2'b00, BL[LB-1:0]} : {(LB+2){1'b0}});
    // verilator lint_on UNUSEDSIGNAL
    wire          t_pad_keep = (BW > 1) && t_last_cb && d_trl && !d_tcl
                               && kp_end[LB+1:LB] == kp_nx[LB+1:LB];
    wire          w_keep    = d_tr ? (!t_sub_end || ((t_cont || t_pad_keep) && !t_fill_last))
                                   : (!dp_row_end || d_cont);
    wire          al_req    = ds_busy && (d_tr ? t_fill : dp_act);
    // the holding register is empty after this cycle: each unwritten word is granted (the
    // second on port 2 when the first is pending, else on port 1)
    wire          hold_free = (!hold_vld || wr_gnt) && (!hold_v1 || (hold_vld ? wr2_gnt : wr_gnt));
    wire          al_rdy    = d_tr || hold_free;
    wire          al_in_rdy, al_vld, al_uses_r;
    wire [DWB-1:0] al_beat;      // the word in the low B bytes of a beat-wide window
    wire [DWB-1:0] al_hi;        // pr2: the second row, from lane 0
    wire [DWB-1:0] al_pair;      // pr2: the chunk's two rows, {second, first} (BW = 2 only)
    generate
        if (BW > 1) begin : g_pair
            assign al_pair = {al_hi[WB-1:0], al_beat[WB-1:0]};
        end else begin : g_nopair
            assign al_pair = al_beat;
        end
    endgenerate
    // realigner beats are DRAM beats (S*BW: DB bytes); a word is at most B of them
    npu_dma_align #(.S(S * BW)) u_align (
        .clk(clk), .rst_n(rst_n), .clr(ds_go),
        .req(al_req), .off(w_off), .len(w_len), .keep(w_keep), .cut(pr2 ? d_rlast : {(LB+1){1'b0}}),
        .in_vld(r_vld || d_fill), .in_rdy(al_in_rdy), .in_data(r_data & {DWB{!d_fill}}),
        .out_vld(al_vld), .out_rdy(al_rdy), .out_data(al_beat), .out_hi(al_hi), .out_uses_in(al_uses_r));
    wire [WB-1:0] al_data = al_beat[WB-1:0];
    // verilator lint_off UNUSEDSIGNAL
    wire unused_al = &{1'b0, al_beat, al_hi};   // bytes past B are zero (len <= B)
    // verilator lint_on UNUSEDSIGNAL

    // FILL: the realigner takes zero beats, never R beats
    assign r_rdy   = (state == SM_DRAIN) || (ds_busy && !d_fill && al_in_rdy);
    wire r_fire    = r_vld && r_rdy;
    wire r_err     = r_fire && r_resp && ds_busy;
    // a word of the rows, not one made with a failed beat (al_uses_r instead of r_fire keeps the
    // SPM grant -> realigner -> r_rdy path out of it)
    wire word_ok   = al_vld && al_rdy && !(al_uses_r && r_vld && r_resp && !d_fill);

    assign wr_req  = ds_busy && (d_tr ? t_wr : (hold_vld || hold_v1));
    // port 1 writes the chunk's first unwritten word (with BW = 1 always the first: the second
    // word's mux folds away)
    wire   hold_hi = (BW > 1) && !hold_vld;
    assign wr_addr = d_tr ? dp_caddr : hold_hi ? hold_addr1 : hold_addr;
    assign wr_data = d_tr ? tcol : hold_hi ? hold_data[DWB-1 -: WB] : hold_data[WB-1:0];
    wire wr_fire   = wr_req && wr_gnt;
    assign wr2_req  = ds_busy && !d_tr && hold_vld && hold_v1;
    assign wr2_addr = hold_addr1;
    assign wr2_data = hold_data[DWB-1 -: WB];
    wire wr2_fire   = wr2_req && wr2_gnt;
    wire hold_done  = ds_busy && !d_tr && (hold_vld || hold_v1) && hold_free;   // the chunk is written
    wire t_grp_done = word_ok && d_tr && t_fill_last;   // pair fb now holds its group
    wire t_grp_out  = wr_fire && d_tr && t_col_last;    // pair eb is written out
    wire dp_rows_en = (word_ok && !d_tr && dp_row_end) || (t_grp_done && t_last_cb);
    // the data side's last word is written
    wire fin       = d_tr ? (t_grp_out && e_last_cb && e_last_rb)
                          : (hold_done && hold_last);

    npu_fifo #(.W(32), .DEPTH(MAX_OUT)) u_af (
        .clk(clk), .rst_n(rst_n),
        .push(ar_fire), .din(ag_addr),
        .pop(r_fire && r_last), .dout(af_dout),
        .full(af_full), .empty(af_empty), .count(af_count)
    );

    // a LOAD_SPM's beats and bursts are the SPM's, not DRAM traffic
    assign cnt_beat  = r_fire && !d_spm;
    assign cnt_burst = ar_fire && !f_spm;
    assign cnt_fill  = {1'b0, wr_fire && d_fill} + {1'b0, wr2_fire && d_fill};
    assign cnt_copy  = {1'b0, wr_fire && d_spm} + {1'b0, wr2_fire && d_spm};
    assign ar_spm    = f_spm;
    assign r_spm     = d_spm;
    assign cnt_tag   = d_tag;          // beats are the data side's (bursts carry no tag)

    // ---------------- control state ----------------
    always @(posedge clk) begin
        if (!rst_n) begin
            state    <= SM_IDLE;
            ds_busy  <= 1'b0;
            ds_pend  <= 1'b0;
            d_spm    <= 1'b0;
            chk_held <= 1'b0;
            done     <= 1'b0;
            err      <= 1'b0;
            err_code <= 8'd0;
            err_info <= 32'd0;
            ag_act   <= 1'b0;
            dp_bc    <= 8'd0;
        end else begin
            done <= 1'b0;
            err  <= 1'b0;
            if (r_fire) dp_bc <= r_last ? 8'd0 : dp_bc + 8'd1;
            ds_busy <= ds_go || (ds_busy && !fin && !r_err);
            if (ds_go) d_spm <= f_spm;
            ds_pend <= (go || ds_pend) && ds_busy && !r_err;
            chk_held <= in_check && c_rdy && !go && ds_busy && !r_err;
            if (fin && !r_err) done <= 1'b1;
            case (state)
                SM_IDLE: if (cmd_fire) state <= SM_CHECK;
                // the descriptor's checks take two cycles; a failure waits for the data side
                SM_CHECK: if (c_rdy && (go || !ds_busy)) begin
                    // LOAD_SPM: the source in SPM words (src_addr; its last word out of range)
                    if (chk_bad) begin
                        err <= 1'b1; err_code <= ERR_BAD_DESC; err_info <= f_spm ? f_daddr >> LW : f_daddr;
                        state <= SM_IDLE;
                    end else if (chk_dram) begin
                        err <= 1'b1; err_code <= f_spm ? ERR_SPM_ADDR : ERR_DRAM_ADDR;
                        err_info <= f_spm ? c_dlast >> LW : c_dlast;
                        state <= SM_IDLE;
                    end else if (chk_spm) begin
                        err <= 1'b1; err_code <= ERR_SPM_ADDR; err_info <= c_slast;
                        state <= SM_IDLE;
                    end else if (c_ovl) begin
                        err <= 1'b1; err_code <= ERR_BAD_DESC; err_info <= f_daddr >> LW;
                        state <= SM_IDLE;
                    end else begin          // go: a FILL has no bursts to issue
                        ag_act   <= !f_fill;
                        state    <= f_fill ? SM_IDLE : SM_RUN;
                    end
                end
                SM_RUN: if (ar_fire && ag_last) begin   // the last burst: free for the next one
                    ag_act <= 1'b0;
                    state  <= SM_IDLE;
                end
                default: if (af_empty) state <= SM_IDLE;   // SM_DRAIN
            endcase
            // a failed beat of the data side's descriptor (whatever the AG does meanwhile):
            // stop issuing, drop the waiting descriptor, drain the bursts issued
            if (r_err) begin
                err <= 1'b1; err_code <= ERR_DRAM_RESP;
                err_info <= af_dout + ({24'd0, dp_bc} << LB);
                ag_act <= 1'b0;
                state  <= SM_DRAIN;
            end
        end
    end

    // The data-side flags as set/clear pairs outside the state machine: the SPM grant and the R
    // handshake arrive late (through the SPM arbiter), so they pass through a few gates, not the
    // state mux. In normal mode a word wins over the write that empties the register. In
    // transposed mode a pair is filled only while it is not full and written only while it is,
    // so the group that completes a pair and the column that empties the other meet safely.
    always @(posedge clk) begin
        hold_vld <= rst_n && !ds_go && !r_err
                    && ((word_ok && !d_tr) || (hold_vld && !(wr_fire && !d_tr)));
        hold_v1  <= rst_n && !ds_go && !r_err
                    && ((word_ok && !d_tr && c_two) || (hold_v1 && !(hold_vld ? wr2_fire : wr_fire && !d_tr)));
        t_act    <= rst_n && ((ds_go && f_tr) || (t_act && !(t_grp_done && t_last_cb && t_last_rb)));
        t_fb     <= rst_n && !ds_go && (t_fb ^ t_grp_done);
        t_eb     <= rst_n && !ds_go && (t_eb ^ t_grp_out);
        t_full[0] <= rst_n && !ds_go && ((t_grp_done && !t_fb) || (t_full[0] && !(t_grp_out && !t_eb)));
        t_full[1] <= rst_n && !ds_go && ((t_grp_done && t_fb) || (t_full[1] && !(t_grp_out && t_eb)));
        dp_act   <= rst_n && ((ds_go && !f_tr)
                    || (dp_act && ds_busy && !(word_ok && dp_row_end && dp_rows == (pr2 ? 16'd2 : 16'd1))));
    end

    // ---------------- datapath (no reset) ----------------
    always @(posedge clk) begin
        if (cmd_fire) begin
            f_fill <= cmd_fill;
            f_spm  <= cmd_spm;
        end
        if (go) begin
            ag_row   <= f_daddr;
            ag_seg   <= f_daddr;
            ag_addr  <= align(f_daddr);
            ag_rem   <= f_tr ? g_rem[{1'b0, cbl_go, nr_go == E16[LE:0]}]
                      : f_cont ? {{LB{1'b0}}, c_dlast[31:LB]} - {{LB{1'b0}}, f_daddr[31:LB]} + 32'd1
                      : span(o_blk, {16'd0, f_rbytes});
            ag_rows  <= (f_cont && !f_tr) ? 16'd1 : f_rows;
            ag_i     <= {LE{1'b0}};
            ag_cols  <= ncols;
            ag_cboff <= 32'd0;
            ag_nr    <= nr_go;
            ag_alt   <= 1'b0;
        end
        // the data side starts the checked descriptor (still in npu_dma_desc's fields)
        if (ds_go) begin
            d_tr     <= f_tr;
            d_fill   <= f_fill;
            d_cont   <= f_cont;
            d_pr     <= (BW > 1) && !f_tr && (f_cont || f_fill) && (nbeats_m1 == 16'd0);
            d_tag    <= f_tag;
            d_nbm1   <= nbeats_m1;
            d_dst    <= f_dstride[LB+1:0];
            d_strE   <= strideE[LB-1:0];
            d_ncols  <= ncols;
            d_rlast  <= rlast;
            d_sstride <= sstride_s;
            d_tcf    <= t_cont_full;
            d_tcl    <= t_cont_last;
            d_trl    <= t_run_last;
            dp_bo    <= o_blk;
            dp_j     <= 16'd0;
            dp_rows  <= f_rows;
            dp_o     <= o_blk;
            dp_spm   <= saddr_s;
            dp_srow  <= saddr_s;
            dp_i     <= {LE{1'b0}};
            dp_k     <= {LE{1'b0}};
            dp_t     <= 1'b0;
            dp_et    <= 1'b0;
            dp_cols  <= ncols;
            dp_ecols <= ncols;
            dp_erows <= f_rows;
            dp_rbaddr <= saddr_s;
            dp_cbaddr <= saddr_s;
            dp_caddr  <= saddr_s;
        end

        // address generator
        if (ar_fire) begin
            if (!ag_row_end) begin            // the run goes on
                ag_rem  <= ag_rem - {16'd0, blen};
                ag_addr <= ag_addr + ({16'd0, blen} << LB);
            end else if (!f_tr) begin         // the next row's run
                ag_rows <= ag_rows - 16'd1;
                ag_row  <= row_nx;
                ag_addr <= align(row_nx);
                ag_rem  <= ag_rem_nx;
            end else if (ag_grp_last) begin
                ag_i <= {LE{1'b0}};
                if (ag_cb_last) begin         // next row block, first group
                    ag_cols  <= ncols;
                    ag_cboff <= 32'd0;
                    ag_rows  <= rows_nx;
                    ag_nr    <= nr_nx;
                    ag_rem   <= ag_rem_nx;
                    ag_alt   <= alt_nx;
                    ag_row   <= blk_nx;
                    ag_seg   <= blk_nx;
                    ag_addr  <= align(blk_nx);
                end else begin                // next group of the block
                    ag_cols  <= cols_nx;
                    ag_cboff <= ag_cboff + 2 * B;
                    ag_rem   <= ag_rem_nx;
                    ag_seg   <= ag_row + ag_cboff + 2 * B;
                    ag_addr  <= align(ag_row + ag_cboff + 2 * B);
                end
            end else begin                    // next sub-row of the group
                ag_i    <= ag_i + 1'b1;
                ag_rem  <= ag_rem_nx;
                ag_seg  <= seg_nx;
                ag_addr <= align(seg_nx);
            end
        end

        // rows left: one writer with a precomputed value, so the late beat/grant handshakes
        // only enable it (they come through the SPM arbiter)
        if (dp_rows_en) dp_rows <= d_tr ? dp_rows - E16 : dp_rows - (pr2 ? 16'd2 : 16'd1);

        // normal data side: word -> holding register
        if (word_ok && !d_tr) begin
            hold_addr  <= dp_spm;
            hold_addr1 <= d_pr ? dp_spm + d_sstride : dp_spm + 1'b1;
            hold_data  <= pr2 ? al_pair : al_beat;
            hold_last <= dp_row_end && (dp_rows == (pr2 ? 16'd2 : 16'd1));
            if (dp_row_end) begin
                dp_j    <= 16'd0;
                dp_o    <= dp_o + (pr2 ? {d_dst[LB-2:0], 1'b0} : d_dst[LB-1:0]);
                dp_srow <= dp_srow + (pr2 ? d_sstride << 1 : d_sstride);
                dp_spm  <= dp_srow + (pr2 ? d_sstride << 1 : d_sstride);
            end else begin                    // the next chunk: BW words on (c_two inside a row)
                dp_j    <= dp_j + (c_two ? 16'd2 : 16'd1);
                dp_spm  <= dp_spm + {{(SPM_AW-2){1'b0}}, c_two, !c_two};
            end
        end

        // transposed fill side: a group's words come row by row, the g words of a row in turn
        // (word t -> buffer t of pair fb); the next group follows into the other pair
        if (word_ok && d_tr) begin
            dp_t <= dp_g2 && !dp_t;
            if (t_sub_end) begin
                dp_i <= t_fill_last ? {LE{1'b0}} : dp_i + 1'b1;
                dp_o <= !t_fill_last ? dp_o + d_dst[LB-1:0]
                      : t_last_cb ? dp_bo + d_strE : dp_bo;
            end
            if (t_fill_last && t_last_cb) begin   // the next row block
                dp_bo <= dp_bo + d_strE;
            end
            if (t_fill_last) dp_cols <= t_last_cb ? d_ncols : dp_cols - {E16[14:0], 1'b0};
        end
        // transposed write side: the columns of pair eb, one SPM word each
        if (wr_fire && d_tr) begin
            if (t_col_last) begin
                dp_k  <= {LE{1'b0}};
                dp_et <= 1'b0;
                if (e_last_cb) begin
                    dp_ecols  <= d_ncols;
                    dp_erows  <= dp_erows - E16;
                    dp_rbaddr <= dp_rbaddr + 1'b1;
                    dp_cbaddr <= dp_rbaddr + 1'b1;
                    dp_caddr  <= dp_rbaddr + 1'b1;
                end else begin
                    dp_ecols  <= dp_ecols - {E16[14:0], 1'b0};
                    dp_cbaddr <= dp_cbaddr + d_sstrideE2;
                    dp_caddr  <= dp_cbaddr + d_sstrideE2;
                end
            end else begin
                if (dp_k16 == E16 - 16'd1) dp_et <= 1'b1;
                dp_k     <= dp_k + 1'b1;
                dp_caddr <= dp_caddr + d_sstride;
            end
        end
    end

    // Transpose buffer fill: row dp_i's word dp_t goes to lane dp_i of every column of buffer
    // dp_t of pair fb; the first row of a group also clears the other lanes (rows past `rows`
    // read as zero lanes).
    // Blocking writes, updated in place (a non-blocking write to an array element costs a
    // shadow value and flag per element every cycle). This is race-free: a pair is written only
    // while it is not full (t_fill) and read, through wr_data, which the SPM samples, only
    // while it is full (t_wr), so a pair is never written and read in the same cycle.
    integer k;
    /* verilator lint_off BLKSEQ */
    always @(posedge clk) begin
        if (word_ok && d_tr) begin
            for (k = 0; k < E; k = k + 1) begin
                if (dp_i == {LE{1'b0}}) tcm[{t_fb, dp_t, k[LE-1:0]}] = {{(WB-16){1'b0}}, al_data[k*16 +: 16]};
                else                    tcm[{t_fb, dp_t, k[LE-1:0]}][dp_i*16 +: 16] = al_data[k*16 +: 16];
            end
        end
    end
    /* verilator lint_on BLKSEQ */

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // AXI AR: valid and payload hold until ready (an error stop, leaving RUN, may withdraw);
    // bursts within the rule and inside the run; the bookkeeping FIFO and the holding register
    // never overflow; the realigner takes exactly the beats the AG asked for its descriptor.
    // Pipelining: the data side starts descriptors in the order they pass their checks, only
    // when idle, never one the AG has not started (seq numbers); at most two in the engine.
    reg        ar_pend, wr_pend;
    reg [31:0] ar_addr_q;
    reg [7:0]  ar_len_q;
    reg [SPM_AW-1:0] wr_addr_q;
    reg [31:0] ag_req;       // beats the AG has requested for its current descriptor
    reg [31:0] ds_owed;      // beats requested for the data side's descriptor and not yet taken
    reg        ds_same;      // the data side runs the AG's current descriptor
    reg [7:0]  ag_seq, ds_seq;   // descriptors started by each side
    wire [31:0] ar_beats = ar_fire ? {16'd0, blen} : 32'd0;
    always @(posedge clk) begin
        ar_pend   <= rst_n && ar_vld && !ar_rdy;
        wr_pend   <= rst_n && wr_req && !wr_gnt;
        ar_addr_q <= ar_addr;
        ar_len_q  <= ar_len;
        wr_addr_q <= wr_addr;
        if (!rst_n) begin
            ag_req <= 32'd0; ds_owed <= 32'd0; ds_same <= 1'b0; ag_seq <= 8'd0; ds_seq <= 8'd0;
        end else begin
            ag_req  <= go ? 32'd0 : ag_req + ar_beats;
            ds_same <= ds_go || (ds_same && !go);
            ds_owed <= ds_go ? (go ? 32'd0 : ag_req + ar_beats)
                     : ds_owed + (ds_same ? ar_beats : 32'd0) - {31'd0, r_fire && ds_busy};
            if (go)    ag_seq <= ag_seq + 8'd1;
            if (ds_go) ds_seq <= ds_seq + 8'd1;
        end
    end
    wire ag_pending = ds_same && in_run && ag_act;   // the AG still issues the data side's bursts
    always @(posedge clk) if (rst_n) begin
        if (ar_pend && in_run && run && !ar_vld) `NPU_ASSERT_FAIL("LOAD AR valid dropped before ready")
        if (ar_pend && ar_vld && (ar_addr != ar_addr_q || ar_len != ar_len_q))
            `NPU_ASSERT_FAIL("LOAD AR payload changed before ready")
        if (ar_vld && (blen == 16'd0 || {16'd0, blen} > MAX_BURST || {16'd0, blen} > ag_rem))
            `NPU_ASSERT_FAIL("LOAD burst length not in 1..min(MAX_BURST and beats left in the run)")
        if (ar_vld && {20'd0, ag_addr[11:0]} + ({16'd0, blen} << LB) > 32'd4096)
            `NPU_ASSERT_FAIL("LOAD burst crosses a 4 KiB line")
        if (ar_vld && ag_addr[LB-1:0] != {LB{1'b0}}) `NPU_ASSERT_FAIL("LOAD burst address not beat-aligned")
        if (go && (g_rem[0] != g_rem_c[0] || g_rem[1] != g_rem_c[1]
                   || g_rem[2] != g_rem_c[2] || g_rem[3] != g_rem_c[3]))
            `NPU_ASSERT_FAIL("LOAD group run lengths not ready at go")
        if (ar_fire && ag_row_end && ag_rem_nx != rem_nx_c)
            `NPU_ASSERT_FAIL("LOAD next run length register stale when a run ends")
        if (ar_fire && af_full) `NPU_ASSERT_FAIL("LOAD burst address FIFO overflow")
        if (r_fire && af_empty) `NPU_ASSERT_FAIL("LOAD read beat without an outstanding burst")
        if (word_ok && !d_tr && (hold_vld || hold_v1) && !hold_free)
            `NPU_ASSERT_FAIL("LOAD word overwrites an unwritten holding register")
        if (hold_v1 && BW == 1) `NPU_ASSERT_FAIL("LOAD second word pending with one-word beats")
        if (al_req && pr2 && (dp_rows < 16'd2 || dp_j != 16'd0))
            `NPU_ASSERT_FAIL("LOAD row pair without two rows left")
        if (wr_pend && ds_busy && (!wr_req || wr_addr != wr_addr_q))
            `NPU_ASSERT_FAIL("LOAD SPM write request changed before its grant")
        if (go && (c_bad || c_dram || c_spm)) `NPU_ASSERT_FAIL("LOAD starts a descriptor that failed its checks")
        if ((in_run && f_fill && ar_vld) || (ds_busy && d_fill && r_fire))
            `NPU_ASSERT_FAIL("FILL touches the DRAM read channel")
        if (cmd_fire && cmd_op != OP_LOAD && cmd_op != OP_FILL && cmd_op != OP_LOAD_SPM)
            `NPU_ASSERT_FAIL("LOAD engine given an opcode other than LOAD, FILL or LOAD_SPM")
        if (cmd_fire && cmd_spm && (ds_busy || !af_empty))
            `NPU_ASSERT_FAIL("LOAD_SPM accepted with DRAM beats outstanding")
        if (ar_vld && f_spm != d_spm && ds_busy)
            `NPU_ASSERT_FAIL("LOAD engine mixes SPM and DRAM bursts")
        if (ds_busy && !d_fill && al_in_rdy && !ag_pending && ds_owed == 32'd0)
            `NPU_ASSERT_FAIL("LOAD realigner wants a beat the address generator will not ask for")
        if (fin && !d_fill && (ag_pending || ds_owed != 32'd0))
            `NPU_ASSERT_FAIL("LOAD finishes with beats requested or still to request")
        if (fin && !ds_busy) `NPU_ASSERT_FAIL("LOAD data side finishes without a descriptor")
        if (ds_go && (ds_busy || hold_vld || hold_v1 || t_act || t_full != 2'b00 || dp_act))
            `NPU_ASSERT_FAIL("LOAD data side starts a descriptor before the last one is written")
        if (ds_go && ds_seq + 8'd1 != ag_seq + (go ? 8'd1 : 8'd0))
            `NPU_ASSERT_FAIL("LOAD data side starts a descriptor out of order")
        if (ag_seq - ds_seq > 8'd1) `NPU_ASSERT_FAIL("LOAD more than one descriptor waits for the data side")
        if ((go || cmd_fire) && ds_pend) `NPU_ASSERT_FAIL("LOAD descriptor accepted over one waiting for the data side")
        if (ds_pend && !ds_busy && !ds_go) `NPU_ASSERT_FAIL("LOAD waiting descriptor not started by an idle data side")
    end
`endif
endmodule
`default_nettype wire
