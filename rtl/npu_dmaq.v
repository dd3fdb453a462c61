`default_nettype none
// npu_dmaq: issue logic of the LOAD or the STORE queue. Pops the dependency tokens the head
// instruction asks for, hands a LOAD/STORE to its DMA engine and pushes tokens when the engine
// reports completion. SYNC instructions only move tokens.
// INFLIGHT descriptors may be in the engine at once (1; 2: the LOAD engine with LOAD_PIPELINE,
// which takes the next descriptor while the last one's data still arrives, npu_dma_load, and the
// STORE engine with STORE_PIPELINE, which takes it while the last one's B responses are due,
// npu_dma_store). Their push tokens and
// pcs wait in a small FIFO: the engine completes its descriptors in order, one `dma_done` each,
// so each done pops the oldest and the token pushes stay in program order. A SYNC issues only
// with nothing in flight (docs/isa.md section 3: it waits for every earlier LOAD/STORE).
// pc_cur (the error and deadlock pc) is the oldest descriptor in flight: an engine error
// belongs to it (npu_dma_load and npu_dma_store report a failed check of the next one only
// after the last one is done, so the next one is the oldest by then).
module npu_dmaq #(
    parameter integer INFLIGHT = 1    // 1 or 2
) (
    input  wire         clk,
    input  wire         rst_n,
    input  wire         run,
    input  wire [7:0]   sync_op,      // OP_SYNC_L or OP_SYNC_S
    // queue head
    input  wire         q_vld,
    input  wire [127:0] q_insn,
    input  wire [31:0]  q_pc,
    output wire         q_pop,
    // tokens (a missing neighbour is tied to avail = 1 and its outputs left open)
    input  wire         prev_avail,
    input  wire         next_avail,
    output wire         pop_prev,
    output wire         pop_next,
    output wire         push_prev,
    output wire         push_next,
    // DMA engine
    output wire         cmd_vld,
    input  wire         cmd_rdy,
    output wire [127:0] cmd_insn,
    input  wire         dma_done,
    // status
    output wire         busy,
    output wire [31:0]  pc_cur,       // oldest instruction in flight, else the head
    output wire         done,
    output wire         ev_wait_tok
);
`include "npu_defs.vh"
    localparam integer CW = $clog2(INFLIGHT + 1);
    reg [31:0] pc_q;                  // the last instruction issued or waiting with nothing in
                                      // flight (pc_cur when nothing is queued)
    wire       fl_full, fl_empty;
    wire [33:0] fl_dout;              // the oldest descriptor in flight: {push_next, push_prev, pc}
    // verilator lint_off UNUSEDSIGNAL
    wire [CW-1:0] fl_count;           // full/empty suffice
    // verilator lint_on UNUSEDSIGNAL
    wire t_pop_prev  = q_insn[F_INSN_POP_PREV_LSB];
    wire t_pop_next  = q_insn[F_INSN_POP_NEXT_LSB];
    wire t_push_prev = q_insn[F_INSN_PUSH_PREV_LSB];
    wire t_push_next = q_insn[F_INSN_PUSH_NEXT_LSB];
    wire is_sync   = q_insn[F_INSN_OP_LSB +: F_INSN_OP_W] == sync_op;
    wire tokens_ok = (!t_pop_prev || prev_avail) && (!t_pop_next || next_avail);
    wire room      = is_sync ? fl_empty : !fl_full;   // a SYNC waits for every one in flight
    wire go        = run && q_vld && tokens_ok && room;
    wire issue     = go && (is_sync || cmd_rdy);
    assign q_pop     = issue;
    assign pop_prev  = issue && t_pop_prev;
    assign pop_next  = issue && t_pop_next;
    assign cmd_vld   = go && !is_sync;
    assign cmd_insn  = q_insn;
    wire sync_done   = issue && is_sync;
    wire dma_fin     = !fl_empty && dma_done;
    assign push_prev = (sync_done && t_push_prev) || (dma_fin && fl_dout[32]);
    assign push_next = (sync_done && t_push_next) || (dma_fin && fl_dout[33]);
    assign done      = sync_done || dma_fin;
    assign busy      = !fl_empty;
    assign ev_wait_tok = run && q_vld && !tokens_ok && room;
    assign pc_cur      = !fl_empty ? fl_dout[31:0] : q_vld ? q_pc : pc_q;

    npu_fifo #(.W(34), .DEPTH(INFLIGHT)) u_fl (
        .clk(clk), .rst_n(rst_n),
        .push(issue && !is_sync), .din({t_push_next, t_push_prev, q_pc}),
        .pop(dma_fin), .dout(fl_dout),
        .full(fl_full), .empty(fl_empty), .count(fl_count)
    );

    always @(posedge clk) begin
        if (!rst_n)     pc_q <= 32'd0;
        else if (issue || (q_vld && fl_empty)) pc_q <= q_pc;
    end

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (dma_done && fl_empty) `NPU_ASSERT_FAIL("DMA done without a descriptor in flight")
        if ((pop_prev && !prev_avail) || (pop_next && !next_avail))
            `NPU_ASSERT_FAIL("token popped while none is available")
        if (issue && !is_sync && fl_full && !dma_fin) `NPU_ASSERT_FAIL("DMA descriptor issued past INFLIGHT")
    end
`endif
endmodule
`default_nettype wire
