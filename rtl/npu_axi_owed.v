`default_nettype none
// npu_axi_owed: what the DRAM port still owes the NPU: the R beats of accepted read bursts and the
// B responses of accepted write bursts. The NPU reports `halted` only when both are zero. A start
// resets every unit, so without this a host that restarts the NPU right after an error (the fetch
// or a DMA engine stopped with bursts in flight) would have beats or responses of the old
// program arrive into the new one.
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
    reg [RD_BITS-1:0] rd_owed;
    reg [WR_BITS-1:0] wr_owed;
    wire [RD_BITS-1:0] ar_beats = {{(RD_BITS-8){1'b0}}, ar_len} + {{(RD_BITS-1){1'b0}}, 1'b1};
    always @(posedge clk) begin
        if (!rst_n) begin
            rd_owed <= 0;
            wr_owed <= 0;
        end else begin
            rd_owed <= rd_owed + (ar_fire ? ar_beats : {RD_BITS{1'b0}}) - {{(RD_BITS-1){1'b0}}, r_fire};
            wr_owed <= wr_owed + {{(WR_BITS-1){1'b0}}, aw_fire} - {{(WR_BITS-1){1'b0}}, b_fire};
        end
    end
    assign quiet = rd_owed == 0 && wr_owed == 0;

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (r_fire && rd_owed == 0 && !ar_fire) `NPU_ASSERT_FAIL("DRAM port: R beat not owed")
        if (b_fire && wr_owed == 0 && !aw_fire) `NPU_ASSERT_FAIL("DRAM port: B response not owed")
    end
`endif
endmodule
