`default_nettype none
// npu_dma_store: executes STORE instructions (SPM -> DRAM), the reverse of a normal LOAD
// (docs/isa.md). Same fields as LOAD. Rows go to any element address (dense tensors): the DMA
// writes RUNS, the whole transfer when the rows are contiguous (dram_stride == row_bytes), else
// one per row (docs/memory.md "DMA runs and bursts").
// Transposed (int32 / fp32 elements, the reverse of a transposed LOAD): DRAM element (r, c),
// r < rows, c < C = row_bytes/4, comes from lane r % S of word r / S of SPM row c. The reader
// walks blocks of S DRAM rows x column blocks of S columns: it reads the block's S SPM words
// (rows c) into a transpose buffer, then emits one word per DRAM sub-row (r, cb) into the
// read-ahead FIFO; every sub-row is its own run (one run for the whole transfer when row_bytes
// <= 4S and the rows are contiguous: the sub-rows are then in address order).
//
// Three decoupled walkers over the same word order:
//  - reader: reads SPM words (1-cycle latency; two-word chunks at BW = 2, below) into a small
//    read-ahead FIFO, only while the FIFO has room for the entry in flight, so it sustains one
//    entry per cycle without overflow;
//  - address generator: issues AW bursts over each run's beats (<= MAX_BURST beats, never
//    crossing 4 KiB, at most MAX_OUT awaiting their B response) and queues each burst's length
//    for the W side;
//  - W side: the packer (npu_dma_pack) places each word at its row's byte offset and makes the
//    run's beats with strobes covering only the rows' bytes (rows sharing a beat share it, with
//    the union of their strobes); they are sent in AW order (a burst's W starts after its AW
//    handshake). Bytes outside the rows are never written.
// done pulses after the B response of the last burst: each burst FIFO entry carries a flag
// marking its descriptor's last burst, and B responses come in burst order, so the flagged
// response is the descriptor's last one. A DRAM error response stops the address generator;
// the W beats of bursts already issued are still sent and their B responses taken (DRAIN), then
// the read-ahead FIFO is emptied (FLUSH) and the engine returns to idle. No done follows an
// error response.
// Pipelined descriptors (PIPE = 1, npu_top's STORE_PIPELINE, docs/memory.md "Pipelined STOREs"):
// the walkers (reader, address generator, packer) leave RUN as soon as the descriptor's last W
// beat is sent (every AW issued, every burst's W done, so they hold nothing more of it; the
// engine accepts the next descriptor in that cycle already); its B responses are still due.
// The engine then accepts, checks and runs the next descriptor
// while they come (b_rdy whenever a burst awaits its B); the burst FIFO is shared, so MAX_OUT
// bursts of both descriptors at most. `done` still pulses once per descriptor after all of its
// own B responses, in order (the last-burst flags), and npu_dmaq's INFLIGHT = 2 keeps at most
// two descriptors in the engine. A failed check of the next descriptor is reported only once
// the bursts before it have their B responses (af empty, the last done given), so the error's
// pc is the failing STORE's (docs/isa.md section 5), as with one at a time. An error response
// of the older descriptor while the next one is checked or runs stops both: DRAIN (no done for
// either). PIPE = 0 accepts a descriptor only when every B response has come: cycle for cycle
// the engine before pipelining.
// Wide beats (BEAT_WORDS = 2, docs/memory.md "Words and beats"): a DRAM beat is DB = 2B bytes.
// The address generator, the burst rule and the packer work in DRAM beats. The normal reader
// walks a row in chunks of two words: words j, j+1 on two SPM read ports (rd, rd2) in one cycle,
// rd2 granted only together with rd (npu_spm PAIR_RD); when rd2 is refused (another port, or w
// and w+1 in one sub-bank: w odd with a carry through address bits 0..2) the chunk is the one
// word j and the next starts at j+1. Each read-ahead entry is a chunk with its size (`two`), and
// the packer takes it as one piece of up to DB bytes at the row's offset + j*B modulo DB (the
// piece may straddle two beats), so a long row moves one DRAM beat per cycle. The transposed
// reader keeps one word per cycle (column block j of a sub-row at its offset + j*B modulo DB).
// Row pairs (BW = 2, normal mode, contiguous rows of at most one word: pr): a chunk is two rows,
// words w and w + spm_stride on rd and rd2, joined at the read-ahead FIFO's input into one piece
// of 2 x row_bytes bytes (the second row's bytes right after the first's), so rows of 20 B leave
// two a cycle instead of one; a refused rd2 makes the chunk the one row w.
// Assumes S is a power of 2 (beats divide 4 KiB), BEAT_WORDS 1 or 2 and SPM_AW <= 16.
module npu_dma_store #(
    parameter integer S         = 8,
    parameter integer SPM_AW    = 12,
    parameter integer SPM_WORDS = 4096,
    parameter integer DRAM_AW   = 24,
    parameter integer MAX_BURST = 16,
    parameter integer MAX_OUT   = 4,
    parameter integer BW        = 1,    // SPM words per DRAM beat (BEAT_WORDS): 1 or 2
    parameter integer PIPE      = 0     // 1: accept the next descriptor once the last W beat is
                                        // sent (B responses still due); 0: after the last B
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
    // SPM read port
    output wire              rd_req,
    output wire [SPM_AW-1:0] rd_addr,
    input  wire              rd_gnt,
    input  wire              rd_vld,
    input  wire [32*S-1:0]   rd_data,
    // second SPM read port (BW = 2; tied off by npu_top at BW = 1): word w+1 of a two-word
    // chunk, granted only with rd (so rd2_vld implies rd_vld)
    output wire              rd2_req,
    output wire [SPM_AW-1:0] rd2_addr,
    input  wire              rd2_gnt,
    input  wire              rd2_vld,
    input  wire [32*S-1:0]   rd2_data,
    // AXI-like write master
    output wire              aw_vld,
    input  wire              aw_rdy,
    output wire [31:0]       aw_addr,
    output wire [7:0]        aw_len,
    output wire              w_vld,
    input  wire              w_rdy,
    output wire [32*S*BW-1:0] w_data,
    output wire [4*S*BW-1:0]  w_strb,
    output wire              w_last,
    input  wire              b_vld,
    output wire              b_rdy,
    input  wire              b_resp,
    // counter pulses
    output wire              cnt_beat,
    output wire [2:0]        cnt_tag,
    output wire              cnt_burst
);
`include "npu_defs.vh"
    localparam integer B  = 4 * S;          // bytes per SPM word
    localparam integer WB = 32 * S;
    localparam integer DB = B * BW;         // bytes per DRAM beat
    localparam integer LW = $clog2(B);      // log2 bytes per word
    localparam integer LB = $clog2(DB);     // log2 bytes per beat (span, align, offsets)
    localparam [31:0]  B32 = B;
    localparam [LB:0]  BL  = B32[LB:0];     // a whole word's bytes
    localparam [LB-1:0] B_OFF = B32[LB-1:0];   // B mod DB: word 1's offset in its beat (0 when BW = 1)
    localparam [LB:0]  DBL = BL << (BW - 1);    // a whole chunk's bytes (B or DB)
    localparam integer OW = $clog2(MAX_OUT + 1);
    localparam integer DFD = 4;             // read-ahead depth: chunk in flight + pop latency slack
    localparam integer CWB = WB * BW;       // a chunk's data bits (BW words)
    localparam integer FWB = (BW > 1) ? CWB + 1 : WB;   // read-ahead entry: {two, chunk}
    localparam integer DFW = $clog2(DFD + 1);
    localparam [31:0] DFD32    = DFD;
    localparam [DFW-1:0] DFD_C = DFD32[DFW-1:0];

    // store engine states (SS_: ST_* are the NPU status codes of npu_defs.vh)
    localparam [2:0] SS_IDLE = 3'd0, SS_CHECK = 3'd1, SS_RUN = 3'd2, SS_DRAIN = 3'd3,
                     SS_FLUSH = 3'd4;

    // ---------------- descriptor ----------------
    reg [2:0]  state;
    // the descriptor and its start checks, latched when the instruction is accepted
    wire [2:0]  f_tag;
    wire        f_tr;        // transposed (int32 elements)
    wire [15:0] f_rows;
    wire [31:0] f_daddr;
    wire [15:0] f_saddr, f_sstride, f_rbytes;
    wire [18:0] f_dstride;   // DRAM row pitch in bytes (the field << stride_shift)
    wire        f_cont;      // dram_stride == row_bytes: one run
    wire [15:0] nbeats_m1;   // nbeats - 1 (registered in u_desc: not in series with the compares)
    wire [15:0] nbeats;      // beats per row
    wire        c_vld;       // the checks are ready (two cycles after acceptance)
    wire        c_bad, c_dram, c_spm;
    wire [31:0] c_dlast, c_slast;
    // verilator lint_off UNUSEDSIGNAL
    wire c_ovl_unused;   // LOAD_SPM only
    // verilator lint_on UNUSEDSIGNAL
    npu_dma_desc #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .DRAM_AW(DRAM_AW),
                   .TR_BYTES(4)) u_desc (
        .clk(clk), .rst_n(rst_n), .load(cmd_fire), .cmd_insn(cmd_insn), .fill(1'b0), .spm(1'b0),
        .tag(f_tag), .tr(f_tr), .rows(f_rows), .daddr(f_daddr), .saddr(f_saddr),
        .sstride(f_sstride), .rbytes(f_rbytes), .dstride(f_dstride), .cont(f_cont),
        .nbeats(nbeats), .nbeats_m1(nbeats_m1),
        .vld(c_vld), .bad(c_bad), .dram_err(c_dram), .spm_err(c_spm), .dlast(c_dlast), .slast(c_slast),
        .ovl(c_ovl_unused)
    );


    wire af_empty;   // no burst awaits its B response (below)
    wire w_all;      // every W beat of the running descriptor is sent (below)
    // PIPE = 1: also in the cycle the walkers are freed (registered terms only)
    assign cmd_rdy = (state == SS_IDLE) || (PIPE != 0 && w_all);
    assign busy    = (state != SS_IDLE) || !af_empty;   // PIPE = 1: B responses of an older one
    wire cmd_fire  = cmd_vld && cmd_rdy;
    // opcode and token bits are the queue's business
    // verilator lint_off UNUSEDSIGNAL
    wire unused_desc = &{1'b0, f_saddr, f_sstride, f_rbytes, nbeats};   // partly used after the checks
    // verilator lint_on UNUSEDSIGNAL

    wire [31:0] stride  = {13'd0, f_dstride};             // DRAM row pitch in bytes
    wire [LB:0] rlast   = (f_rbytes[LW-1:0] == {LW{1'b0}}) ? BL
                        : {{(LB-LW+1){1'b0}}, f_rbytes[LW-1:0]};   // a row's last word's bytes
`include "npu_dma_fn.vh"
    wire [SPM_AW-1:0] saddr_s   = f_saddr[SPM_AW-1:0];
    wire [SPM_AW-1:0] sstride_s = f_sstride[SPM_AW-1:0];
    // one run for the whole transfer: contiguous rows (transposed: of a single column block,
    // whose sub-rows the engine then writes in address order)
    wire cont = f_cont && (!f_tr || nbeats_m1 == 16'd0);
    // row pairs (above)
    wire pr   = (BW > 1) && !f_tr && f_cont && (nbeats_m1 == 16'd0);
    // transposed: a sub-row of the last column block holds rlast bytes (rlast/4 columns), the
    // others B; a block has min(S, rows left) DRAM rows
    wire [15:0] rlast16 = {{(15-LB){1'b0}}, rlast};
    localparam [31:0] S32 = S;
    localparam [15:0] S16 = S32[15:0];
    localparam [15:0] B16 = B32[15:0];

    wire chk_bad  = c_bad;
    wire chk_dram = c_dram;
    wire chk_spm  = c_spm;
    wire chk_fail = chk_bad || chk_dram || chk_spm;
    // c_vld is a one-cycle pulse: a failed check waiting for the older descriptor's B responses
    // (PIPE = 1) is held
    reg  chk_held;
    wire c_rdy    = c_vld || chk_held;
    wire b_err;      // a failed B response this cycle (below): no go then, DRAIN
    wire go       = (state == SS_CHECK) && c_rdy && !chk_fail && !b_err;
    wire in_run   = (state == SS_RUN);
    wire in_xfer  = in_run || (state == SS_DRAIN);   // W and B still flow while draining

    // ---------------- reader: SPM -> read-ahead FIFO ----------------
    reg              rd_act;
    reg [15:0]       rd_j, rd_rows;
    reg [SPM_AW-1:0] rd_spm, rd_srow;
    reg [SPM_AW-1:0] rd_spm1;           // rd_spm + 1 (BW = 2), registered: no incrementer before
                                        // the SPM grant
    wire             df_full, df_empty;
    wire [FWB-1:0]   df_dout, df_din;
    wire [CWB-1:0]   df_chunk;          // the head entry's data: word j low, word j+1 high (df_two)
    wire             df_two;            // the head entry is two words
    wire [DFW-1:0]   df_count;
    // room for one more entry beyond the one arriving now (rd_vld)
    wire df_room   = ({1'b0, df_count} + {{DFW{1'b0}}, rd_vld}) < {1'b0, DFD_C};
    // transposed reader: fill the buffer with the block's nf SPM words (rows c of column block
    // t_cb, word t_rb of each), then emit its ne DRAM sub-rows (t_e) into the FIFO
    reg              t_emit;            // 0: fill, 1: emit
    reg [15:0]       t_fi, t_fg, t_e;   // words requested, words arrived, words emitted
    reg [15:0]       t_cb, t_rl;        // column block, DRAM rows left from this block's first
    reg [SPM_AW-1:0] t_rbase;           // spm_addr + word index of this row block
    reg [WB-1:0]     tbuf [0:S-1];      // tbuf[i] = the word of SPM row cb*S + i
    wire        t_cbl = (t_cb == nbeats_m1);                    // last column block
    wire [15:0] t_nf  = t_cbl ? {2'd0, rlast16[15:2]} : S16;     // words to fill
    wire [15:0] t_ne  = (t_rl < S16) ? t_rl : S16;               // sub-rows to emit
    wire        t_rbl = (t_rl <= S16);                           // last row block
    wire        t_push = f_tr && in_xfer && rd_act && t_emit && (df_count < DFD_C);
    wire        t_eend = t_push && (t_e == t_ne - 16'd1);        // the block's last sub-row
    reg  [WB-1:0] t_word;
    integer ti;
    always @(*) begin
        for (ti = 0; ti < S; ti = ti + 1)
            t_word[32*ti +: 32] = tbuf[ti][32*t_e[LW-3:0] +: 32];
    end
    assign rd_req  = in_xfer && rd_act && (f_tr ? (!t_emit && t_fi < t_nf) : df_room);
    assign rd_addr = rd_spm;
    wire rd_fire   = rd_req && rd_gnt;
    // BW = 2, normal mode: word j+1 of the row exists, ask for it on rd2 (granted only with rd)
    wire rd_c2     = (BW > 1) && !f_tr && (pr ? (rd_rows != 16'd1) : (rd_j != nbeats_m1));
    assign rd2_req  = rd_req && rd_c2;
    // at BW = 1 the port is tied off in npu_top: rd_spm1 then has no reader and synthesis drops
    // it (the module is synthesized on its own, so an unused output would keep its register)
    assign rd2_addr = (BW > 1) ? rd_spm1 : rd_spm;
    wire rd2_fire  = rd2_req && rd2_gnt;
    wire rd_row_end = (rd_j == nbeats_m1) || (rd2_gnt && rd_c2 && rd_j + 16'd1 == nbeats_m1);
    wire rd_last    = f_tr ? (t_eend && t_cbl && t_rbl)
                    : (rd_fire && rd_row_end && (rd_rows == 16'd1 || (rd2_fire && pr && rd_rows == 16'd2)));

    // ---------------- address generator ----------------
    reg         ag_act;
    reg [31:0]  ag_addr;     // next burst address (beat-aligned)
    reg [31:0]  ag_row;      // current row start (byte)
    reg [31:0]  ag_rem;      // beats left in the run
    reg [15:0]  ag_rows;     // runs left
    wire [15:0] blen;
    wire        blen_ok;     // blen and ag_row_end belong to ag_addr/ag_rem (npu_burst_len)
    wire        ag_row_end;  // this burst ends the run (blen == ag_rem)
    wire [15:0] ag_want = (ag_rem[31:16] != 16'd0) ? 16'hFFFF : ag_rem[15:0];
    // transposed: sub-row ag_i of the row block at ag_rb, column block ag_cb (ag_rl: DRAM rows
    // left from the block's first); the next sub-row is the next row, else the next column
    // block's first row, else the next row block's
    reg  [31:0] ag_rb, ag_cbs;   // the row block's first byte; + ag_cb * B
    reg  [15:0] ag_i, ag_cb, ag_rl;
    wire        ag_bend = (ag_i == S16 - 16'd1) || (ag_i + 16'd1 == ag_rl);   // block's last row
    wire        ag_cbl  = (ag_cb == nbeats_m1);
    wire [31:0] tr_nx   = !ag_bend ? ag_row + stride
                        : !ag_cbl  ? ag_cbs + B
                        : ag_rb + (stride << $clog2(S));
    wire [15:0] tr_len_nx = (ag_bend && ag_cb + 16'd1 == nbeats_m1) || (ag_bend && ag_cbl && nbeats_m1 == 16'd0)
                            || (!ag_bend && ag_cbl) ? rlast16 : B16;
    wire        ag_last = f_tr ? (cont || (ag_bend && ag_cbl && ag_rl <= S16)) : (ag_rows == 16'd1);
    wire [31:0] row_nx  = f_tr ? tr_nx : ag_row + stride;
    // the next row's run, registered (as in npu_dma_load: no burst in the cycle after one, so it
    // is up to date whenever a burst ends a run)
    reg  [31:0] ag_rem_nx;
    wire [31:0] rem_nx_c = span(row_nx[LB-1:0], {16'd0, f_tr ? tr_len_nx : f_rbytes});
    always @(posedge clk) ag_rem_nx <= rem_nx_c;
    // registered burst rule: the next burst's length is ready one cycle after each burst
    npu_burst_len #(.S(S), .MAX_BURST(MAX_BURST), .BEAT_WORDS(BW)) u_blen (
        .clk(clk), .rst_n(rst_n), .addr(ag_addr[11:0]), .want(ag_want), .upd(go || aw_fire),
        .len(blen), .whole(ag_row_end), .ok(blen_ok));
    wire [7:0]  blen_m1 = blen[7:0] - 8'd1;   // MAX_BURST <= 256: 256 wraps to 255

    wire          af_full;                // bursts awaiting B (address kept for err_info)
    wire [31:0]   af_dout;
    wire          af_lastb;               // the head burst is its descriptor's last one
    // verilator lint_off UNUSEDSIGNAL
    wire [OW-1:0] af_count;               // full/empty and the last-burst flags suffice
    // verilator lint_on UNUSEDSIGNAL
    wire          bf_full, bf_empty;      // bursts awaiting W: len-1
    wire [7:0]    bf_dout;
    // verilator lint_off UNUSEDSIGNAL
    wire          bf_full_unused = bf_full;   // bf never holds more entries than af
    wire [OW-1:0] bf_count;
    // verilator lint_on UNUSEDSIGNAL

    assign aw_vld  = in_run && run && ag_act && !af_full && blen_ok;   // registered burst length
    assign aw_addr = ag_addr;
    assign aw_len  = blen_m1;
    wire aw_fire   = aw_vld && aw_rdy;

    // ---------------- W side ----------------
    reg [7:0]     wc;        // beat inside the current burst
    // the packer's walker: the word at the FIFO head is word pk_j of a row at byte pk_o of its
    // first beat; a row's last word holds the rest of it; it ends a run at a row's end unless
    // the rows are contiguous (then at the last row's)
    reg [15:0]    pk_j, pk_rows;
    reg [LB-1:0]  pk_o;
    // transposed: each word is a sub-row (row pk_i of its block, column block pk_cb) at byte
    // pk_o of the row, + cb * B modulo DB (pk_off)
    reg [15:0]    pk_i, pk_cb;
    reg [LB-1:0]  pk_bo;          // the block's first row's offset
    wire          pk_bend = (pk_i == S16 - 16'd1) || (pk_i + 16'd1 == pk_rows);
    wire          pk_cbl  = (pk_cb == nbeats_m1);
    // normal mode: the head chunk is word pk_j (and pk_j+1 when df_two) of its row
    wire          pk_row_end = f_tr ? 1'b1 : (pk_j == nbeats_m1) || (df_two && pk_j + 16'd1 == nbeats_m1);
    wire          pk_pr2  = pr && df_two;     // the head chunk is a row pair
    wire [LB:0]   pk_len  = f_tr ? (pk_cbl ? rlast : BL)
                        : pk_pr2 ? {rlast[LB-1:0], 1'b0}
                        : df_two ? (pk_row_end ? BL + rlast : DBL)
                        : (pk_row_end ? rlast : BL);
    wire          pk_last = f_tr ? (!cont || (pk_bend && pk_cbl && pk_rows <= S16))
                                 : (pk_row_end && (!cont || pk_rows == (pk_pr2 ? 16'd2 : 16'd1)));
    // word j of a row (transposed: column block j of a row) starts j*B bytes after the row,
    // modulo DB
    wire [LB-1:0] pk_off  = pk_o + ((f_tr ? pk_cb[0] : pk_j[0]) ? B_OFF : {LB{1'b0}});
    wire          pk_pop, pk_vld;
    // packer beats are DRAM beats (S*BW: DB bytes); a piece (a word, or a two-word chunk) is
    // at most DB of them
    npu_dma_pack #(.S(S * BW)) u_pack (
        .clk(clk), .rst_n(rst_n), .clr(go),
        .in_vld(!df_empty && in_xfer), .in_pop(pk_pop), .in_data(df_chunk),
        .off(pk_off), .len(pk_len), .last(pk_last),
        .out_vld(pk_vld), .out_rdy(w_rdy && in_xfer && !bf_empty),
        .out_data(w_data), .out_strb(w_strb));
    assign w_vld   = in_xfer && !bf_empty && pk_vld;
    assign w_last  = (wc == bf_dout);
    wire w_fire    = w_vld && w_rdy;

    // PIPE = 1: B responses of the older descriptor also while idle or checking the next one
    // (PIPE = 0: no burst awaits one outside RUN and DRAIN, so this is in_xfer)
    assign b_rdy   = in_xfer || !af_empty;
    wire b_fire    = b_vld && b_rdy;
    assign b_err   = b_fire && b_resp && state != SS_DRAIN;   // the first one: draining takes the rest
    // every W beat of the descriptor is sent: all AW issued (ag_act clears with the last one)
    // and no burst awaits W; the walkers hold nothing more of it
    assign w_all   = in_run && !ag_act && bf_empty;

    // read-ahead entries: {two, word j+1, word j} at BW = 2 (rd2_vld: the pair was granted;
    // transposed: one word), the word at BW = 1
    generate
        if (BW > 1) begin : g_df2
            // a row pair: row w's rlast bytes, then row w + spm_stride's (bytes past 2 rlast are
            // the packer's don't-care: it takes len bytes)
            wire [WB-1:0]  w0;
            genvar k;
            for (k = 0; k < B; k = k + 1) begin : g_m0
                localparam [LB:0] K = k;
                assign w0[k*8 +: 8] = (K < rlast) ? rd_data[k*8 +: 8] : 8'd0;   // bytes < rlast
            end
            wire [CWB-1:0] pair = {{WB{1'b0}}, w0} | ({{WB{1'b0}}, rd2_data} << {rlast, 3'b000});
            assign df_din   = f_tr ? {1'b0, {(CWB-WB){1'b0}}, t_word}
                            : (pr && rd2_vld) ? {1'b1, pair} : {rd2_vld, rd2_data, rd_data};
            assign df_chunk = df_dout[CWB-1:0];
            assign df_two   = df_dout[CWB];
        end else begin : g_df1
            assign df_din   = f_tr ? t_word : rd_data;
            assign df_chunk = df_dout;
            assign df_two   = 1'b0;
            // verilator lint_off UNUSEDSIGNAL
            wire unused_rd2 = &{1'b0, rd2_vld, rd2_data};   // no second port at BW = 1
            // verilator lint_on UNUSEDSIGNAL
        end
    endgenerate
    npu_fifo #(.W(FWB), .DEPTH(DFD)) u_df (
        .clk(clk), .rst_n(rst_n),
        .push(f_tr ? t_push : rd_vld), .din(df_din),
        .pop(pk_pop || (state == SS_FLUSH && !df_empty)), .dout(df_dout),   // FLUSH: what is left
        .full(df_full), .empty(df_empty), .count(df_count)
    );
    // verilator lint_off UNUSEDSIGNAL
    wire df_full_unused = df_full;   // df_room keeps the FIFO from overflowing
    // verilator lint_on UNUSEDSIGNAL

    // {last burst of its descriptor, address}
    npu_fifo #(.W(33), .DEPTH(MAX_OUT)) u_af (
        .clk(clk), .rst_n(rst_n),
        .push(aw_fire), .din({ag_row_end && ag_last, ag_addr}),
        .pop(b_fire), .dout({af_lastb, af_dout}),
        .full(af_full), .empty(af_empty), .count(af_count)
    );

    npu_fifo #(.W(8), .DEPTH(MAX_OUT)) u_bf (
        .clk(clk), .rst_n(rst_n),
        .push(aw_fire), .din(blen_m1),
        .pop(w_fire && w_last), .dout(bf_dout),
        .full(bf_full), .empty(bf_empty), .count(bf_count)
    );

    assign cnt_beat  = w_fire;
    assign cnt_burst = aw_fire;
    assign cnt_tag   = f_tag;

    // ---------------- control state ----------------
    always @(posedge clk) begin
        if (!rst_n) begin
            state    <= SS_IDLE;
            done     <= 1'b0;
            err      <= 1'b0;
            err_code <= 8'd0;
            err_info <= 32'd0;
            ag_act   <= 1'b0;
            rd_act   <= 1'b0;
            wc       <= 8'd0;
            chk_held <= 1'b0;
        end else begin
            // the descriptor's last B response, none failed (an error response: DRAIN)
            done <= b_fire && !b_resp && af_lastb && state != SS_DRAIN;
            err  <= 1'b0;
            chk_held <= (state == SS_CHECK) && c_rdy && chk_fail && !af_empty && !b_err;
            if (w_fire) wc <= w_last ? 8'd0 : wc + 8'd1;
            if (aw_fire && ag_row_end && ag_last) ag_act <= 1'b0;
            // set at go, cleared after the last word or when the drain ends: one set/clear
            // pair, so the late SPM grant (rd_fire) passes through two gates, not the state mux
            rd_act <= go || (rd_act && !rd_last && !(state == SS_DRAIN && af_empty));
            case (state)
                SS_IDLE: if (cmd_fire) state <= SS_CHECK;
                // the descriptor's checks take two cycles; a failure waits for the B responses
                // of the descriptor before it (PIPE = 1; none are due with PIPE = 0)
                SS_CHECK: if (c_rdy && (!chk_fail || af_empty)) begin
                    if (chk_bad) begin
                        err <= 1'b1; err_code <= ERR_BAD_DESC; err_info <= f_daddr;
                        state <= SS_IDLE;
                    end else if (chk_dram) begin
                        err <= 1'b1; err_code <= ERR_DRAM_ADDR; err_info <= c_dlast;
                        state <= SS_IDLE;
                    end else if (chk_spm) begin
                        err <= 1'b1; err_code <= ERR_SPM_ADDR; err_info <= c_slast;
                        state <= SS_IDLE;
                    end else begin
                        ag_act <= 1'b1;
                        state  <= SS_RUN;
                    end
                end
                // PIPE = 1: free for the next one once the last W beat is sent; PIPE = 0: at
                // the last B response (done)
                SS_RUN: if (PIPE != 0 ? w_all : (b_fire && af_lastb)) state <= cmd_fire ? SS_CHECK : SS_IDLE;
                SS_DRAIN: if (af_empty) state <= SS_FLUSH;
                default: if (df_empty && !rd_vld) state <= SS_IDLE;   // SS_FLUSH
            endcase
            // a failed B response (of the running descriptor, or with PIPE = 1 of the one before
            // it while the engine is idle or checks the next one): stop issuing, drop the next
            // one, send the W beats of the bursts issued and take their B responses
            if (b_err) begin
                err <= 1'b1; err_code <= ERR_DRAM_RESP; err_info <= af_dout;
                ag_act <= 1'b0;
                state <= SS_DRAIN;
            end
        end
    end

    // ---------------- datapath (no reset) ----------------
    always @(posedge clk) begin
        if (go) begin
            ag_addr <= align(f_daddr);
            ag_row  <= f_daddr;
            ag_rem  <= cont ? {{LB{1'b0}}, c_dlast[31:LB]} - {{LB{1'b0}}, f_daddr[31:LB]} + 32'd1
                            : span(f_daddr[LB-1:0], {16'd0, (f_tr && nbeats_m1 != 16'd0) ? B16 : f_rbytes});
            ag_rows <= cont ? 16'd1 : f_rows;
            ag_rb   <= f_daddr;
            ag_cbs  <= f_daddr;
            ag_i    <= 16'd0;
            ag_cb   <= 16'd0;
            ag_rl   <= f_rows;
            pk_i    <= 16'd0;
            pk_cb   <= 16'd0;
            pk_bo   <= f_daddr[LB-1:0];
            t_emit  <= 1'b0;
            t_fi    <= 16'd0;
            t_fg    <= 16'd0;
            t_e     <= 16'd0;
            t_cb    <= 16'd0;
            t_rl    <= f_rows;
            t_rbase <= saddr_s;
            pk_j    <= 16'd0;
            pk_rows <= f_rows;
            pk_o    <= f_daddr[LB-1:0];
            rd_j    <= 16'd0;
            rd_rows <= f_rows;
            rd_spm  <= saddr_s;
            rd_spm1 <= pr ? saddr_s + sstride_s : saddr_s + 1'b1;
            rd_srow <= saddr_s;
        end
        if (aw_fire) begin
            if (ag_row_end) begin             // the next row's run
                ag_rem  <= ag_rem_nx;
                ag_rows <= ag_rows - 16'd1;
                ag_row  <= row_nx;
                ag_addr <= align(row_nx);
                if (!ag_bend) begin
                    ag_i <= ag_i + 16'd1;
                end else if (!ag_cbl) begin   // transposed: the next column block
                    ag_i   <= 16'd0;
                    ag_cb  <= ag_cb + 16'd1;
                    ag_cbs <= ag_cbs + B;
                end else begin                // transposed: the next row block
                    ag_i   <= 16'd0;
                    ag_cb  <= 16'd0;
                    ag_rl  <= ag_rl - S16;
                    ag_rb  <= tr_nx;
                    ag_cbs <= tr_nx;
                end
            end else begin
                ag_rem  <= ag_rem - {16'd0, blen};
                ag_addr <= ag_addr + ({16'd0, blen} << LB);
            end
        end
        if (pk_pop) begin
            if (f_tr) begin
                if (!pk_bend) begin
                    pk_i <= pk_i + 16'd1;
                    pk_o <= pk_o + f_dstride[LB-1:0];
                end else if (!pk_cbl) begin   // the next column block: back to the first row
                    pk_i  <= 16'd0;
                    pk_cb <= pk_cb + 16'd1;
                    pk_o  <= pk_bo;
                end else begin                // the next row block
                    pk_i    <= 16'd0;
                    pk_cb   <= 16'd0;
                    pk_rows <= (pk_rows > S16) ? pk_rows - S16 : 16'd0;
                    pk_o    <= pk_o + f_dstride[LB-1:0];
                    pk_bo   <= pk_o + f_dstride[LB-1:0];
                end
            end else if (pk_row_end) begin
                pk_j    <= 16'd0;
                pk_rows <= pk_rows - (pk_pr2 ? 16'd2 : 16'd1);
                pk_o    <= pk_o + (pk_pr2 ? {f_dstride[LB-2:0], 1'b0} : f_dstride[LB-1:0]);
            end else begin
                pk_j    <= pk_j + (df_two ? 16'd2 : 16'd1);
            end
        end
        // transposed reader
        if (rd_vld && f_tr) begin
            tbuf[t_fg[LW-3:0]] <= rd_data;
            t_fg <= t_fg + 16'd1;
        end
        if (f_tr && !t_emit && in_xfer && t_fg == t_nf) t_emit <= 1'b1;
        if (t_push) begin
            if (!t_eend) begin
                t_e <= t_e + 16'd1;
            end else begin                    // the next block: fill again
                t_emit <= 1'b0;
                t_e    <= 16'd0;
                t_fi   <= 16'd0;
                t_fg   <= 16'd0;
                if (!t_cbl) begin
                    t_cb    <= t_cb + 16'd1;
                    rd_spm  <= rd_srow + (sstride_s << $clog2(S));
                    rd_srow <= rd_srow + (sstride_s << $clog2(S));
                end else begin
                    t_cb    <= 16'd0;
                    t_rl    <= t_rl - S16;
                    t_rbase <= t_rbase + 1'b1;
                    rd_spm  <= t_rbase + 1'b1;
                    rd_srow <= t_rbase + 1'b1;
                end
            end
        end
        if (rd_fire && f_tr) begin
            t_fi   <= t_fi + 16'd1;
            rd_spm <= rd_spm + sstride_s;
        end else if (rd_fire) begin
            if (rd_row_end && pr && rd2_fire) begin   // a row pair: two rows on
                rd_j    <= 16'd0;
                rd_rows <= rd_rows - 16'd2;
                rd_srow <= rd_srow + (sstride_s << 1);
                rd_spm  <= rd_srow + (sstride_s << 1);
                rd_spm1 <= rd_srow + (sstride_s << 1) + sstride_s;
            end else if (rd_row_end) begin
                rd_j    <= 16'd0;
                rd_rows <= rd_rows - 16'd1;
                rd_srow <= rd_srow + sstride_s;
                rd_spm  <= rd_srow + sstride_s;
                rd_spm1 <= rd_srow + sstride_s + (pr ? sstride_s : {{(SPM_AW-1){1'b0}}, 1'b1});
            end else if (rd2_fire) begin      // BW = 2: the pair was read, two words on
                rd_j    <= rd_j + 16'd2;
                rd_spm  <= rd_spm1 + 1'b1;
                rd_spm1 <= rd_spm1 + {{(SPM_AW-2){1'b0}}, 2'd2};
            end else begin
                rd_j    <= rd_j + 16'd1;
                rd_spm  <= rd_spm + 1'b1;
                rd_spm1 <= rd_spm1 + 1'b1;
            end
        end
    end

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // AXI AW/W: valid and payload hold until ready (an error stop may withdraw AW, W flows until
    // the drain ends); bursts within the rule; no FIFO overflow; a response needs a burst.
    reg              aw_pend, w_pend;
    reg [31:0]       aw_addr_q;
    reg [7:0]        aw_len_q;
    reg [32*S*BW-1:0] w_data_q;
    reg [4*S*BW-1:0]  w_strb_q;
    reg              w_last_q;
    // bursts whose last W beat was sent and whose B response has not come: a B needs one
    reg [7:0]        wb_pend;
    always @(posedge clk) begin
        if (!rst_n) wb_pend <= 8'd0;
        else        wb_pend <= wb_pend + {7'd0, w_fire && w_last} - {7'd0, b_fire};
        aw_pend   <= rst_n && aw_vld && !aw_rdy;
        w_pend    <= rst_n && w_vld && !w_rdy;
        aw_addr_q <= aw_addr;
        aw_len_q  <= aw_len;
        w_data_q  <= w_data;
        w_strb_q  <= w_strb;
        w_last_q  <= w_last;
    end
    always @(posedge clk) if (rst_n) begin
        if (aw_pend && in_run && run && !aw_vld) `NPU_ASSERT_FAIL("STORE AW valid dropped before ready")
        if (aw_pend && aw_vld && (aw_addr != aw_addr_q || aw_len != aw_len_q))
            `NPU_ASSERT_FAIL("STORE AW payload changed before ready")
        if (w_pend && in_xfer && !w_vld) `NPU_ASSERT_FAIL("STORE W valid dropped before ready")
        if (w_pend && w_vld && (w_data != w_data_q || w_strb != w_strb_q || w_last != w_last_q))
            `NPU_ASSERT_FAIL("STORE W payload changed before ready")
        if (aw_vld && (blen == 16'd0 || {16'd0, blen} > MAX_BURST || {16'd0, blen} > ag_rem))
            `NPU_ASSERT_FAIL("STORE burst length not in 1..min(MAX_BURST and beats left in the run)")
        if (aw_vld && ag_addr[LB-1:0] != {LB{1'b0}}) `NPU_ASSERT_FAIL("STORE burst address not beat-aligned")
        if (aw_fire && ag_row_end && ag_rem_nx != rem_nx_c)
            `NPU_ASSERT_FAIL("STORE next run length register stale when a run ends")
        if ((PIPE != 0 ? w_all : done) && (pk_rows != 16'd0 || !df_empty))
            `NPU_ASSERT_FAIL("STORE done with words not packed (the runs and the rows disagree)")
        if (aw_vld && {20'd0, ag_addr[11:0]} + ({16'd0, blen} << LB) > 32'd4096)
            `NPU_ASSERT_FAIL("STORE burst crosses a 4 KiB line")
        if (aw_fire && af_full) `NPU_ASSERT_FAIL("STORE burst FIFO overflow")
        if ((f_tr ? t_push : rd_vld) && df_full && !pk_pop && state != SS_FLUSH)
            `NPU_ASSERT_FAIL("STORE read-ahead FIFO overflow")
        if (f_tr && rd_vld && (t_emit || t_fg >= t_nf))
            `NPU_ASSERT_FAIL("STORE transposed: a word arrives outside its block's fill")
        if (rd2_vld && (!rd_vld || f_tr || BW == 1))
            `NPU_ASSERT_FAIL("STORE second word read without its pair (or not at BW = 2, normal mode)")
        if (!df_empty && df_two && (f_tr || (!pr && pk_j == nbeats_m1)))
            `NPU_ASSERT_FAIL("STORE two-word chunk past its row's last word")
        if (!df_empty && pk_pr2 && pk_rows < 16'd2) `NPU_ASSERT_FAIL("STORE row pair without two rows left")
        if (b_fire && af_empty) `NPU_ASSERT_FAIL("STORE write response without an outstanding burst")
        if (b_vld && wb_pend == 8'd0) `NPU_ASSERT_FAIL("STORE B with no write outstanding (or before its last W)")
        if (w_vld && bf_empty) `NPU_ASSERT_FAIL("STORE W beat before its burst address")
        if (go && (c_bad || c_dram || c_spm)) `NPU_ASSERT_FAIL("STORE starts a descriptor that failed its checks")
        if (PIPE != 0 && w_all && (rd_act || rd_vld || t_emit))
            `NPU_ASSERT_FAIL("STORE walkers freed with words of the descriptor still read")
        if (cmd_fire && !af_empty && PIPE == 0) `NPU_ASSERT_FAIL("STORE (PIPE = 0) accepts a descriptor with B responses due")
        if (err && err_code != ERR_DRAM_RESP && !af_empty)
            `NPU_ASSERT_FAIL("STORE check error reported before the older descriptor's B responses")
    end
`endif
endmodule
`default_nettype wire
