`default_nettype none
// npu_exec: the EXEC queue. Issues LDW / WAVE / DRAIN / SYNC_E in order, each to its own unit,
// and lets the units run concurrently so that stationary preloading (LDW into the shadow
// weight bank), streaming waves and OBUF draining overlap:
//   weight loader  LDW:   SPM -> V channel -> LBUF_V -> PE weight bank      npu_exec_ldw
//   wave engine    WAVE:  SPM -> H channel -> LBUF_H                         npu_exec_wave
//                         -> injector -> FlexSA                              npu_exec_inject
//                         -> OBUF (writes, retirement, row hazards)          npu_exec_obuf_hazard
//   drain engine   DRAIN: OBUF -> SPM                                        npu_exec_drain
//   vector unit    VEC:   SPM -> 2S lanes -> SPM (VSET: its registers)       npu_exec_vec
// with the head's decode and range checks in npu_exec_decode and the wave counter events in
// npu_exec_events. This module keeps the issue (tokens, unit and hazard interlocks), the
// errors and the completion (token pushes, done count, busy, progress).
// Hazards are interlocked, so a program only needs tokens for DMA <-> EXEC ordering:
//   LDW(bank b) writes a PE row of b only after the last row of the waves issued before it that
//   use b has passed it, and the waves issued early on b inject only once the LDW's writes are
//   sure to stay ahead of their rows (its commit, npu_exec_ldw);
//   WAVE(bank b) issues only when b is loaded (or being loaded to a full cover: early), in the
//   mode b was loaded for (else BAD_DESC), and no DRAIN queued or reading covers its OBUF rows;
//   a DRAIN reads its OBUF rows only when no wave in flight still writes them.
// A VEC is a barrier: it issues when the other units are idle (every earlier EXEC instruction
// complete, its SPM writes done), and nothing issues while it runs (docs/isa.md section 3).
// An error (the head's checks, or the mode check) stops the issue: err with the faulting pc.
module npu_exec #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    parameter SPM_WORDS = 4096,
    parameter OBUF_ROWS = 256,
    parameter OBUF_AW   = 9,
    parameter TAGW      = OBUF_AW + 5,   // row tag {mode, last, bank, acc, OBUF row}
    parameter DTYPE     = 0              // element type: DTYPE_INT16 / DTYPE_BF16 (npu_defs.vh)
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  run,          // issue allowed (0 after an error)
    // EXEC queue head
    input  wire                  q_vld,
    input  wire [127:0]          q_insn,
    input  wire [31:0]           q_pc,
    output wire                  q_pop,
    output wire [31:0]           pc_cur,     // head instruction, else the last one issued
    // dependency tokens
    input  wire                  l2e_avail,
    input  wire                  s2e_avail,
    output wire                  pop_l2e,
    output wire                  pop_s2e,
    output wire [2:0]            push_e2l,
    output wire [2:0]            push_e2s,
    // status
    output wire                  err,
    output wire [7:0]            err_code,
    output wire [31:0]           err_info,
    output wire [31:0]           err_pc,
    output wire                  busy,
    output wire                  progress,
    output wire [2:0]            done_cnt,
    // SPM: port A (streamed operand), port W (stationary operand), the drain's read (DRAIN acc)
    // and write ports
    output wire [3:0]            rda_req,      // one A port per stream position (see streamer)
    output wire [4*SPM_AW-1:0]   rda_addr,
    input  wire [3:0]            rda_gnt,
    input  wire [4*32*S-1:0]     rda_data,
    output wire                  rdw_req,
    output wire [SPM_AW-1:0]     rdw_addr,
    input  wire                  rdw_gnt,
    input  wire [32*S-1:0]       rdw_data,
    output wire                  rdw2_req,     // the weight loader's second stream (pair loads)
    output wire [SPM_AW-1:0]     rdw2_addr,
    input  wire                  rdw2_gnt,
    input  wire [32*S-1:0]       rdw2_data,
    output wire [1:0]            ard_req,      // drain: DRAIN acc's old low / high word
    output wire [2*SPM_AW-1:0]   ard_addr,
    input  wire [1:0]            ard_gnt,
    input  wire [2*32*S-1:0]     ard_data,
    output wire [3:0]            wr_req,       // drain: [0]/[1] low/high word of row r, [2]/[3] row r+1
    output wire [4*SPM_AW-1:0]   wr_addr,
    output wire [4*32*S-1:0]     wr_data,
    input  wire [3:0]            wr_gnt,
    // vector unit: one read and one write port
    output wire                  vrd_req,
    output wire [SPM_AW-1:0]     vrd_addr,
    input  wire                  vrd_gnt,
    input  wire [32*S-1:0]       vrd_data,
    output wire                  vwr_req,
    output wire [SPM_AW-1:0]     vwr_addr,
    output wire [32*S-1:0]       vwr_data,
    input  wire                  vwr_gnt,
    // NoC sources
    // two H channels: [0] = L (LBUF_H of cores 0/2), [1] = R (cores 1/3); the low endpoint of a
    // channel (core 0/1) keeps lanes 0..S-1 of a flit, the high one (core 2/3) lanes S..2S-1
    output wire [1:0]            h_vld,
    output wire [7:0]            h_gid,        // per channel: core bitmask of its destinations
    output wire [2*32*S-1:0]     h_data,
    output wire [1:0]            h_two,        // the flit carries two SPM words (two rows)
    input  wire [1:0]            h_rdy,
    output wire                  v_vld,
    output wire [3:0]            v_gid,
    output wire [3:0]            v_half,       // NoC V endpoint halves for the head flit
    output wire [3:0]            v_word,       // NoC V endpoint words (pair flits: cores 2/3 word 1)
    output wire [64*S-1:0]       v_data,
    input  wire                  v_rdy,
    // per-core local buffers
    input  wire [3:0]            lbh_empty,
    input  wire [4*S*16-1:0]     lbh_dout,
    output wire [3:0]            lbh_pop,
    input  wire [3:0]            lbv_empty,
    input  wire [4*8-1:0]        lbv_cnt,
    input  wire [4*S*16-1:0]     lbv_dout,
    output wire [3:0]            lbv_pop,
    // FlexSA
    output wire [1:0]            mode,
    output wire [3:0]            inj_vld,
    output wire [4*S*16-1:0]     inj_a,
    output wire [3:0]            inj_sel,
    output wire [4*TAGW-1:0]     inj_tag,
    output wire [4*S-1:0]        w_row,
    output wire [3:0]            w_bank,
    output wire [4*S*16-1:0]     w_in,
    input  wire [2*S-1:0]        out_vld,
    input  wire [2*S*TAGW-1:0]   out_tag,
    input  wire [2*S-1:0]        top_vld,
    input  wire [2*S*TAGW-1:0]   top_tag,
    // OBUF
    output wire [2*S-1:0]        ob_wr_en,
    output wire [2*S*OBUF_AW-1:0] ob_wr_addr,
    output wire [2*S-1:0]        ob_wr_acc,
    output wire [2*S-1:0]        ob2_wr_en,    // path (2): results of cores 0/1 (HSW/ISW)
    output wire [2*S*OBUF_AW-1:0] ob2_wr_addr,
    output wire [2*S-1:0]        ob2_wr_acc,
    output wire                  ob_rd_en,
    output wire [OBUF_AW-1:0]    ob_rd_addr,
    input  wire [2*S*32-1:0]     ob_rd_data,
    output wire                  ob_rd2_en,    // second row of a drained pair
    output wire [OBUF_AW-1:0]    ob_rd2_addr,
    input  wire [2*S*32-1:0]     ob_rd2_data,
    // counter events
    output wire [3:0]            ev_busy,      // per core: a valid row entered
    output wire [3:0]            ev_stall,     // per core: wave waiting for its LBUF_H
    output wire [4*16-1:0]       ev_macs,      // per core: useful MACs this cycle
    output wire [3:0]            ev_wave,      // one-hot mode of a WAVE issued this cycle
    output wire [3:0]            ev_row,       // one-hot mode of an injection slot this cycle
    output wire [11:0]           ev_rows,      // per mode (3 bits each): rows injected this cycle
    output wire                  ev_mode_switch, // the injection mode changed
    output wire [1:0]            ev_bypass,    // S-element A words over bypass (1) to cores 1/3 (VSW/ISW)
    output wire [7:0]            ev_path2,     // int32 results of cores 0/1 over path (2) (HSW/ISW)
    output wire                  ev_wait_tok,
    output wire                  ev_wait_weights,
    output wire                  ev_wait_obuf,
    output wire                  ev_wait_unit,
    output wire [7:0]            ev_obuf_writes,
    output wire [1:0]            ev_drain_row,
    output wire [15:0]           ev_idle_shape,  // PEs of row-carrying sub-arrays outside k x n
    output wire [15:0]           ev_macs_zero,   // MACs fed a zero A element (lanes k_lo..k-1 x n)
    output wire                  ev_drain_busy,  // a DRAIN is active
    output wire                  ev_drain_stall, // a drain word was refused by the SPM
    output wire                  ev_vec_busy,    // a VEC is active
    output wire                  ev_vec_rd,      // the vector unit read an SPM word
    output wire                  ev_vec_wr       // the vector unit wrote an SPM word
);
`include "npu_defs.vh"
    // bf16: lanes outside [k_lo, k) fed as +0, fp32 DRAIN acc; the vector unit's fp32 lanes
    localparam BF16 = (DTYPE == DTYPE_BF16) ? 1 : 0;
    localparam RW = OBUF_AW + 1;     // an OBUF row or the end of a range (up to 2 * OBUF_ROWS)

    // ------------------------------------------------------------------ decode and checks
    wire               is_ldw, is_wave, is_drain, is_sync, t_pop_prv, t_pop_nxt, t_psh_prv, t_psh_nxt;
    wire               f_bank, chk_vld, chk_err, ld_bhi, wv_bc, wv_acc, wv_ahi, wv_skinny;
    wire               dr_two, dr_acc, dr_narrow;
    wire [4:0]         dr_pack;
    wire [4:0]         dr_shift;
    wire [1:0]         f_mode, wv_mode;
    wire [7:0]         chk_code, ld_k, wv_n;
    wire [31:0]        chk_info, ld_addr;
    wire [15:0]        ld_base, ld_base2;
    wire               ld_mono;
    wire [5:0]         ld_klo;
    wire [3:0]         ld_cmask;
    wire [15:0]        ld_stride, wv_stride, wv_idle, wv_m, dr_hs, dr_hoff, dr_stride, dr_spm;
    wire [15:0]        dr_rows, dr_split, dr_hirows;
    wire [4*SPM_AW-1:0] wv_sa;
    wire [63:0]        wv_len, wv_macs;
    wire [4*OBUF_AW-1:0] wv_ob;
    wire [4*S-1:0]     wv_pass, wv_cntm;
    wire [8*RW-1:0]    wv_lr;
    wire [2:0]         wv_nset;
    wire [RW-1:0]      rows_lo, rows_hi;
    wire [OBUF_AW-1:0] dr_h, dr_ob;
    wire               can_issue;
    npu_exec_decode #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .OBUF_ROWS(OBUF_ROWS),
                      .OBUF_AW(OBUF_AW), .BF16(BF16)) u_dec (
        .clk(clk), .rst_n(rst_n), .q_vld(q_vld), .q_insn(q_insn), .q_pop(can_issue),
        .is_ldw(is_ldw), .is_wave(is_wave), .is_drain(is_drain), .is_sync(is_sync),
        .t_pop_prv(t_pop_prv), .t_pop_nxt(t_pop_nxt), .t_psh_prv(t_psh_prv), .t_psh_nxt(t_psh_nxt),
        .bank(f_bank), .mode_f(f_mode),
        .chk_vld(chk_vld), .chk_err(chk_err), .chk_code(chk_code), .chk_info(chk_info),
        .ld_k(ld_k), .ld_klo(ld_klo), .ld_stride(ld_stride), .ld_cmask(ld_cmask), .ld_bhi(ld_bhi),
        .ld_base(ld_base), .ld_base2(ld_base2), .ld_mono(ld_mono), .ld_addr(ld_addr),
        .wv_mode(wv_mode), .wv_bc(wv_bc), .wv_acc(wv_acc), .wv_ahi(wv_ahi), .wv_sa(wv_sa),
        .wv_stride(wv_stride), .wv_len(wv_len), .wv_ob(wv_ob), .wv_pass(wv_pass), .wv_cntm(wv_cntm),
        .wv_macs(wv_macs), .wv_idle(wv_idle), .wv_n(wv_n), .wv_lr(wv_lr), .wv_nset(wv_nset),
        .wv_m(wv_m), .wv_skinny(wv_skinny), .rows_lo(rows_lo), .rows_hi(rows_hi),
        .dr_two(dr_two), .dr_h(dr_h), .dr_hs(dr_hs), .dr_hoff(dr_hoff), .dr_acc(dr_acc),
        .dr_stride(dr_stride), .dr_spm(dr_spm), .dr_ob(dr_ob), .dr_rows(dr_rows), .dr_split(dr_split),
        .dr_hirows(dr_hirows), .dr_narrow(dr_narrow), .dr_pack(dr_pack), .dr_shift(dr_shift)
    );

    // ------------------------------------------------------------------ issue
    wire issue_ldw, issue_wave, issue_drain, issue_sync;
    wire ldw_act, ldw_rdy, ldw_bank, ldw_done, ldw_busy, ldw_shift, ldw_cmt, ldw_cmtd;
    wire [1:0] wok, wearly, ldw_push;
    wire [3:0] bank_lmode;
    wire [15:0] bank_since;
    wire [3:0] bank_mode, wpend;
    wire inj_full, haz_full, dq_full, war_blk;
    wire tokens_ok = (!t_pop_prv || l2e_avail) && (!t_pop_nxt || s2e_avail);
    // A WAVE issues when its bank is loaded, or is being loaded by the active LDW so that every
    // core will hold its tile (early: the streamer fetches its A rows while the weights shift in;
    // the injector holds it until the LDW completes). So the instructions behind it (a DRAIN of
    // the previous wave's rows) issue without waiting for the LDW. Both per bank in registers
    // (npu_exec_ldw: wok, wearly).
    wire wave_w_early = wearly[f_bank];
    wire wave_w_ok  = wok[f_bank];
    wire wave_ob_ok = !war_blk;
    wire v_is, v_vec, v_err, v_busy;
    wire others_idle = !ldw_busy && !inj_busy && !dr_busy && !haz_busy && !st_busy && !ev_busy_mz;
    wire unit_ok = v_busy   ? 1'b0 :                 // nothing issues while a VEC runs
                   is_ldw   ? ldw_rdy :
                   is_wave  ? (!inj_full && !haz_full) :
                   is_drain ? !dq_full :
                   v_vec    ? others_idle : 1'b1;
    wire hazard_ok = is_wave ? (wave_w_ok && wave_ob_ok) : 1'b1;
    // A WAVE must run in the mode its bank was loaded for (each mode lays the stationary tile
    // out differently over the four cores): checked when the bank is ready, else BAD_DESC.
    wire [1:0] f_bank_mode = f_bank ? bank_mode[3:2] : bank_mode[1:0];
    wire mode_bad = chk_vld && is_wave && wave_w_ok && f_bank_mode != f_mode;
    // the head's checks (npu_exec_decode) are valid from its fourth cycle at the head
    wire bad = (chk_vld && (chk_err || v_err)) || mode_bad;
    assign can_issue = run && q_vld && chk_vld && !bad && tokens_ok && unit_ok && hazard_ok;
    assign issue_ldw   = can_issue && is_ldw;
    assign issue_wave  = can_issue && is_wave;
    assign issue_drain = can_issue && is_drain;
    assign issue_sync  = can_issue && is_sync;
    assign q_pop   = can_issue;
    assign pop_l2e = can_issue && t_pop_prv;
    assign pop_s2e = can_issue && t_pop_nxt;

    assign err      = run && q_vld && bad;
    wire [7:0]  v_code;
    wire [31:0] v_info;
    assign err_code = (chk_code != ERR_NONE) ? chk_code : v_err ? v_code : ERR_BAD_DESC;
    assign err_info = (chk_code != ERR_NONE) ? chk_info : v_err ? v_info : {28'd0, f_bank_mode, f_mode};
    assign err_pc   = q_pc;

    reg [31:0] pc_q;
    always @(posedge clk) begin
        if (!rst_n) pc_q <= 32'd0;
        else if (q_vld) pc_q <= q_pc;
    end
    assign pc_cur = q_vld ? q_pc : pc_q;

    assign ev_wait_tok     = run && q_vld && chk_vld && !bad && !tokens_ok;
    assign ev_wait_weights = run && q_vld && tokens_ok && is_wave && !wave_w_ok;
    assign ev_wait_obuf    = run && q_vld && tokens_ok && is_wave && wave_w_ok && !wave_ob_ok;
    assign ev_wait_unit    = run && q_vld && tokens_ok && hazard_ok && !unit_ok;

    // ------------------------------------------------------------------ units
    npu_exec_ldw #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS)) u_ldw (
        .clk(clk), .rst_n(rst_n), .issue(issue_ldw), .bank(f_bank), .mode(f_mode), .k(ld_k),
        .klo(ld_klo), .stride(ld_stride), .cmask(ld_cmask), .bhi(ld_bhi), .base(ld_base), .base2(ld_base2), .mono(ld_mono), .addr(ld_addr),
        .push_in({t_psh_nxt, t_psh_prv}), .wave_early(issue_wave && wave_w_early), .wave_bank(f_bank), .wpend(wpend),
        .bank_lmode(bank_lmode), .bank_since(bank_since), .wok(wok), .wearly(wearly), .bank_mode(bank_mode), .act(ldw_act), .ready(ldw_rdy),
        .act_bank(ldw_bank), .done(ldw_done), .commit(ldw_cmt), .committed(ldw_cmtd), .push(ldw_push), .busy(ldw_busy), .shifting(ldw_shift),
        .rd_req(rdw_req), .rd_addr(rdw_addr), .rd_gnt(rdw_gnt), .rd_data(rdw_data),
        .rd2_req(rdw2_req), .rd2_addr(rdw2_addr), .rd2_gnt(rdw2_gnt), .rd2_data(rdw2_data),
        .v_vld(v_vld), .v_gid(v_gid), .v_half(v_half), .v_word(v_word), .v_data(v_data), .v_rdy(v_rdy),
        .lbv_empty(lbv_empty), .lbv_cnt(lbv_cnt), .lbv_dout(lbv_dout), .lbv_pop(lbv_pop),
        .w_row(w_row), .w_bank(w_bank), .w_in(w_in)
    );

    wire       st_busy, st_progress;
    wire [1:0] st_waves;
    wire         wq_wr;                 // the wave queue (slots kept in npu_exec_inject)
    wire [3:0]   wq_modes;
    wire [127:0] wq_lens;
    npu_exec_wave #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS)) u_wave (
        .clk(clk), .rst_n(rst_n), .issue(issue_wave), .wv_bc(wv_bc),
        .wv_ahi(wv_ahi), .wv_sa(wv_sa), .wv_stride(wv_stride),
        .wq_wr(wq_wr), .wq_modes(wq_modes), .wq_lens(wq_lens),
        .busy(st_busy), .progress(st_progress), .waves(st_waves),
        .rda_req(rda_req), .rda_addr(rda_addr), .rda_gnt(rda_gnt), .rda_data(rda_data),
        .h_vld(h_vld), .h_gid(h_gid), .h_data(h_data), .h_two(h_two), .h_rdy(h_rdy)
    );

    wire       inj_busy, inj, in_last, mode_sw, in_act;
    wire [1:0] in_mode;
    wire [3:0] in_need, in_cores;
    wire [2:0] in_nrows;
    wire [5:0] r_bank;
    npu_exec_inject #(.S(S), .OBUF_AW(OBUF_AW), .TAGW(TAGW)) u_inj (
        .clk(clk), .rst_n(rst_n), .issue(issue_wave), .bank(f_bank), .wv_mode(wv_mode),
        .wv_acc(wv_acc), .wv_len(wv_len), .wv_ob(wv_ob), .wv_pass(wv_pass), .early(wave_w_early),
        .ldw_done(ldw_done), .ldw_cmt(ldw_cmt), .ldw_cmtd(ldw_cmtd), .r_bank(r_bank), .full(inj_full), .wpend(wpend), .bank_lmode(bank_lmode), .bank_since(bank_since),
        .busy(inj_busy), .q_wr(wq_wr), .q_modes(wq_modes), .q_lens(wq_lens),
        .lbh_empty(lbh_empty), .lbh_dout(lbh_dout), .lbh_pop(lbh_pop),
        .mode(mode), .inj_vld(inj_vld), .inj_a(inj_a), .inj_sel(inj_sel), .inj_tag(inj_tag),
        .inj(inj), .in_last(in_last), .mode_sw(mode_sw), .in_act(in_act), .in_mode(in_mode),
        .in_need(in_need), .in_cores(in_cores), .in_nrows(in_nrows),
        .ldw_act(ldw_act), .ldw_bank(ldw_bank), .ldw_shift(ldw_shift), .st_waves(st_waves)
    );

    wire ev_busy_mz;
    npu_exec_events #(.S(S)) u_ev (
        .clk(clk), .rst_n(rst_n), .issue(issue_wave), .wv_mode(wv_mode), .wv_macs(wv_macs),
        .wv_idle(wv_idle), .wv_cntm(wv_cntm), .wv_n(wv_n), .inj(inj), .in_last(in_last),
        .mode_sw(mode_sw), .in_act(in_act), .in_mode(in_mode), .amode(mode), .in_need(in_need),
        .in_cores(in_cores), .in_nrows(in_nrows), .lbh_empty(lbh_empty), .lbh_dout(lbh_dout),
        .out_vld(out_vld), .top_vld(top_vld), .busy(ev_busy_mz),
        .ev_busy(ev_busy), .ev_stall(ev_stall), .ev_macs(ev_macs), .ev_wave(ev_wave),
        .ev_row(ev_row), .ev_rows(ev_rows), .ev_mode_switch(ev_mode_switch), .ev_bypass(ev_bypass),
        .ev_path2(ev_path2), .ev_obuf_writes(ev_obuf_writes), .ev_idle_shape(ev_idle_shape),
        .ev_macs_zero(ev_macs_zero)
    );

    wire            haz_busy, x_progress, wave_done, young, pend_a, pend_b;
    wire [1:0]      wave_push;
    wire            dr_act, dq_pop;
    wire [RW-1:0]   dr_lo, dr_end, dq_lo, dq_end;
    wire [OBUF_AW-1:0] dr_row, dr_row1;
    npu_exec_obuf_hazard #(.S(S), .OBUF_ROWS(OBUF_ROWS), .OBUF_AW(OBUF_AW), .TAGW(TAGW)) u_haz (
        .clk(clk), .rst_n(rst_n), .issue_wave(issue_wave), .wv_lr(wv_lr), .wv_nset(wv_nset),
        .wv_push({t_psh_nxt, t_psh_prv}), .issue_drain(issue_drain), .rows_lo(rows_lo),
        .rows_hi(rows_hi), .full(haz_full), .busy(haz_busy), .progress(x_progress),
        .wave_done(wave_done), .wave_push(wave_push), .r_bank(r_bank), .war_blk(war_blk),
        .young(young), .pend_a(pend_a), .pend_b(pend_b),
        .dr_act(dr_act), .dr_lo(dr_lo), .dr_end(dr_end), .dq_lo(dq_lo), .dq_end(dq_end),
        .dr_row(dr_row), .dr_row1(dr_row1), .dq_pop(dq_pop),
        .out_vld(out_vld), .out_tag(out_tag), .top_vld(top_vld), .top_tag(top_tag),
        .ob_wr_en(ob_wr_en), .ob_wr_addr(ob_wr_addr), .ob_wr_acc(ob_wr_acc),
        .ob2_wr_en(ob2_wr_en), .ob2_wr_addr(ob2_wr_addr), .ob2_wr_acc(ob2_wr_acc),
        .wv_m(wv_m), .wv_obuf(wv_ob[OBUF_AW-1:0]), .wv_skinny(wv_skinny), .dr_rows(dr_rows),
        .dr_ob(dr_ob), .ob_rd_en(ob_rd_en), .ob_rd_addr(ob_rd_addr), .ob_rd2_en(ob_rd2_en),
        .ob_rd2_addr(ob_rd2_addr)
    );

    wire       dr_busy, dr_progress, dr_done;
    wire [1:0] dr_push;
    npu_exec_drain #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .OBUF_AW(OBUF_AW),
                    .BF16(BF16)) u_drain (
        .clk(clk), .rst_n(rst_n), .issue(issue_drain), .two(dr_two), .h(dr_h), .hs(dr_hs),
        .hoff(dr_hoff), .acc(dr_acc), .narrow(dr_narrow), .pack(dr_pack), .shift(dr_shift), .push({t_psh_nxt, t_psh_prv}), .stride(dr_stride),
        .spm(dr_spm), .ob(dr_ob), .rows(dr_rows), .rows_end(rows_hi), .split(dr_split),
        .hirows(dr_hirows), .full(dq_full), .busy(dr_busy), .progress(dr_progress),
        .done(dr_done), .done_push(dr_push),
        .young(young), .pend_a(pend_a), .pend_b(pend_b), .act(dr_act), .rd_lo(dr_lo),
        .rd_end(dr_end), .row(dr_row), .row1(dr_row1), .head_lo(dq_lo), .head_end(dq_end),
        .start(dq_pop),
        .ob_rd_en(ob_rd_en), .ob_rd_addr(ob_rd_addr), .ob_rd_data(ob_rd_data),
        .ob_rd2_en(ob_rd2_en), .ob_rd2_addr(ob_rd2_addr), .ob_rd2_data(ob_rd2_data),
        .wr_req(wr_req), .wr_addr(wr_addr), .wr_data(wr_data), .wr_gnt(wr_gnt),
        .ar_req(ard_req), .ar_addr(ard_addr), .ar_gnt(ard_gnt), .ar_data(ard_data),
        .ev_drain_row(ev_drain_row), .ev_drain_busy(ev_drain_busy), .ev_drain_stall(ev_drain_stall)
    );

    wire       v_progress, v_done;
    wire [1:0] v_push;
    npu_exec_vec #(.S(S), .SPM_AW(SPM_AW), .SPM_WORDS(SPM_WORDS), .DTYPE(DTYPE)) u_vec (
        .clk(clk), .rst_n(rst_n), .q_insn(q_insn), .is_v(v_is), .is_vec(v_vec),
        .chk_err(v_err), .chk_code(v_code), .chk_info(v_info),
        .issue(can_issue && v_is), .push_in({t_psh_nxt, t_psh_prv}), .busy(v_busy),
        .progress(v_progress), .done(v_done), .done_push(v_push),
        .rd_req(vrd_req), .rd_addr(vrd_addr), .rd_gnt(vrd_gnt), .rd_data(vrd_data),
        .wr_req(vwr_req), .wr_addr(vwr_addr), .wr_data(vwr_data), .wr_gnt(vwr_gnt),
        .ev_busy(ev_vec_busy), .ev_rd(ev_vec_rd), .ev_wr(ev_vec_wr)
    );

    // ------------------------------------------------------------------ completion
    wire [1:0] ldw_p  = ldw_done ? ldw_push : 2'b00;
    wire [1:0] dr_p   = dr_done ? dr_push : 2'b00;
    wire [1:0] sy_p   = issue_sync ? {t_psh_nxt, t_psh_prv} : 2'b00;
    // Token pushes and completion counts leave through registers: the units' completion logic
    // (an SPM write grant -> drain done, for one) is not chained into the controller's token
    // counters and error capture (issue 7: that was the NPU's deepest path). Tokens arrive one
    // cycle later; busy covers the cycle in between so the NPU never halts with a push in flight.
    reg  [2:0] push_e2l_q, push_e2s_q, done_cnt_q;
    always @(posedge clk) begin
        if (!rst_n) begin
            push_e2l_q <= 3'd0; push_e2s_q <= 3'd0; done_cnt_q <= 3'd0;
        end else begin
            push_e2l_q <= {2'd0, ldw_p[0]} + {2'd0, wave_push[0]} + {2'd0, dr_p[0]} + {2'd0, sy_p[0]}
                        + {2'd0, v_push[0]};
            push_e2s_q <= {2'd0, ldw_p[1]} + {2'd0, wave_push[1]} + {2'd0, dr_p[1]} + {2'd0, sy_p[1]}
                        + {2'd0, v_push[1]};
            done_cnt_q <= {2'd0, ldw_done} + {2'd0, wave_done} + {2'd0, dr_done} + {2'd0, issue_sync}
                        + {2'd0, v_done};
        end
    end
    assign push_e2l = push_e2l_q;
    assign push_e2s = push_e2s_q;
    assign done_cnt = done_cnt_q;
    assign busy     = ldw_busy || inj_busy || dr_busy || haz_busy || st_busy || ev_busy_mz || v_busy
                   || push_e2l_q != 3'd0 || push_e2s_q != 3'd0 || done_cnt_q != 3'd0;
    assign progress = can_issue || inj || mode_sw || ldw_shift || dr_progress || x_progress
                   || st_progress || v_progress;
endmodule
`default_nettype wire
