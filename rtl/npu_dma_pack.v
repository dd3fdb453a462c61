`default_nettype none
// npu_dma_pack: the STORE engine's packer (docs/memory.md "STORE"). Turns the SPM words of a
// STORE's rows (in order) into the DRAM beats of its runs with their write strobes: a word's
// `len` bytes (1..B, from lane 0) go to byte `off` of the current beat, continuing into the
// next beat when off + len > B. A "word" here is any piece of up to one beat: the STORE engine
// instantiates the packer at the DRAM beat's width and, with two-word beats, hands it chunks of
// two SPM words of a row as one piece.
//
// Contract. The owner presents the word's place with it (off, len, `last`: the word ends a run;
// constant while the word waits). The current beat collects bytes (strobes = the union of the
// words' bytes) and is sent when a word reaches its end (off + len >= B) or ends the run; the
// bytes past the beat's end start the next beat. A run's last word can fill two beats (an
// unaligned end): the second is sent in the next cycle, before any other word (`pend`). A
// word is taken (`in_pop`) when it needs no beat sent or its beat is sent (`out_rdy`), so rows
// sharing a beat take one word per cycle and long rows one word and one beat per cycle. The
// output depends on the word at the head of the input (no register in between), so a
// beat-aligned row is sent as fast as the words arrive, as before. `clr` empties the beat.
module npu_dma_pack #(
    parameter integer S = 8
) (
    input  wire            clk,
    input  wire            rst_n,
    input  wire            clr,
    // words
    input  wire            in_vld,
    output wire            in_pop,
    input  wire [32*S-1:0] in_data,
    input  wire [$clog2(4*S)-1:0] off,   // byte of the beat the word's first byte goes to
    input  wire [$clog2(4*S):0]   len,   // bytes of the word, 1..B
    input  wire            last,         // the word ends a run
    // beats
    output wire            out_vld,
    input  wire            out_rdy,
    output wire [32*S-1:0] out_data,
    output wire [4*S-1:0]  out_strb
);
    localparam integer B  = 4 * S;
    localparam integer WB = 32 * S;
    localparam integer LB = $clog2(B);
    localparam [LB:0]  BL = B[LB:0];

    reg [WB-1:0] cur;       // the beat being collected (bytes outside cstrb: don't care)
    reg [B-1:0]  cstrb;
    reg          pend;      // cur is a run's second last beat, to be sent alone

    wire [LB:0]     e     = {1'b0, off} + len;
    wire            fills = e >= BL;                 // the word reaches the beat's end
    wire            done  = fills || last;           // the current beat is sent with it
    wire [2*WB-1:0] sh    = {{WB{1'b0}}, in_data} << {off, 3'b000};
    // the word's bytes in the two-beat window, [off, off + len): one comparison pair per byte
    // (a shifted-and-decremented mask ripples)
    wire [2*B-1:0]  msh;
    wire [WB-1:0]   merged;
    genvar k;
    generate
        for (k = 0; k < B; k = k + 1) begin : g_byte
            assign merged[k*8 +: 8] = msh[k] ? sh[k*8 +: 8] : cur[k*8 +: 8];
        end
        // verilator lint_off CMPCONST
        // (byte 0 is always >= off and the last never < e: constant ends of the same rule)
        for (k = 0; k < 2 * B; k = k + 1) begin : g_msh
            localparam [LB+1:0] K = k;
            assign msh[k] = (K >= {2'b00, off}) && (K < {1'b0, e});
        end
        // verilator lint_on CMPCONST
    endgenerate

    assign out_vld  = pend || (in_vld && done);
    assign out_data = pend ? cur : merged;
    assign out_strb = pend ? cstrb : (cstrb | msh[B-1:0]);
    assign in_pop   = !pend && in_vld && (!done || out_rdy);
    wire   out_fire = out_vld && out_rdy;

    always @(posedge clk) begin
        if (!rst_n || clr) begin
            pend  <= 1'b0;
            cstrb <= {B{1'b0}};
        end else if (pend) begin
            if (out_fire) begin
                pend  <= 1'b0;
                cstrb <= {B{1'b0}};
            end
        end else if (in_pop) begin
            pend  <= last && (e > BL);
            cstrb <= done ? msh[2*B-1:B] : (cstrb | msh[B-1:0]);
        end
        if (!pend && in_pop) cur <= done ? sh[2*WB-1:WB] : merged;
    end

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (in_vld && (len == {(LB+1){1'b0}} || len > BL)) `NPU_ASSERT_FAIL("packer word length not in 1..B")
        if (out_vld && out_strb == {B{1'b0}}) `NPU_ASSERT_FAIL("packer sends a beat without a byte")
        if (in_vld && !pend && (cstrb & msh[B-1:0]) != {B{1'b0}})
            `NPU_ASSERT_FAIL("packer word overlaps bytes already in its beat")
    end
`endif
endmodule
`default_nettype wire
