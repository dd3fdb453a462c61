`default_nettype none
// npu_axi_rd_arb: two read masters (0 = instruction fetch, 1 = LOAD DMA) onto one AXI-like
// read port. AR: round-robin (the master that did not win last goes first), so neither master
// starves; ar_id = master index. Once an address is offered it is held until accepted (the choice
// is locked while m_ar_vld && !m_ar_rdy), as AXI requires stable payloads. R: beats are routed by
// r_id; m_r_rdy is the ready of the addressed master (combinational through r_id; the DRAM model's
// outputs are registered, so there is no loop). Beats with an unknown id are dropped.
module npu_axi_rd_arb #(
    parameter integer DW = 256
) (
    input  wire          clk,
    input  wire          rst_n,
    // master 0 (fetch)
    input  wire          s0_ar_vld,
    output wire          s0_ar_rdy,
    input  wire [31:0]   s0_ar_addr,
    input  wire [7:0]    s0_ar_len,
    output wire          s0_r_vld,
    input  wire          s0_r_rdy,
    output wire [DW-1:0] s0_r_data,
    output wire          s0_r_last,
    output wire          s0_r_resp,
    // master 1 (LOAD DMA)
    input  wire          s1_ar_vld,
    output wire          s1_ar_rdy,
    input  wire [31:0]   s1_ar_addr,
    input  wire [7:0]    s1_ar_len,
    output wire          s1_r_vld,
    input  wire          s1_r_rdy,
    output wire [DW-1:0] s1_r_data,
    output wire          s1_r_last,
    output wire          s1_r_resp,
    // to DRAM
    output wire          m_ar_vld,
    input  wire          m_ar_rdy,
    output wire [31:0]   m_ar_addr,
    output wire [7:0]    m_ar_len,
    output wire [1:0]    m_ar_id,
    input  wire          m_r_vld,
    output wire          m_r_rdy,
    input  wire [DW-1:0] m_r_data,
    input  wire          m_r_last,
    input  wire [1:0]    m_r_id,
    input  wire          m_r_resp
);
    reg prio;     // master preferred when both request (toggles to the loser after a grant)
    reg locked;   // an address was offered last cycle and not accepted: keep lock_sel
    reg lock_sel;

    wire free_sel = (s0_ar_vld && s1_ar_vld) ? prio : s1_ar_vld;
    wire sel      = locked ? lock_sel : free_sel;

    assign m_ar_vld  = sel ? s1_ar_vld : s0_ar_vld;
    assign m_ar_addr = sel ? s1_ar_addr : s0_ar_addr;
    assign m_ar_len  = sel ? s1_ar_len : s0_ar_len;
    assign m_ar_id   = {1'b0, sel};
    assign s0_ar_rdy = m_ar_rdy && !sel;
    assign s1_ar_rdy = m_ar_rdy && sel;
    wire   ar_fire   = m_ar_vld && m_ar_rdy;

    always @(posedge clk) begin
        if (!rst_n) begin
            prio     <= 1'b0;
            locked   <= 1'b0;
            lock_sel <= 1'b0;
        end else begin
            locked   <= m_ar_vld && !m_ar_rdy;
            lock_sel <= sel;
            if (ar_fire) prio <= !sel;
        end
    end

    // R routing by id.
    wire to0 = (m_r_id == 2'd0);
    wire to1 = (m_r_id == 2'd1);
    assign s0_r_vld  = m_r_vld && to0;
    assign s1_r_vld  = m_r_vld && to1;
    assign m_r_rdy   = to0 ? s0_r_rdy : (to1 ? s1_r_rdy : 1'b1);
    assign s0_r_data = m_r_data;
    assign s1_r_data = m_r_data;
    assign s0_r_last = m_r_last;
    assign s1_r_last = m_r_last;
    assign s0_r_resp = m_r_resp;
    assign s1_r_resp = m_r_resp;

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // DRAM AR: the lock keeps the offered address until accepted (a master may withdraw only on an
    // error stop, so the payload is checked while valid stays high). DRAM R, checked against the
    // bursts accepted on AR (this module sees both and is reset only with the NPU, not between
    // runs): a beat needs an outstanding burst of its id (ids are 0 and 1), and r_last marks
    // exactly the last beat of the oldest burst of that id. A shadow queue of burst lengths per
    // id (OQ entries; fetch has at most 2 MAX_BURST beats in flight, a DMA engine MAX_OUT bursts).
    localparam integer OQ = 64;
    reg        pend;
    reg [31:0] addr_q;
    reg [7:0]  len_q;
    reg [1:0]  id_q;
    reg [7:0]  olen [0:2*OQ-1];    // {id, slot} -> ar_len of an outstanding burst
    reg [5:0]  owp0, owp1, orp0, orp1;
    reg [6:0]  onum0, onum1;       // outstanding bursts per id
    reg [7:0]  obc0, obc1;         // beats received of the oldest burst per id
    wire       a_fire_a = m_ar_vld && m_ar_rdy;
    wire       r_fire_a = m_r_vld && m_r_rdy;
    wire       rid1     = m_r_id[0];
    wire [6:0] onum_r   = rid1 ? onum1 : onum0;
    wire [7:0] obc_r    = rid1 ? obc1 : obc0;
    wire [7:0] olen_r   = olen[rid1 ? {1'b1, orp1} : {1'b0, orp0}];
    always @(posedge clk) begin
        pend   <= rst_n && m_ar_vld && !m_ar_rdy;
        addr_q <= m_ar_addr;
        len_q  <= m_ar_len;
        id_q   <= m_ar_id;
        if (!rst_n) begin
            owp0 <= 6'd0; owp1 <= 6'd0; orp0 <= 6'd0; orp1 <= 6'd0;
            onum0 <= 7'd0; onum1 <= 7'd0; obc0 <= 8'd0; obc1 <= 8'd0;
        end else begin
            if (a_fire_a) begin
                olen[{m_ar_id[0], m_ar_id[0] ? owp1 : owp0}] <= m_ar_len;
                if (m_ar_id[0]) owp1 <= owp1 + 6'd1; else owp0 <= owp0 + 6'd1;
            end
            if (r_fire_a && (to0 || to1)) begin
                if (m_r_last) begin
                    if (rid1) begin orp1 <= orp1 + 6'd1; obc1 <= 8'd0; end
                    else      begin orp0 <= orp0 + 6'd1; obc0 <= 8'd0; end
                end else begin
                    if (rid1) obc1 <= obc1 + 8'd1; else obc0 <= obc0 + 8'd1;
                end
            end
            onum0 <= onum0 + {6'd0, a_fire_a && !m_ar_id[0]} - {6'd0, r_fire_a && to0 && m_r_last};
            onum1 <= onum1 + {6'd0, a_fire_a && m_ar_id[0]} - {6'd0, r_fire_a && to1 && m_r_last};
        end
    end
    always @(posedge clk) if (rst_n) begin
        if (pend && m_ar_vld && (m_ar_addr != addr_q || m_ar_len != len_q || m_ar_id != id_q))
            `NPU_ASSERT_FAIL("DRAM AR payload changed before ready")
        if (m_r_vld && !to0 && !to1) `NPU_ASSERT_FAIL("DRAM R beat with an unknown id")
        if (m_r_vld && (to0 || to1) && onum_r == 7'd0)
            `NPU_ASSERT_FAIL("DRAM R id of no outstanding read (R id not outstanding)")
        if (r_fire_a && (to0 || to1) && onum_r != 7'd0 && m_r_last != (obc_r == olen_r))
            `NPU_ASSERT_FAIL("DRAM r_last on a wrong beat of its burst")
        if (a_fire_a && (m_ar_id[0] ? onum1 : onum0) == OQ[6:0])
            `NPU_ASSERT_FAIL("more DRAM reads outstanding than the checker tracks")
    end
`endif
endmodule
`default_nettype wire
