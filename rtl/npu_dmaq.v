`default_nettype none
// npu_dmaq: issue logic of the LOAD or the STORE queue. Pops the dependency tokens the head
// instruction asks for, hands a LOAD/STORE to its DMA engine (one descriptor at a time) and
// pushes tokens when the engine reports completion. SYNC instructions only move tokens.
module npu_dmaq (
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
    output wire [31:0]  pc_cur,       // instruction at the head or in flight
    output wire         done,
    output wire         ev_wait_tok
);
`include "npu_defs.vh"
    reg       inflight;
    reg [31:0] pc_q;                  // pc of the descriptor in flight
    reg [1:0] push_q;                 // {push_next, push_prev} of the descriptor in flight
    wire t_pop_prev  = q_insn[F_INSN_POP_PREV_LSB];
    wire t_pop_next  = q_insn[F_INSN_POP_NEXT_LSB];
    wire t_push_prev = q_insn[F_INSN_PUSH_PREV_LSB];
    wire t_push_next = q_insn[F_INSN_PUSH_NEXT_LSB];
    wire is_sync   = q_insn[F_INSN_OP_LSB +: F_INSN_OP_W] == sync_op;
    wire tokens_ok = (!t_pop_prev || prev_avail) && (!t_pop_next || next_avail);
    wire go        = run && q_vld && tokens_ok && !inflight;
    wire issue     = go && (is_sync || cmd_rdy);
    assign q_pop     = issue;
    assign pop_prev  = issue && t_pop_prev;
    assign pop_next  = issue && t_pop_next;
    assign cmd_vld   = go && !is_sync;
    assign cmd_insn  = q_insn;
    wire sync_done   = issue && is_sync;
    wire dma_fin     = inflight && dma_done;
    assign push_prev = (sync_done && t_push_prev) || (dma_fin && push_q[0]);
    assign push_next = (sync_done && t_push_next) || (dma_fin && push_q[1]);
    assign done      = sync_done || dma_fin;
    assign busy      = inflight;
    assign ev_wait_tok = run && q_vld && !tokens_ok && !inflight;
    assign pc_cur      = (q_vld && !inflight) ? q_pc : pc_q;

    always @(posedge clk) begin
        if (!rst_n) begin
            inflight <= 1'b0; push_q <= 2'b00; pc_q <= 32'd0;
        end else begin
            if (q_vld && !inflight) pc_q <= q_pc;
            if (issue && !is_sync) begin
                inflight <= 1'b1;
                push_q   <= {t_push_next, t_push_prev};
            end else if (dma_fin) begin
                inflight <= 1'b0;
            end
        end
    end

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (dma_done && !inflight) `NPU_ASSERT_FAIL("DMA done without a descriptor in flight")
        if ((pop_prev && !prev_avail) || (pop_next && !next_avail))
            `NPU_ASSERT_FAIL("token popped while none is available")
    end
`endif
endmodule
`default_nettype wire
