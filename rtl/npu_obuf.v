`default_nettype none
// npu_obuf: output buffer, 2S lanes of 2*ROWS 32-bit entries (two halves for double buffering; the
// half is addr / ROWS). Each lane accumulates on write: mem[a] <= acc ? mem[a] + d : d, the add
// being int32 with wrap-around (BF16 = 0) or fp32 round-to-nearest-even with FTZ (BF16 = 1,
// npu_fp_fn.vh's fn_fp32_add, one adder per lane and write port: the K waves of a bf16 tile sum in fp32,
// docs/datapath.md section 6).
// Port wr_* takes the bottom lanes of the array, port wr2_* the path (2) lanes of cores 0/1
// (HSW/ISW). Both ports writing one lane at one address in one cycle is a program error; port 1
// wins. Two row read ports (the drain reads two rows per cycle, as fast as HSW/ISW waves write
// them), registered: rd_data / rd2_data are valid the cycle after rd_en / rd2_en and hold until
// the next read; a read of an address written in the same cycle returns the old value. No
// reset: datapath only.
module npu_obuf #(
    parameter S    = 8,
    parameter ROWS = 256,
    parameter BF16 = 0
) (
    input  wire                            clk,
    input  wire [2*S-1:0]                  wr_en,
    input  wire [2*S*$clog2(2*ROWS)-1:0]   wr_addr,
    input  wire [2*S-1:0]                  wr_acc,
    input  wire [2*S*32-1:0]               wr_data,
    input  wire [2*S-1:0]                  wr2_en,
    input  wire [2*S*$clog2(2*ROWS)-1:0]   wr2_addr,
    input  wire [2*S-1:0]                  wr2_acc,
    input  wire [2*S*32-1:0]               wr2_data,
    input  wire                            rd_en,
    input  wire [$clog2(2*ROWS)-1:0]       rd_addr,
    output wire [2*S*32-1:0]               rd_data,
    input  wire                            rd2_en,
    input  wire [$clog2(2*ROWS)-1:0]       rd2_addr,
    output wire [2*S*32-1:0]               rd2_data
);
    localparam AW = $clog2(2*ROWS);
`include "npu_fp_fn.vh"

    genvar l;
    generate
        for (l = 0; l < 2*S; l = l + 1) begin : g_lane
            reg  [31:0]   mem [0:2*ROWS-1];
            reg  [31:0]   q, q2;
            wire [AW-1:0] a1 = wr_addr[l*AW +: AW];
`ifdef NPU_PLANTED_FAULT
            // Test-only planted bug (issue 6, tests/rtl/test_planted.c): path (2) -- the HSW/ISW
            // results of cores 0/1 -- lands one OBUF row too far. Never defined in real builds.
            wire [AW-1:0] a2 = wr2_addr[l*AW +: AW] + 1'b1;
`else
            wire [AW-1:0] a2 = wr2_addr[l*AW +: AW];
`endif
            wire [31:0]   d1 = wr_data[l*32 +: 32];
            wire [31:0]   d2 = wr2_data[l*32 +: 32];
            if (BF16 != 0) begin : g_fp32
                // The fp32 adds (npu_fp_fn.vh, the functions of npu_fp32_add) inside the clocked
                // block: a simulator computes them only for a write that accumulates.
                always @(posedge clk) begin
                    // Port 2 first so that port 1's write (the later assignment) wins on a clash.
                    if (wr2_en[l] && wr2_acc[l]) mem[a2] <= fn_fp32_add(mem[a2], d2);
                    else if (wr2_en[l])          mem[a2] <= d2;
                    if (wr_en[l] && wr_acc[l])   mem[a1] <= fn_fp32_add(mem[a1], d1);
                    else if (wr_en[l])           mem[a1] <= d1;
                end
            end else begin : g_int32
                always @(posedge clk) begin
                    if (wr2_en[l]) mem[a2] <= wr2_acc[l] ? mem[a2] + d2 : d2;
                    if (wr_en[l])  mem[a1] <= wr_acc[l]  ? mem[a1] + d1 : d1;
                end
            end
            always @(posedge clk) begin
                if (rd_en)     q <= mem[rd_addr];
                if (rd2_en)    q2 <= mem[rd2_addr];
            end
            assign rd_data[l*32 +: 32]  = q;
            assign rd2_data[l*32 +: 32] = q2;
        end
    endgenerate
endmodule
`default_nettype wire
