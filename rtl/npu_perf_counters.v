`default_nettype none
// npu_perf_counters: the increments of npu_ctrl's performance counters (sw/npu_defs.h CNT_*),
// one 16-bit slice per counter, from the units' per-cycle events.
//   in:  DRAM beats (LOAD, STORE with their tensor tags; fetch) and bursts, FILL words; SPM
//        reads, writes, conflicts (of the previous cycle: npu_ctrl adds them late, LATE_CNT);
//        NoC flits, deliveries, link and LBUF_H/LBUF_V pushes; the EXEC events (npu_exec:
//        per core busy, stall, MACs; per mode waves, rows, slots; waits, drain, OBUF, ...);
//        instructions done and token waits of the three queues.
//   out: cnt_inc, counter c's increment at [c*16 +: 16] (npu_ctrl registers it).
// Purely combinational. The DRAM byte and burst counters (cnt_dyn) follow the DRAM handshake
// inputs of npu_top, everything else (cnt_sta) only registered state: Verilator re-evaluates
// logic that depends on top-level inputs at every eval() call (twice per cycle) and again
// after the clock edge, so only the small input-dependent part is in that path; cnt_sta is
// computed once per cycle.
module npu_perf_counters #(
    parameter S    = 8,
    parameter NCNT = 58,             // counters (NUM_COUNTERS)
    parameter BEAT_WORDS = 1         // SPM words per DRAM beat: the byte counters count DRAM beats
) (
    input  wire        ld_cnt_beat,      // LOAD DMA: a DRAM beat, its tag
    input  wire [2:0]  ld_cnt_tag,
    input  wire        ld_cnt_burst,
    input  wire [1:0]  ld_cnt_fill,      // FILL words written (up to 2 with wide beats)
    input  wire [1:0]  ld_cnt_copy,      // LOAD_SPM words written (up to 2 with wide beats)
    input  wire        st_cnt_beat,      // STORE DMA: a DRAM beat, its tag
    input  wire [2:0]  st_cnt_tag,
    input  wire        st_cnt_burst,
    input  wire        f_beat,           // fetch: a program beat, a burst
    input  wire        f_burst,
    input  wire [3:0]  spm_rd,           // SPM words read (11 ports at BEAT_WORDS = 2), written, refused (previous cycle)
    input  wire [2:0]  spm_wr,
    input  wire [4:0]  spm_conf,
    input  wire [1:0]  nh_flit,          // per H channel: a flit moved
    input  wire        nv_flit,
    input  wire [3:0]  nh_deliv,         // per H channel (2 bits): deliveries
    input  wire [2:0]  nv_deliv,
    input  wire [1:0]  h_two,            // per H channel: the flit carries two SPM words
    input  wire [3:0]  nh_link,          // per core: a flit crossed its link
    input  wire [3:0]  nv_link,
    input  wire [3:0]  lbh_take,         // per core: LBUF_H / LBUF_V pushes
    input  wire [3:0]  lbv_take,
    input  wire        ldq_done,         // instructions done: LOAD, EXEC (count), STORE
    input  wire [2:0]  x_done,
    input  wire        stq_done,
    input  wire        ld_wait_tok,
    input  wire        st_wait_tok,
    input  wire        busy_l,           // QSTATE busy_l / busy_s: an instruction in flight in the DMA queue
    input  wire        busy_s,
    // npu_exec
    input  wire [3:0]  ev_busy,
    input  wire [3:0]  ev_stall,
    input  wire [63:0] ev_macs,
    input  wire [3:0]  ev_wave,
    input  wire [3:0]  ev_row,
    input  wire [11:0] ev_rows,
    input  wire        ev_mode_switch,
    input  wire [1:0]  ev_bypass,
    input  wire [7:0]  ev_path2,
    input  wire        ev_wait_tok,
    input  wire        ev_wait_weights,
    input  wire        ev_wait_obuf,
    input  wire        ev_wait_unit,
    input  wire [7:0]  ev_obuf_writes,
    input  wire [1:0]  ev_drain_row,
    input  wire [15:0] ev_idle_shape,
    input  wire [15:0] ev_macs_zero,
    input  wire        ev_drain_busy,
    input  wire        ev_drain_stall,
    input  wire        ev_vec_busy,      // vector unit: active, an SPM word read, written
    input  wire        ev_vec_rd,
    input  wire        ev_vec_wr,
    output wire [NCNT*16-1:0] cnt_inc
);
`include "npu_defs.vh"
    localparam BEAT = 4 * S * BEAT_WORDS;   // DRAM beat bytes
    // Built per counter slice (the index tests fold at elaboration), cnt_dyn and cnt_sta apart
    // (see above).
    localparam [15:0] BEAT16 = BEAT[15:0];
    wire [7:0] ld_tag_beat = {7'd0, ld_cnt_beat} << ld_cnt_tag;   // one-hot per tag
    wire [7:0] st_tag_beat = {7'd0, st_cnt_beat} << st_cnt_tag;
    wire [3:0] h_saved;              // per H channel, 2 bits: deliveries - SPM words carried
    genvar e;
    generate
        for (e = 0; e < 2; e = e + 1) begin : g_hsave
            wire [1:0] d = nh_deliv[e*2 +: 2];
            assign h_saved[e*2 +: 2] = (d == 2'd2 && !h_two[e]) ? 2'd1 : 2'd0;
        end
    endgenerate
    wire [NCNT*16-1:0] cnt_sta /*verilator public_flat_rd*/;
    wire [NCNT*16-1:0] cnt_dyn;
    genvar gc;
    generate
        for (gc = 0; gc < NCNT; gc = gc + 1) begin : g_cnt
            localparam integer TR = gc - CNT_DRAM_RD_PROG;   // tag of a DRAM-read byte counter
            localparam integer TW = gc - CNT_DRAM_WR_PROG;   // tag of a DRAM-write byte counter
            localparam [2:0] TR3 = TR[2:0];
            wire [15:0] v;
            if (gc >= CNT_DRAM_RD_PROG && gc < CNT_DRAM_RD_PROG + 8 && TR3 == TAG_PROG)
                assign v = (ld_tag_beat[TR] ? BEAT16 : 16'd0) + (f_beat ? BEAT16 : 16'd0);
            else if (gc >= CNT_DRAM_RD_PROG && gc < CNT_DRAM_RD_PROG + 8)
                assign v = ld_tag_beat[TR] ? BEAT16 : 16'd0;
            else if (gc >= CNT_DRAM_WR_PROG && gc < CNT_DRAM_WR_PROG + 8)
                assign v = st_tag_beat[TW] ? BEAT16 : 16'd0;
            else if (gc == CNT_DRAM_RD_BURSTS)
                assign v = {15'd0, ld_cnt_burst} + {15'd0, f_burst};
            else if (gc == CNT_DRAM_WR_BURSTS)  assign v = {15'd0, st_cnt_burst};
            else if (gc == CNT_CYCLES)
                assign v = 16'd1;
            else if (gc >= CNT_BUSY_CORE0 && gc < CNT_BUSY_CORE0 + 4)
                assign v = {15'd0, ev_busy[gc - CNT_BUSY_CORE0]};
            else if (gc >= CNT_STALL_CORE0 && gc < CNT_STALL_CORE0 + 4)
                assign v = {15'd0, ev_stall[gc - CNT_STALL_CORE0]};
            else if (gc >= CNT_MACS_CORE0 && gc < CNT_MACS_CORE0 + 4)
                assign v = ev_macs[(gc - CNT_MACS_CORE0)*16 +: 16];
            else if (gc >= CNT_WAVES_FW && gc < CNT_WAVES_FW + 4)
                assign v = {15'd0, ev_wave[gc - CNT_WAVES_FW]};
            else if (gc >= CNT_ROWS_FW && gc < CNT_ROWS_FW + 4)
                assign v = {13'd0, ev_rows[(gc - CNT_ROWS_FW)*3 +: 3]};
            else if (gc == CNT_SPM_RD_WORDS)    assign v = {12'd0, spm_rd};
            else if (gc == CNT_SPM_WR_WORDS)    assign v = {13'd0, spm_wr};
            else if (gc == CNT_SPM_CONFLICTS)   assign v = {11'd0, spm_conf};
            else if (gc == CNT_NOC_H_FLITS)     assign v = {15'd0, nh_flit[0]} + {15'd0, nh_flit[1]};
            else if (gc == CNT_NOC_V_FLITS)     assign v = {15'd0, nv_flit};
            else if (gc == CNT_NOC_DELIVERIES)
                assign v = {14'd0, nh_deliv[1:0]} + {14'd0, nh_deliv[3:2]} + {13'd0, nv_deliv};
            else if (gc == CNT_LBUF_H_WORDS)
                assign v = {15'd0, lbh_take[0]} + {15'd0, lbh_take[1]}
                         + {15'd0, lbh_take[2]} + {15'd0, lbh_take[3]};
            else if (gc == CNT_LBUF_V_WORDS)
                assign v = {15'd0, lbv_take[0]} + {15'd0, lbv_take[1]}
                         + {15'd0, lbv_take[2]} + {15'd0, lbv_take[3]};
            else if (gc == CNT_OBUF_WRITES)       assign v = {8'd0, ev_obuf_writes};
            else if (gc == CNT_OBUF_DRAIN_ROWS)   assign v = {14'd0, ev_drain_row};
            else if (gc == CNT_INSN_LOAD)         assign v = {15'd0, ldq_done};
            else if (gc == CNT_INSN_EXEC)         assign v = {13'd0, x_done};
            else if (gc == CNT_INSN_STORE)        assign v = {15'd0, stq_done};
            else if (gc == CNT_WAIT_TOK_LOAD)     assign v = {15'd0, ld_wait_tok};
            else if (gc == CNT_WAIT_TOK_EXEC)     assign v = {15'd0, ev_wait_tok};
            else if (gc == CNT_WAIT_TOK_STORE)    assign v = {15'd0, st_wait_tok};
            else if (gc == CNT_WAIT_EXEC_WEIGHTS) assign v = {15'd0, ev_wait_weights};
            else if (gc == CNT_WAIT_EXEC_OBUF)    assign v = {15'd0, ev_wait_obuf};
            else if (gc == CNT_WAIT_EXEC_UNIT)    assign v = {15'd0, ev_wait_unit};
            else if (gc == CNT_MODE_SWITCHES)     assign v = {15'd0, ev_mode_switch};
            else if (gc == CNT_BYPASS_WORDS)      assign v = {14'd0, ev_bypass};
            else if (gc == CNT_PATH2_RESULTS)     assign v = {8'd0, ev_path2};
            else if (gc >= CNT_BUSY_FW && gc < CNT_BUSY_FW + 4)
                assign v = {15'd0, ev_row[gc - CNT_BUSY_FW]};
            else if (gc == CNT_IDLE_PE_SHAPE)     assign v = ev_idle_shape;
            // a multicast flit carrying w SPM words and delivered d times saves d - w SPM reads
            // (a packed H flit, two rows to two cores, saves none; a flit without a
            // destination is an error, counted as no saving)
            else if (gc == CNT_NOC_MCAST_SAVED)
                assign v = {14'd0, h_saved[1:0]} + {14'd0, h_saved[3:2]}
                         + {13'd0, nv_deliv - {2'd0, nv_flit && nv_deliv != 3'd0}};
            else if (gc >= CNT_NOC_H_LINK0 && gc < CNT_NOC_H_LINK0 + 4)
                assign v = {15'd0, nh_link[gc - CNT_NOC_H_LINK0]};
            else if (gc >= CNT_NOC_V_LINK0 && gc < CNT_NOC_V_LINK0 + 4)
                assign v = {15'd0, nv_link[gc - CNT_NOC_V_LINK0]};
            else if (gc == CNT_DRAIN_BUSY)        assign v = {15'd0, ev_drain_busy};
            else if (gc == CNT_BUSY_LOAD)         assign v = {15'd0, busy_l};
            else if (gc == CNT_BUSY_STORE)        assign v = {15'd0, busy_s};
            else if (gc == CNT_DRAIN_STALL)       assign v = {15'd0, ev_drain_stall};
            else if (gc == CNT_MACS_ZERO)         assign v = ev_macs_zero;
            else if (gc == CNT_FILL_WORDS)        assign v = {14'd0, ld_cnt_fill};
            else if (gc == CNT_SPM_COPY_WORDS)    assign v = {14'd0, ld_cnt_copy};
            else if (gc == CNT_VEC_BUSY)          assign v = {15'd0, ev_vec_busy};
            else if (gc == CNT_VEC_RD_WORDS)      assign v = {15'd0, ev_vec_rd};
            else if (gc == CNT_VEC_WR_WORDS)      assign v = {15'd0, ev_vec_wr};
            else                                  assign v = 16'd0;
            if (gc >= CNT_DRAM_RD_PROG && gc <= CNT_DRAM_WR_BURSTS) begin : g_dyn
                assign cnt_dyn[gc*16 +: 16] = v;
                assign cnt_sta[gc*16 +: 16] = 16'd0;
            end else begin : g_sta
                assign cnt_dyn[gc*16 +: 16] = 16'd0;
                assign cnt_sta[gc*16 +: 16] = v;
            end
        end
    endgenerate
    assign cnt_inc = cnt_sta | cnt_dyn;
endmodule
`default_nettype wire
