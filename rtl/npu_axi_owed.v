`default_nettype none
// npu_axi_owed: what the DRAM port still owes the NPU: the R beats of accepted read bursts and the
// B responses of accepted write bursts. The NPU reports `halted` only when both are zero. A start
// resets every unit, so without this a host that restarts the NPU right after an error (the fetch
// or a DMA engine stopped with bursts in flight) would have beats or responses of the old
// program arrive into the new one. After an error no engine issues a new burst (`run` low), so
// the count only falls.
// The handshakes are registered first: AR/AW fire is the arbiter's and the engines' request
// logic, and adding the 16-bit count behind it made this the NPU's deepest control path (tiny
// synthesis: 30 levels). A handshake still in the register keeps `quiet` low.
module npu_axi_owed #(
    parameter integer RD_BITS = 16,   // beats: bursts in flight x MAX_BURST, with room
    parameter integer WR_BITS = 8     // write bursts
) (
    input  wire       clk,
    input  wire       rst_n,
    input  wire       ar_fire,
    input  wire [7:0] ar_len,         // beats - 1
    input  wire       r_fire,
    input  wire       aw_fire,
    input  wire       b_fire,
    output wire       quiet
);
    reg               ar_q, r_q, aw_q, b_q;
    reg [7:0]         len_q;
    reg [RD_BITS-1:0] rd_owed;
    reg [WR_BITS-1:0] wr_owed;
    wire [RD_BITS-1:0] ar_beats = {{(RD_BITS-8){1'b0}}, len_q} + {{(RD_BITS-1){1'b0}}, 1'b1};
    always @(posedge clk) begin
        if (!rst_n) begin
            ar_q <= 1'b0; r_q <= 1'b0; aw_q <= 1'b0; b_q <= 1'b0; len_q <= 8'd0;
            rd_owed <= 0;
            wr_owed <= 0;
        end else begin
            ar_q <= ar_fire; r_q <= r_fire; aw_q <= aw_fire; b_q <= b_fire; len_q <= ar_len;
            rd_owed <= rd_owed + (ar_q ? ar_beats : {RD_BITS{1'b0}}) - {{(RD_BITS-1){1'b0}}, r_q};
            wr_owed <= wr_owed + {{(WR_BITS-1){1'b0}}, aw_q} - {{(WR_BITS-1){1'b0}}, b_q};
        end
    end
    assign quiet = rd_owed == 0 && wr_owed == 0 && !ar_q && !aw_q;

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (r_q && rd_owed == 0 && !ar_q) `NPU_ASSERT_FAIL("DRAM port: R beat not owed")
        if (b_q && wr_owed == 0 && !aw_q) `NPU_ASSERT_FAIL("DRAM port: B response not owed")
    end
`endif
endmodule
