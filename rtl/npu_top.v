`default_nettype none
// npu_top: the FlexTrain NPU. A host writes a program and tensors into DRAM, sets PROG_BASE,
// PROG_LEN and CTRL.start over the CSR port and waits for `halted`; the NPU fetches the program
// and runs its LOAD, EXEC and STORE queues concurrently (docs/isa.md).
//
//   DRAM <-AXI-> fetch, LOAD DMA, STORE DMA <-> SPM (banked) -> NoC H/V -> LBUF_H/LBUF_V
//        -> FlexSA (2x2 cores of SxS PEs) -> OBUF (accumulate) -> SPM
module npu_top #(
    parameter S               = 8,
    parameter SPM_BANKS       = 4,
    parameter SPM_BANK_WORDS  = 1024,
    parameter OBUF_ROWS       = 256,
    parameter LBUF_H_DEPTH    = 8,
    parameter LBUF_V_DEPTH    = 16,
    parameter QUEUE_DEPTH     = 8,
    parameter TOKEN_MAX       = 15,
    parameter DRAM_ADDR_BITS  = 24,
    parameter MAX_BURST_BEATS = 16,
    parameter MAX_OUTSTANDING = 4,
    parameter WATCHDOG_CYCLES = 20000,
    parameter DTYPE           = 0,     // element type: DTYPE_INT16 or DTYPE_BF16 (npu_defs.vh)
    parameter BEAT_WORDS      = 1,     // SPM words per DRAM beat: the DRAM port is 32*S*BEAT_WORDS bits
    // 1: the LOAD engine takes the next descriptor once the last one's bursts are issued (config key
    // LOAD_PIPELINE; tiny-pipe runs the functional suites with it)
    // (npu_dma_load PIPE). Off by default: the slicing stage's and the step estimator's DMA
    // cost (a fixed cost per transfer, docs/compiler.md "Calibration") does not model the
    // overlap yet, and a calibration of the pipelined engine fits that cost to ~0 cycles
    // (docs/memory.md "Pipelined LOADs").
    parameter LOAD_PIPELINE   = 0,
    // 1: the STORE engine takes the next descriptor once the last one's W beats are sent, while
    // its B responses are still due (config key STORE_PIPELINE; npu_dma_store PIPE, docs/memory.md
    // "Pipelined STOREs"); each STORE's done still follows all of its own B responses
    parameter STORE_PIPELINE  = 0
) (
    input  wire             clk,
    input  wire             rst_n,
    // CSR port
    input  wire [11:0]      csr_addr,
    input  wire [31:0]      csr_wdata,
    input  wire             csr_we,
    output wire [31:0]      csr_rdata,
    output wire             halted,
    // AXI-like DRAM master
    output wire             m_ar_valid,
    input  wire             m_ar_ready,
    output wire [31:0]      m_ar_addr,
    output wire [7:0]       m_ar_len,
    output wire [1:0]       m_ar_id,
    input  wire             m_r_valid,
    output wire             m_r_ready,
    input  wire [32*S*BEAT_WORDS-1:0] m_r_data,
    input  wire             m_r_last,
    input  wire [1:0]       m_r_id,
    input  wire             m_r_resp,
    output wire             m_aw_valid,
    input  wire             m_aw_ready,
    output wire [31:0]      m_aw_addr,
    output wire [7:0]       m_aw_len,
    output wire             m_w_valid,
    input  wire             m_w_ready,
    output wire [32*S*BEAT_WORDS-1:0] m_w_data,
    output wire [4*S*BEAT_WORDS-1:0]  m_w_strb,
    output wire             m_w_last,
    input  wire             m_b_valid,
    output wire             m_b_ready,
    input  wire             m_b_resp
);
`include "npu_defs.vh"
    localparam F         = 2 * S;
    localparam WB        = 32 * S;          // SPM word bits
    localparam DWB       = WB * BEAT_WORDS; // DRAM beat bits
    // The DRAM beat is BEAT_WORDS SPM words (docs/memory.md "Words and beats"): fetch and the
    // DMA engines count bursts and beats in DRAM beats; the engines' SPM side moves one word a
    // cycle. Their word-offset arithmetic (word j of a row at j*B modulo the beat) is built for
    // one or two words per beat, so other values are refused at elaboration: the missing module
    // below names the reason in every tool's error.
    generate
        if (BEAT_WORDS != 1 && BEAT_WORDS != 2) begin : g_beat_words
            npu_beat_words_must_be_1_or_2 u_unsupported ();
        end
    endgenerate
    localparam SPM_WORDS = SPM_BANKS * SPM_BANK_WORDS;
    localparam SPM_AW    = $clog2(SPM_WORDS);
    localparam OBUF_AW   = $clog2(2 * OBUF_ROWS);
    localparam TAGW      = OBUF_AW + 5;     // {mode, last, bank, acc, obuf row}
    // bf16 elements: the PEs multiply bf16 and add fp32, the OBUF and DRAIN acc add fp32
    localparam BF16      = (DTYPE == DTYPE_BF16) ? 1 : 0;
    localparam QW        = 160;             // queue entry: {pc, instruction}
    localparam QCW       = $clog2(QUEUE_DEPTH + 1);
    localparam LHW       = $clog2(LBUF_H_DEPTH + 1);
    localparam LVW       = $clog2(LBUF_V_DEPTH + 1);

    // ------------------------------------------------------------------ control
    wire        unit_rst_n, fetch_start, run;
    wire        dram_quiet;
    wire [31:0] prog_base, prog_len;
    wire        fetch_done;
    wire [31:0] fetch_pc, pc_l, pc_e, pc_s;
    wire        busy_l, busy_e, busy_s;
    wire [3:0]  err_vec;
    wire [31:0] err_code;
    wire [127:0] err_info, err_pc;
    wire        pop_l2e, pop_e2l, pop_e2s, pop_s2e, push_l2e, push_s2e;
    wire [2:0]  push_e2l, push_e2s;
    wire        l2e_avail, e2l_avail, e2s_avail, s2e_avail;
    wire [NUM_COUNTERS*16-1:0] cnt_inc;      // npu_perf_counters
    wire [31:0] noc_state;                  // NOCSTATE CSR (assigned by the NoC wiring below)
    wire        progress;
    wire [QCW-1:0] ql_cnt, qe_cnt, qs_cnt;

    // npu_spm's counts are registered at the source (they describe the previous cycle)
    localparam [NUM_COUNTERS-1:0] CNT_ONE  = {{(NUM_COUNTERS-1){1'b0}}, 1'b1};
    localparam [NUM_COUNTERS-1:0] LATE_CNT = (CNT_ONE << CNT_SPM_RD_WORDS)
                                           | (CNT_ONE << CNT_SPM_WR_WORDS)
                                           | (CNT_ONE << CNT_SPM_CONFLICTS);

    npu_ctrl #(.S(S), .SPM_WORDS(SPM_WORDS), .OBUF_ROWS(OBUF_ROWS), .TOKEN_MAX(TOKEN_MAX),
               .WATCHDOG_CYCLES(WATCHDOG_CYCLES), .DTYPE(DTYPE), .NCNT(NUM_COUNTERS), .NERR(4),
               .LATE_CNT(LATE_CNT)) u_ctrl (
        .clk(clk), .rst_n(rst_n),
        .csr_addr(csr_addr), .csr_wdata(csr_wdata), .csr_we(csr_we), .csr_rdata(csr_rdata),
        .halted(halted), .unit_rst_n(unit_rst_n), .fetch_start(fetch_start), .run(run),
        .prog_base(prog_base), .prog_len(prog_len),
        .fetch_done(fetch_done), .fetch_pc(fetch_pc),
        .ql_cnt(sat4(ql_cnt)), .qe_cnt(sat4(qe_cnt)), .qs_cnt(sat4(qs_cnt)),
        .busy_l(busy_l), .busy_e(busy_e), .busy_s(busy_s),
        .pc_l(pc_l), .pc_e(pc_e), .pc_s(pc_s), .progress(progress),
        .err_vec(err_vec), .err_code(err_code), .err_info(err_info), .err_pc(err_pc),
        .pop_l2e(pop_l2e), .pop_e2l(pop_e2l), .pop_e2s(pop_e2s), .pop_s2e(pop_s2e),
        .push_l2e(push_l2e), .push_e2l(push_e2l), .push_e2s(push_e2s), .push_s2e(push_s2e),
        .l2e_avail(l2e_avail), .e2l_avail(e2l_avail), .e2s_avail(e2s_avail), .s2e_avail(s2e_avail),
        .cnt_inc(cnt_inc), .noc_state(noc_state), .dram_quiet(dram_quiet)
    );

    // halted waits until the DRAM owes nothing (an error may stop units with bursts in flight)
    npu_axi_owed u_owed (
        .clk(clk), .rst_n(rst_n),
        .ar_fire(m_ar_valid && m_ar_ready), .ar_len(m_ar_len), .r_fire(m_r_valid && m_r_ready),
        .aw_fire(m_aw_valid && m_aw_ready), .b_fire(m_b_valid && m_b_ready), .quiet(dram_quiet)
    );

    function [3:0] sat4(input [QCW-1:0] v);
        sat4 = (v > 15) ? 4'd15 : v[3:0];
    endfunction

    // ------------------------------------------------------------------ fetch and queues
    wire        f_ar_vld, f_ar_rdy, f_r_vld, f_r_rdy, f_r_last, f_r_resp;
    wire [31:0] f_ar_addr;
    wire [7:0]  f_ar_len;
    wire [DWB-1:0] f_r_data;
    wire [QW-1:0] q_din, ql_dout, qe_dout, qs_dout;
    wire        ql_push, qe_push, qs_push, ql_full, qe_full, qs_full, ql_empty, qe_empty, qs_empty;
    wire        ql_pop, qe_pop, qs_pop;
    wire        f_err, ev_f_beat, ev_f_burst;
    wire [7:0]  f_err_code;
    wire [31:0] f_err_info, f_err_pc;

    // fetch sees DRAM beats only: a beat of S*BEAT_WORDS' 4 bytes
    npu_fetch #(.S(S * BEAT_WORDS), .DRAM_AW(DRAM_ADDR_BITS), .MAX_BURST(MAX_BURST_BEATS)) u_fetch (
        .clk(clk), .rst_n(unit_rst_n), .start(fetch_start), .run(run),
        .prog_base(prog_base), .prog_len(prog_len),
        .ar_vld(f_ar_vld), .ar_rdy(f_ar_rdy), .ar_addr(f_ar_addr), .ar_len(f_ar_len),
        .r_vld(f_r_vld), .r_rdy(f_r_rdy), .r_data(f_r_data), .r_last(f_r_last), .r_resp(f_r_resp),
        .q_din(q_din), .ql_push(ql_push), .ql_full(ql_full), .qe_push(qe_push), .qe_full(qe_full),
        .qs_push(qs_push), .qs_full(qs_full), .done(fetch_done), .fetch_pc(fetch_pc),
        .err(f_err), .err_code(f_err_code), .err_info(f_err_info), .err_pc(f_err_pc),
        .ev_beat(ev_f_beat), .ev_burst(ev_f_burst)
    );

    npu_fifo #(.W(QW), .DEPTH(QUEUE_DEPTH)) u_qload (
        .clk(clk), .rst_n(unit_rst_n), .push(ql_push), .din(q_din), .pop(ql_pop),
        .dout(ql_dout), .full(ql_full), .empty(ql_empty), .count(ql_cnt));
    npu_fifo #(.W(QW), .DEPTH(QUEUE_DEPTH)) u_qexec (
        .clk(clk), .rst_n(unit_rst_n), .push(qe_push), .din(q_din), .pop(qe_pop),
        .dout(qe_dout), .full(qe_full), .empty(qe_empty), .count(qe_cnt));
    npu_fifo #(.W(QW), .DEPTH(QUEUE_DEPTH)) u_qstore (
        .clk(clk), .rst_n(unit_rst_n), .push(qs_push), .din(q_din), .pop(qs_pop),
        .dout(qs_dout), .full(qs_full), .empty(qs_empty), .count(qs_cnt));

    // ------------------------------------------------------------------ LOAD queue + DMA
    wire        ld_cmd_vld, ld_cmd_rdy, ld_busy, ld_done, ld_err, ldq_done, ld_wait_tok;
    wire [127:0] ld_cmd;
    wire [7:0]  ld_err_code;
    wire [31:0] ld_err_info;
    wire        l_ar_vld, l_ar_rdy, l_r_vld, l_r_rdy, l_r_last, l_r_resp;
    wire [31:0] l_ar_addr;
    wire [7:0]  l_ar_len;
    wire [DWB-1:0] l_r_data;
    wire        ld_wr_req, ld_wr_gnt, ld_cnt_beat, ld_cnt_burst;
    wire [1:0]  ld_cnt_fill, ld_cnt_copy;
    wire        ld_ar_spm, ld_r_spm;          // LOAD_SPM: the AR for, the R beats from u_spm_burst
    wire        la_ar_vld, la_ar_rdy, la_r_vld, la_r_rdy, la_r_last, la_r_resp;   // to/from the DRAM arbiter
    wire [DWB-1:0] la_r_data;
    wire        sb_ar_rdy, sb_r_vld, sb_r_last, sb_rd_req, sb_rd_gnt, sb_rd_vld;  // u_spm_burst
    wire [DWB-1:0] sb_r_data;
    wire [SPM_AW-1:0] sb_rd_addr;
    wire [SPM_AW-1:0] ld_wr_addr;
    wire [WB-1:0] ld_wr_data;
    wire        ld_wr2_req, ld_wr2_gnt;     // the LOAD's second write port (BEAT_WORDS = 2)
    wire [SPM_AW-1:0] ld_wr2_addr;
    wire [WB-1:0] ld_wr2_data;
    wire [2:0]  ld_cnt_tag;
    wire        ldq_busy, ldq_pop_prev_unused, ldq_push_prev_unused;

    npu_dmaq #(.INFLIGHT((LOAD_PIPELINE != 0) ? 2 : 1)) u_ldq (   // two: the next LOAD while the last one's data arrives
        .clk(clk), .rst_n(unit_rst_n), .run(run), .sync_op(OP_SYNC_L),
        .q_vld(!ql_empty), .q_insn(ql_dout[127:0]), .q_pc(ql_dout[159:128]), .q_pop(ql_pop),
        .prev_avail(1'b1), .next_avail(e2l_avail),
        .pop_prev(ldq_pop_prev_unused), .pop_next(pop_e2l),
        .push_prev(ldq_push_prev_unused), .push_next(push_l2e),
        .cmd_vld(ld_cmd_vld), .cmd_rdy(ld_cmd_rdy), .cmd_insn(ld_cmd), .dma_done(ld_done),
        .busy(ldq_busy), .pc_cur(pc_l), .done(ldq_done), .ev_wait_tok(ld_wait_tok)
    );
    assign busy_l = ldq_busy || ld_busy;

    npu_dma_load #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .DRAM_AW(DRAM_ADDR_BITS),
                   .MAX_BURST(MAX_BURST_BEATS), .MAX_OUT(MAX_OUTSTANDING), .BW(BEAT_WORDS),
                   .PIPE(LOAD_PIPELINE)) u_dma_load (
        .clk(clk), .rst_n(unit_rst_n), .run(run),
        .cmd_vld(ld_cmd_vld), .cmd_rdy(ld_cmd_rdy), .cmd_insn(ld_cmd),
        .busy(ld_busy), .done(ld_done), .err(ld_err), .err_code(ld_err_code), .err_info(ld_err_info),
        .ar_vld(l_ar_vld), .ar_rdy(l_ar_rdy), .ar_addr(l_ar_addr), .ar_len(l_ar_len),
        .r_vld(l_r_vld), .r_rdy(l_r_rdy), .r_data(l_r_data), .r_last(l_r_last), .r_resp(l_r_resp),
        .wr_req(ld_wr_req), .wr_addr(ld_wr_addr), .wr_data(ld_wr_data), .wr_gnt(ld_wr_gnt),
        .wr2_req(ld_wr2_req), .wr2_addr(ld_wr2_addr), .wr2_data(ld_wr2_data), .wr2_gnt(ld_wr2_gnt),
        .cnt_beat(ld_cnt_beat), .cnt_tag(ld_cnt_tag), .cnt_burst(ld_cnt_burst), .cnt_fill(ld_cnt_fill),
        .cnt_copy(ld_cnt_copy), .ar_spm(ld_ar_spm), .r_spm(ld_r_spm)
    );

    // LOAD_SPM: the engine's bursts go to the SPM burst server instead of the DRAM, and its R
    // beats come from there (npu_dma_load never has both kinds in flight)
    assign la_ar_vld = l_ar_vld && !ld_ar_spm;
    assign l_ar_rdy  = ld_ar_spm ? sb_ar_rdy : la_ar_rdy;
    assign l_r_vld   = ld_r_spm ? sb_r_vld : la_r_vld;
    assign l_r_data  = ld_r_spm ? sb_r_data : la_r_data;
    assign l_r_last  = ld_r_spm ? sb_r_last : la_r_last;
    assign l_r_resp  = !ld_r_spm && la_r_resp;
    // (R ready to both sides ungated: the other side has no beats owed then; a gate here put
    // an AND in the LOAD's realigner -> r_rdy -> DRAM port -> watchdog path, 28 -> 29 levels)
    assign la_r_rdy  = l_r_rdy;
    // (u_spm_burst: after the SPM below)

    npu_axi_rd_arb #(.DW(DWB)) u_rd_arb (
        .clk(clk), .rst_n(rst_n),
        .s0_ar_vld(f_ar_vld), .s0_ar_rdy(f_ar_rdy), .s0_ar_addr(f_ar_addr), .s0_ar_len(f_ar_len),
        .s0_r_vld(f_r_vld), .s0_r_rdy(f_r_rdy), .s0_r_data(f_r_data), .s0_r_last(f_r_last),
        .s0_r_resp(f_r_resp),
        .s1_ar_vld(la_ar_vld), .s1_ar_rdy(la_ar_rdy), .s1_ar_addr(l_ar_addr), .s1_ar_len(l_ar_len),
        .s1_r_vld(la_r_vld), .s1_r_rdy(la_r_rdy), .s1_r_data(la_r_data), .s1_r_last(la_r_last),
        .s1_r_resp(la_r_resp),
        .m_ar_vld(m_ar_valid), .m_ar_rdy(m_ar_ready), .m_ar_addr(m_ar_addr), .m_ar_len(m_ar_len),
        .m_ar_id(m_ar_id), .m_r_vld(m_r_valid), .m_r_rdy(m_r_ready), .m_r_data(m_r_data),
        .m_r_last(m_r_last), .m_r_id(m_r_id), .m_r_resp(m_r_resp)
    );

    // ------------------------------------------------------------------ STORE queue + DMA
    wire        st_cmd_vld, st_cmd_rdy, st_busy, st_done, st_err, stq_done, st_wait_tok;
    wire [127:0] st_cmd;
    wire [7:0]  st_err_code;
    wire [31:0] st_err_info;
    wire        st_rd_req, st_rd_gnt, st_rd_vld, st_cnt_beat, st_cnt_burst;
    wire [SPM_AW-1:0] st_rd_addr;
    wire [WB-1:0] st_rd_data;
    wire        st_rd2_req, st_rd2_gnt, st_rd2_vld;   // the STORE's second read port (BEAT_WORDS = 2)
    wire [SPM_AW-1:0] st_rd2_addr;
    wire [WB-1:0] st_rd2_data;
    wire [2:0]  st_cnt_tag;
    wire        stq_busy, stq_pop_next_unused, stq_push_next_unused;

    npu_dmaq #(.INFLIGHT((STORE_PIPELINE != 0) ? 2 : 1)) u_stq (   // two: the next STORE while the last one's B responses come
        .clk(clk), .rst_n(unit_rst_n), .run(run), .sync_op(OP_SYNC_S),
        .q_vld(!qs_empty), .q_insn(qs_dout[127:0]), .q_pc(qs_dout[159:128]), .q_pop(qs_pop),
        .prev_avail(e2s_avail), .next_avail(1'b1),
        .pop_prev(pop_e2s), .pop_next(stq_pop_next_unused),
        .push_prev(push_s2e), .push_next(stq_push_next_unused),
        .cmd_vld(st_cmd_vld), .cmd_rdy(st_cmd_rdy), .cmd_insn(st_cmd), .dma_done(st_done),
        .busy(stq_busy), .pc_cur(pc_s), .done(stq_done), .ev_wait_tok(st_wait_tok)
    );
    assign busy_s = stq_busy || st_busy;

    npu_dma_store #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .DRAM_AW(DRAM_ADDR_BITS),
                    .MAX_BURST(MAX_BURST_BEATS), .MAX_OUT(MAX_OUTSTANDING), .BW(BEAT_WORDS),
                    .PIPE(STORE_PIPELINE)) u_dma_store (
        .clk(clk), .rst_n(unit_rst_n), .run(run),
        .cmd_vld(st_cmd_vld), .cmd_rdy(st_cmd_rdy), .cmd_insn(st_cmd),
        .busy(st_busy), .done(st_done), .err(st_err), .err_code(st_err_code), .err_info(st_err_info),
        .rd_req(st_rd_req), .rd_addr(st_rd_addr), .rd_gnt(st_rd_gnt), .rd_vld(st_rd_vld),
        .rd_data(st_rd_data),
        .rd2_req(st_rd2_req), .rd2_addr(st_rd2_addr), .rd2_gnt(st_rd2_gnt), .rd2_vld(st_rd2_vld),
        .rd2_data(st_rd2_data),
        .aw_vld(m_aw_valid), .aw_rdy(m_aw_ready), .aw_addr(m_aw_addr), .aw_len(m_aw_len),
        .w_vld(m_w_valid), .w_rdy(m_w_ready), .w_data(m_w_data), .w_strb(m_w_strb), .w_last(m_w_last),
        .b_vld(m_b_valid), .b_rdy(m_b_ready), .b_resp(m_b_resp),
        .cnt_beat(st_cnt_beat), .cnt_tag(st_cnt_tag), .cnt_burst(st_cnt_burst)
    );

    // ------------------------------------------------------------------ SPM
    // read ports: 0 = vector unit, 1..4 = A stream positions (WAVE: one row per sub-array and
    //             cycle), 5/6 = stationary streams A/B (LDW; B: rows S..2S-1 of a pair load),
    //             7/8 = DRAIN acc's old low / high word, 9 = LOAD_SPM's source (npu_spm_burst),
    //             10 = STORE DMA, 11 = STORE DMA's second word (BEAT_WORDS = 2 only; granted
    //             only with port 10: npu_spm PAIR_RD, the last port)
    // write ports: 0 = vector unit, 1/2 = OBUF drain low/high word of row r, 3/4 = of row r+1,
    //             5 = LOAD DMA, 6 = LOAD DMA's second word (BEAT_WORDS = 2 only)
    // The vector unit's ports come first (the lowest index wins a sub-bank): nothing refuses
    // it, so a VEC takes the cycles its program says. Only the DMA engines run beside it (a VEC
    // waits for the other EXEC units), and they wait out a refused word anyway.
    wire        rdw_req, rdw_gnt, rdw2_req, rdw2_gnt;
    wire [1:0]  ard_req, ard_gnt;
    wire [2*SPM_AW-1:0] ard_addr;
    wire [3:0]  rda_req, rda_gnt;
    wire [3:0]  dr_wr_req, dr_wr_gnt;
    wire [SPM_AW-1:0] rdw_addr, rdw2_addr;
    wire [4*SPM_AW-1:0] rda_addr;
    wire [4*SPM_AW-1:0] dr_wr_addr;
    wire [4*WB-1:0] dr_wr_data;
    localparam NRS = (BEAT_WORDS > 1) ? 12 : 11;    // read port 11: BEAT_WORDS = 2 only
    wire [NRS*WB-1:0] spm_rd_data;
    wire [NRS-1:0] spm_rd_vld;
    wire [NRS-1:0] spm_rd_gnt;
    wire [NRS-1:0] spm_rd_req_v;
    wire [NRS*SPM_AW-1:0] spm_rd_addr_v;
    localparam NWS = (BEAT_WORDS > 1) ? 7 : 6;
    wire [5:0]  spm_wr_gnt;
    wire        vrd_req, vwr_req;
    wire [SPM_AW-1:0] vrd_addr, vwr_addr;
    wire [WB-1:0] vwr_data;
    wire [$clog2(NRS+1)-1:0] spm_cnt_rd;
    wire [2:0]  spm_cnt_wr;
    // refused requests: up to 12 + 7 a cycle at BEAT_WORDS = 2, 11 + 6 at 1 (five bits)
    wire [$clog2(NRS+NWS+1)-1:0] spm_cnt_conf;
    wire [4:0]  spm_cnt_conf5;

    // BEAT_WORDS = 2 only: write port 6, the LOAD's second word of a chunk, and read port 8,
    // the STORE's second word, each at the lowest priority of its direction
    wire [NWS-1:0]        spm_wr_req_v;
    wire [NWS*SPM_AW-1:0] spm_wr_addr_v;
    wire [NWS*WB-1:0]     spm_wr_data_v;
    wire [NWS-1:0]        spm_wr_gnt_v;
    generate
        if (BEAT_WORDS > 1) begin : g_spm_bw2
            assign spm_wr_req_v  = {ld_wr2_req, ld_wr_req, dr_wr_req, vwr_req};
            assign spm_wr_addr_v = {ld_wr2_addr, ld_wr_addr, dr_wr_addr, vwr_addr};
            assign spm_wr_data_v = {ld_wr2_data, ld_wr_data, dr_wr_data, vwr_data};
            assign ld_wr2_gnt    = spm_wr_gnt_v[NWS-1];
            assign spm_rd_req_v  = {st_rd2_req, st_rd_req, sb_rd_req, ard_req, rdw2_req, rdw_req, rda_req, vrd_req};
            assign spm_rd_addr_v = {st_rd2_addr, st_rd_addr, sb_rd_addr, ard_addr, rdw2_addr, rdw_addr, rda_addr, vrd_addr};
            assign st_rd2_gnt    = spm_rd_gnt[11];
            assign st_rd2_vld    = spm_rd_vld[11];
            assign st_rd2_data   = spm_rd_data[11*WB +: WB];
            assign spm_cnt_conf5 = spm_cnt_conf;
        end else begin : g_spm_bw1
            assign spm_wr_req_v  = {ld_wr_req, dr_wr_req, vwr_req};
            assign spm_wr_addr_v = {ld_wr_addr, dr_wr_addr, vwr_addr};
            assign spm_wr_data_v = {ld_wr_data, dr_wr_data, vwr_data};
            assign ld_wr2_gnt    = 1'b0;
            assign spm_rd_req_v  = {st_rd_req, sb_rd_req, ard_req, rdw2_req, rdw_req, rda_req, vrd_req};
            assign spm_rd_addr_v = {st_rd_addr, sb_rd_addr, ard_addr, rdw2_addr, rdw_addr, rda_addr, vrd_addr};
            assign st_rd2_gnt    = 1'b0;
            assign st_rd2_vld    = 1'b0;
            assign st_rd2_data   = {WB{1'b0}};
            assign spm_cnt_conf5 = spm_cnt_conf;
            // verilator lint_off UNUSEDSIGNAL
            wire unused_wr2 = &{1'b0, ld_wr2_req, ld_wr2_addr, ld_wr2_data,   // never request at BW = 1
                                st_rd2_req, st_rd2_addr};
            // verilator lint_on UNUSEDSIGNAL
        end
    endgenerate
    assign spm_wr_gnt = spm_wr_gnt_v[5:0];
    npu_spm #(.BANKS(SPM_BANKS), .BANK_WORDS(SPM_BANK_WORDS), .WB(WB), .NR(NRS), .NW(NWS), .SUBW(2),
              .PAIR_RD(BEAT_WORDS > 1 ? 1 : 0)) u_spm (
        .clk(clk), .rst_n(unit_rst_n),
        .rd_req(spm_rd_req_v), .rd_addr(spm_rd_addr_v),
        .rd_gnt(spm_rd_gnt), .rd_vld(spm_rd_vld), .rd_data(spm_rd_data),
        .wr_req(spm_wr_req_v), .wr_addr(spm_wr_addr_v),
        .wr_data(spm_wr_data_v), .wr_gnt(spm_wr_gnt_v),
        .cnt_rd(spm_cnt_rd), .cnt_wr(spm_cnt_wr), .cnt_conflict(spm_cnt_conf)
    );
    assign rda_gnt    = spm_rd_gnt[4:1];
    assign rdw_gnt    = spm_rd_gnt[5];
    assign rdw2_gnt   = spm_rd_gnt[6];
    assign ard_gnt    = spm_rd_gnt[8:7];
    // LOAD_SPM's source reads: the SPM burst server on read port 8
    npu_spm_burst #(.S(S), .SPM_AW(SPM_AW), .BW(BEAT_WORDS)) u_spm_burst (
        .clk(clk), .rst_n(unit_rst_n),
        .ar_vld(l_ar_vld && ld_ar_spm), .ar_rdy(sb_ar_rdy), .ar_addr(l_ar_addr), .ar_len(l_ar_len),
        .r_vld(sb_r_vld), .r_rdy(l_r_rdy), .r_data(sb_r_data), .r_last(sb_r_last),
        .rd_req(sb_rd_req), .rd_addr(sb_rd_addr), .rd_gnt(sb_rd_gnt), .rd_vld(sb_rd_vld),
        .rd_data(spm_rd_data[9*WB +: WB])
    );
    assign sb_rd_gnt  = spm_rd_gnt[9];
    assign sb_rd_vld  = spm_rd_vld[9];
    assign st_rd_gnt  = spm_rd_gnt[10];
    assign st_rd_vld  = spm_rd_vld[10];
    assign st_rd_data = spm_rd_data[10*WB +: WB];
    assign dr_wr_gnt  = spm_wr_gnt[4:1];
    assign ld_wr_gnt  = spm_wr_gnt[5];

    // ------------------------------------------------------------------ NoC and local buffers
    // Multicast group IDs are, for now, core bitmasks: endpoint e accepts ID g when g[e] = 1.
    // V channel (stationary rows): cores 0/2 keep lanes 0..S-1, cores 1/3 lanes S..2S-1.
    // H channels (A rows), two so that every sub-array gets a row per cycle: L feeds the LBUF_H
    // of cores 0 (lanes 0..S-1) and 2 (lanes S..2S-1), R those of cores 1 (0..S-1) and 3
    // (S..2S-1) over the bypass (1). A flit is either one A row split over the two cores (FW, VSW)
    // or two S-element rows packed by npu_exec (HSW, ISW), so the halves are fixed per endpoint.
    wire [63:0] accept;
    wire [63:0] accept_h;            // channel c, endpoint e (core 2e + c) at [(2c+e)*16 +: 16]
    genvar e, g;
    generate
        for (e = 0; e < 4; e = e + 1) begin : g_ep
            for (g = 0; g < 16; g = g + 1) begin : g_id
                assign accept[e*16 + g]   = ((g >> e) & 1) != 0;
                assign accept_h[e*16 + g] = ((g >> ((e % 2) * 2 + e / 2)) & 1) != 0;
            end
        end
    endgenerate

    wire        v_vld, v_rdy;
    wire [1:0]  h_vld, h_rdy, h_two;
    wire [7:0]  h_gid;
    wire [3:0]  v_gid, v_half, v_word;
    wire [2*WB-1:0] h_data;
    wire [2*WB-1:0] v_data;          // pair flits: row r for cores 0/1, row S + r for cores 2/3
    wire [3:0]  nh_vld, nh_rdy, nv_vld, nv_rdy;     // per core
    wire [4*S*16-1:0] nh_data, nv_data;             // per core
    wire [3:0]  nhc_vld, nhc_rdy;                   // per channel endpoint (2c + e)
    wire [4*S*16-1:0] nhc_data;
    wire        nv_flit, nv_nodest;
    wire [1:0]  nh_flit, nh_nodest;
    wire [3:0]  nh_deliv;                           // per channel, 2 bits
    wire [2:0]  nv_deliv;
    wire [3:0]  nh_link, nhc_link, nv_link;
    wire [3:0]  nv_blocked, nh_blocked;             // per endpoint (H: per channel, 2 bits)

    generate
        for (e = 0; e < 2; e = e + 1) begin : g_hch
            npu_noc #(.S(S), .NEP(2)) u_noc_h (
                .clk(clk), .rst_n(unit_rst_n),
                .in_vld(h_vld[e]), .in_rdy(h_rdy[e]), .in_gid(h_gid[e*4 +: 4]),
                .in_data(h_data[e*WB +: WB]),
                .accept(accept_h[e*32 +: 32]), .half(2'b10), .word(2'b00),
                .out_vld(nhc_vld[e*2 +: 2]), .out_rdy(nhc_rdy[e*2 +: 2]),
                .out_data(nhc_data[e*2*S*16 +: 2*S*16]),
                .err_nodest(nh_nodest[e]), .cnt_flit(nh_flit[e]), .cnt_link(nhc_link[e*2 +: 2]),
                .cnt_deliv(nh_deliv[e*2 +: 2]), .blocked(nh_blocked[e*2 +: 2])
            );
        end
        // core q = 2e + c is endpoint e of channel c = q % 2
        for (e = 0; e < 4; e = e + 1) begin : g_hcore
            localparam integer CE = (e % 2) * 2 + e / 2;
            assign nh_vld[e] = nhc_vld[CE];
            assign nh_data[e*S*16 +: S*16] = nhc_data[CE*S*16 +: S*16];
            assign nhc_rdy[CE] = nh_rdy[e];
            assign nh_link[e] = nhc_link[CE];
        end
    endgenerate
    npu_noc #(.S(S), .NEP(4), .WORDS(2)) u_noc_v (
        .clk(clk), .rst_n(unit_rst_n),
        .in_vld(v_vld), .in_rdy(v_rdy), .in_gid(v_gid), .in_data(v_data),
        .accept(accept), .half(v_half), .word(v_word),
        .out_vld(nv_vld), .out_rdy(nv_rdy), .out_data(nv_data),
        .err_nodest(nv_nodest), .cnt_flit(nv_flit), .cnt_link(nv_link), .cnt_deliv(nv_deliv),
        .blocked(nv_blocked)
    );
    // NOCSTATE (docs/isa.md §6): the head flit of each channel, so a deadlock report names a
    // stuck flit: per channel waiting, blocked (some destination cannot take it), group ID, and
    // the destinations not ready. Field layout from sw/hw/npu_defs.h (NOC_* in npu_defs.vh).
    function [31:0] noc_field(input vld, input blk, input [3:0] gid, input [3:0] wt);
        noc_field = ({31'd0, vld} << NOC_VLD) | ({31'd0, blk} << NOC_BLK)
                  | ({28'd0, gid} << NOC_GID) | ({28'd0, wt} << NOC_WAIT);
    endfunction
    assign noc_state = noc_field(v_vld, v_vld && !v_rdy, v_gid, nv_blocked)
        | (noc_field(h_vld[0], h_vld[0] && !h_rdy[0], h_gid[3:0], {2'd0, nh_blocked[1:0]}) << NOC_CH_BITS)
        | (noc_field(h_vld[1], h_vld[1] && !h_rdy[1], h_gid[7:4], {2'd0, nh_blocked[3:2]}) << (2 * NOC_CH_BITS));

    wire [3:0] lbh_empty, lbh_full, lbh_pop, lbv_empty, lbv_full, lbv_pop;
    wire [4*S*16-1:0] lbh_dout, lbv_dout;
    wire [4*8-1:0]    lbv_cnt;       // per core: words in the LBUF_V (npu_exec_ldw's commit)
    generate
        for (e = 0; e < 4; e = e + 1) begin : g_lbuf
            wire [LHW-1:0] hc;
            wire [LVW-1:0] vc;
            npu_fifo #(.W(S*16), .DEPTH(LBUF_H_DEPTH)) u_lbuf_h (
                .clk(clk), .rst_n(unit_rst_n),
                .push(nh_vld[e] && !lbh_full[e]), .din(nh_data[e*S*16 +: S*16]),
                .pop(lbh_pop[e]), .dout(lbh_dout[e*S*16 +: S*16]),
                .full(lbh_full[e]), .empty(lbh_empty[e]), .count(hc));
            npu_fifo #(.W(S*16), .DEPTH(LBUF_V_DEPTH)) u_lbuf_v (
                .clk(clk), .rst_n(unit_rst_n),
                .push(nv_vld[e] && !lbv_full[e]), .din(nv_data[e*S*16 +: S*16]),
                .pop(lbv_pop[e]), .dout(lbv_dout[e*S*16 +: S*16]),
                .full(lbv_full[e]), .empty(lbv_empty[e]), .count(vc));
            assign nh_rdy[e] = !lbh_full[e];
            assign nv_rdy[e] = !lbv_full[e];
            assign lbv_cnt[e*8 +: 8] = {{(8-LVW){1'b0}}, vc};
            wire unused_cnt = &{1'b0, hc};
        end
    endgenerate

    // ------------------------------------------------------------------ EXEC, FlexSA, OBUF
    wire [1:0]  mode;
    wire [3:0]  inj_vld, inj_sel, w_bank;
    wire [4*S-1:0] w_row;
    wire [4*S*16-1:0] inj_a, w_in;
    wire [4*TAGW-1:0] inj_tag;
    wire [F-1:0] out_vld, top_vld;
    wire [F*TAGW-1:0] out_tag, top_tag;
    wire [F*32-1:0] out_data, top_data;
    wire [F-1:0] ob_wr_en, ob_wr_acc, ob2_wr_en, ob2_wr_acc;
    wire [F*OBUF_AW-1:0] ob_wr_addr, ob2_wr_addr;
    wire        ob_rd_en, ob_rd2_en;
    wire [OBUF_AW-1:0] ob_rd_addr, ob_rd2_addr;
    wire [F*32-1:0] ob_rd_data, ob_rd2_data;
    wire        x_err, x_busy, x_progress;
    wire [7:0]  x_err_code;
    wire [31:0] x_err_info, x_err_pc;
    wire [2:0]  x_done;
    wire [3:0]  ev_busy, ev_stall, ev_wave, ev_row;
    wire [11:0] ev_rows;   // per mode, 3 bits: rows injected this cycle (ev_row counts slots)
    wire        ev_mode_switch;
    wire [1:0]  ev_bypass;
    wire [7:0]  ev_path2;
    wire [63:0] ev_macs;
    wire        ev_wait_tok, ev_wait_weights, ev_wait_obuf, ev_wait_unit;
    wire [1:0]  ev_drain_row;
    wire        ev_drain_busy, ev_drain_stall, ev_vec_busy, ev_vec_rd, ev_vec_wr;
    wire [15:0] ev_idle_shape, ev_macs_zero;
    wire [7:0]  ev_obuf_writes;

    npu_exec #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .OBUF_ROWS(OBUF_ROWS),
               .OBUF_AW(OBUF_AW), .TAGW(TAGW), .DTYPE(DTYPE)) u_exec (
        .clk(clk), .rst_n(unit_rst_n), .run(run),
        .q_vld(!qe_empty), .q_insn(qe_dout[127:0]), .q_pc(qe_dout[159:128]), .q_pop(qe_pop),
        .pc_cur(pc_e),
        .l2e_avail(l2e_avail), .s2e_avail(s2e_avail), .pop_l2e(pop_l2e), .pop_s2e(pop_s2e),
        .push_e2l(push_e2l), .push_e2s(push_e2s),
        .err(x_err), .err_code(x_err_code), .err_info(x_err_info), .err_pc(x_err_pc),
        .busy(x_busy), .progress(x_progress), .done_cnt(x_done),
        .rda_req(rda_req), .rda_addr(rda_addr), .rda_gnt(rda_gnt), .rda_data(spm_rd_data[WB +: 4*WB]),
        .rdw_req(rdw_req), .rdw_addr(rdw_addr), .rdw_gnt(rdw_gnt), .rdw_data(spm_rd_data[5*WB +: WB]),
        .rdw2_req(rdw2_req), .rdw2_addr(rdw2_addr), .rdw2_gnt(rdw2_gnt), .rdw2_data(spm_rd_data[6*WB +: WB]),
        .ard_req(ard_req), .ard_addr(ard_addr), .ard_gnt(ard_gnt), .ard_data(spm_rd_data[7*WB +: 2*WB]),
        .wr_req(dr_wr_req), .wr_addr(dr_wr_addr), .wr_data(dr_wr_data), .wr_gnt(dr_wr_gnt),
        .vrd_req(vrd_req), .vrd_addr(vrd_addr), .vrd_gnt(spm_rd_gnt[0]), .vrd_data(spm_rd_data[0 +: WB]),
        .vwr_req(vwr_req), .vwr_addr(vwr_addr), .vwr_data(vwr_data), .vwr_gnt(spm_wr_gnt[0]),
        .h_vld(h_vld), .h_gid(h_gid), .h_data(h_data), .h_two(h_two), .h_rdy(h_rdy),
        .v_vld(v_vld), .v_gid(v_gid), .v_half(v_half), .v_word(v_word), .v_data(v_data), .v_rdy(v_rdy),
        .lbh_empty(lbh_empty), .lbh_dout(lbh_dout), .lbh_pop(lbh_pop),
        .lbv_empty(lbv_empty), .lbv_cnt(lbv_cnt), .lbv_dout(lbv_dout), .lbv_pop(lbv_pop),
        .mode(mode), .inj_vld(inj_vld), .inj_a(inj_a), .inj_sel(inj_sel), .inj_tag(inj_tag),
        .w_row(w_row), .w_bank(w_bank), .w_in(w_in),
        .out_vld(out_vld), .out_tag(out_tag), .top_vld(top_vld), .top_tag(top_tag),
        .ob_wr_en(ob_wr_en), .ob_wr_addr(ob_wr_addr), .ob_wr_acc(ob_wr_acc),
        .ob2_wr_en(ob2_wr_en), .ob2_wr_addr(ob2_wr_addr), .ob2_wr_acc(ob2_wr_acc),
        .ob_rd_en(ob_rd_en), .ob_rd_addr(ob_rd_addr), .ob_rd_data(ob_rd_data),
        .ob_rd2_en(ob_rd2_en), .ob_rd2_addr(ob_rd2_addr), .ob_rd2_data(ob_rd2_data),
        .ev_busy(ev_busy), .ev_stall(ev_stall), .ev_macs(ev_macs), .ev_wave(ev_wave), .ev_row(ev_row),
        .ev_rows(ev_rows), .ev_mode_switch(ev_mode_switch), .ev_bypass(ev_bypass), .ev_path2(ev_path2),
        .ev_wait_tok(ev_wait_tok), .ev_wait_weights(ev_wait_weights), .ev_wait_obuf(ev_wait_obuf),
        .ev_wait_unit(ev_wait_unit), .ev_obuf_writes(ev_obuf_writes), .ev_drain_row(ev_drain_row),
        .ev_idle_shape(ev_idle_shape), .ev_macs_zero(ev_macs_zero), .ev_drain_busy(ev_drain_busy), .ev_drain_stall(ev_drain_stall),
        .ev_vec_busy(ev_vec_busy), .ev_vec_rd(ev_vec_rd), .ev_vec_wr(ev_vec_wr)
    );
    assign busy_e = x_busy;

    // Injection register: the rows npu_exec injects in cycle t enter the array in t+1. The
    // injector's decision (LBUF_H heads, wave queue, mode) would otherwise be in series with the
    // array's first MAC (synthesis: 36 levels, LBUF_H count -> npu_exec -> FlexSA muxes -> PE,
    // against the PE's 24). The stage is transparent to npu_exec: it counts a row in flight from
    // its injection and retires it by the tag coming out of the array, so the stage only adds a
    // cycle to the array latency; weights (w_*) are not delayed: npu_exec_ldw times a bank's
    // writes from the injections, this stage included.
    reg  [1:0]         mode_q;
    reg  [3:0]         inj_vld_q, inj_sel_q;
    reg  [4*S*16-1:0]  inj_a_q;
    reg  [4*TAGW-1:0]  inj_tag_q;
    always @(posedge clk) begin
        if (!unit_rst_n) begin
            inj_vld_q <= 4'd0;
            mode_q    <= 2'd0;
        end else begin
            inj_vld_q <= inj_vld;
            mode_q    <= mode;
        end
        inj_a_q   <= inj_a;
        inj_sel_q <= inj_sel;
        inj_tag_q <= inj_tag;
    end

    npu_flexsa #(.S(S), .TAGW(TAGW), .BF16(BF16)) u_flexsa (
        .clk(clk), .rst_n(unit_rst_n), .mode(mode_q),
        .inj_vld(inj_vld_q), .inj_a(inj_a_q), .inj_sel(inj_sel_q), .inj_tag(inj_tag_q),
        .w_row(w_row), .w_bank(w_bank), .w_in(w_in),
        .out_vld(out_vld), .out_tag(out_tag), .out_data(out_data),
        .top_vld(top_vld), .top_tag(top_tag), .top_data(top_data)
    );

    npu_obuf #(.S(S), .ROWS(OBUF_ROWS), .BF16(BF16)) u_obuf (
        .clk(clk),
        .wr_en(ob_wr_en), .wr_addr(ob_wr_addr), .wr_acc(ob_wr_acc), .wr_data(out_data),
        .wr2_en(ob2_wr_en), .wr2_addr(ob2_wr_addr), .wr2_acc(ob2_wr_acc), .wr2_data(top_data),
        .rd_en(ob_rd_en), .rd_addr(ob_rd_addr), .rd_data(ob_rd_data),
        .rd2_en(ob_rd2_en), .rd2_addr(ob_rd2_addr), .rd2_data(ob_rd2_data)
    );

    // ------------------------------------------------------------------ errors, progress
    assign err_vec  = {x_err, st_err, ld_err, f_err};
    assign err_code = {x_err_code, st_err_code, ld_err_code, f_err_code};
    assign err_info = {x_err_info, st_err_info, ld_err_info, f_err_info};
    assign err_pc   = {x_err_pc, pc_s, pc_l, f_err_pc};
    // A FILL moves no DRAM data: its SPM writes are its progress. They, the DMA queues'
    // completions and npu_exec's progress (which comes through the SPM grants) reach the
    // watchdog through a register (a cycle late is fine for it): the grants do not feed the
    // watchdog counter's logic.
    reg unit_prog_q;
    always @(posedge clk) unit_prog_q <= unit_rst_n && (ldq_done || stq_done || (|ld_cnt_fill)
                                                        || (|ld_cnt_copy) || x_progress);
    assign progress = ql_push || qe_push || qs_push || unit_prog_q
                   || (m_r_valid && m_r_ready) || (m_w_valid && m_w_ready);

    // ------------------------------------------------------------------ performance counters
    npu_perf_counters #(.S(S), .NCNT(NUM_COUNTERS), .BEAT_WORDS(BEAT_WORDS)) u_perf (
        .ld_cnt_beat(ld_cnt_beat), .ld_cnt_tag(ld_cnt_tag), .ld_cnt_burst(ld_cnt_burst),
        .ld_cnt_fill(ld_cnt_fill), .ld_cnt_copy(ld_cnt_copy), .st_cnt_beat(st_cnt_beat), .st_cnt_tag(st_cnt_tag),
        .st_cnt_burst(st_cnt_burst), .f_beat(ev_f_beat), .f_burst(ev_f_burst),
        .spm_rd(spm_cnt_rd), .spm_wr(spm_cnt_wr), .spm_conf(spm_cnt_conf5),
        .nh_flit(nh_flit), .nv_flit(nv_flit), .nh_deliv(nh_deliv), .nv_deliv(nv_deliv),
        .h_two(h_two), .nh_link(nh_link), .nv_link(nv_link),
        .lbh_take(nh_vld & nh_rdy), .lbv_take(nv_vld & nv_rdy),
        .ldq_done(ldq_done), .x_done(x_done), .stq_done(stq_done),
        .ld_wait_tok(ld_wait_tok), .st_wait_tok(st_wait_tok), .busy_l(busy_l), .busy_s(busy_s),
        .ev_busy(ev_busy), .ev_stall(ev_stall), .ev_macs(ev_macs), .ev_wave(ev_wave),
        .ev_row(ev_row), .ev_rows(ev_rows), .ev_mode_switch(ev_mode_switch), .ev_bypass(ev_bypass),
        .ev_path2(ev_path2), .ev_wait_tok(ev_wait_tok), .ev_wait_weights(ev_wait_weights),
        .ev_wait_obuf(ev_wait_obuf), .ev_wait_unit(ev_wait_unit), .ev_obuf_writes(ev_obuf_writes),
        .ev_drain_row(ev_drain_row), .ev_idle_shape(ev_idle_shape), .ev_macs_zero(ev_macs_zero),
        .ev_drain_busy(ev_drain_busy), .ev_drain_stall(ev_drain_stall),
        .ev_vec_busy(ev_vec_busy), .ev_vec_rd(ev_vec_rd), .ev_vec_wr(ev_vec_wr),
        .cnt_inc(cnt_inc)
    );

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // LOAD_SPM: the engine never has beats owed by both R sources (npu_dma_load's order rule),
    // which the ungated R ready above relies on
    always @(posedge clk) if (unit_rst_n) begin
        if (la_r_vld && ld_r_spm) `NPU_ASSERT_FAIL("DRAM R beat for the LOAD engine while it takes LOAD_SPM beats")
        if (sb_r_vld && !ld_r_spm) `NPU_ASSERT_FAIL("LOAD_SPM beat while the LOAD engine takes DRAM beats")
    end
`endif

    wire unused = &{1'b0, nh_nodest, nv_nodest, spm_rd_vld[8:0],
                    ldq_pop_prev_unused, ldq_push_prev_unused, stq_pop_next_unused,
                    stq_push_next_unused, s2e_avail};
endmodule
`default_nettype wire
