`default_nettype none
// npu_dma_align: the LOAD engine's realigner (docs/memory.md "LOAD"). Turns the DRAM beat stream
// of a LOAD (the beats of its runs, in order) into the SPM words of its rows: word = the `len`
// bytes (1..B) at byte `off` of the current beat, continuing into the next beat when
// off + len > B, shifted to lane 0; bytes past len are zero.
//
// Contract. The owner presents one word at a time (`req` with off, len, keep; constant until
// `out_vld && out_rdy`). `keep` says whether the rest of the beat the word ends in belongs to
// the next word (inside a row, and between the rows of a contiguous run); 0 at the end of a
// run: its last beat is dropped and the next word starts in a fresh beat. A beat is taken
// (`in_rdy`, which does not depend on `in_vld`) when the word needs one:
//  - the word lies in the held beat (lo):                      emitted from lo, no beat taken;
//  - the word ends in the next beat (or nothing is held and it
//    lies in one beat):                                        emitted with the beat, which is
//                                                              then held;
//  - nothing is held and the word needs two beats (an
//    unaligned run's first word):                              the first beat is held, no word.
// So a beat-aligned row (off = 0) takes one beat per word as the old engine did, long unaligned
// rows one beat per word, and short rows sharing a beat one word per cycle without a beat.
// `clr` (a new instruction) drops the held beat.
// Split words (`cut` != 0, the LOAD's two one-word rows per chunk): the word's first `cut` bytes
// come out on out_data and the rest (len - cut bytes, from byte off + cut) on out_hi, each from
// lane 0; a second shifter beside the first, not after it, so the split adds no depth.
module npu_dma_align #(
    parameter integer S = 8
) (
    input  wire            clk,
    input  wire            rst_n,
    input  wire            clr,
    // the word wanted
    input  wire            req,
    input  wire [$clog2(4*S)-1:0] off,   // byte of the word's first element in its first beat
    input  wire [$clog2(4*S):0]   len,   // bytes, 1..B
    input  wire            keep,         // the next word continues in the same byte stream
    input  wire [$clog2(4*S):0]   cut,   // 0: one word; else the bytes of out_data (< len)
    // beats
    input  wire            in_vld,
    output wire            in_rdy,
    input  wire [32*S-1:0] in_data,
    // words
    output wire            out_vld,
    input  wire            out_rdy,
    output wire [32*S-1:0] out_data,
    output wire [32*S-1:0] out_hi,       // cut != 0: bytes cut..len-1 of the word, from lane 0
    output wire            out_uses_in   // an emitted word includes the incoming beat (registered
                                         // state only: the owner gates a failed beat's word
                                         // without the in_rdy path)
);
    localparam integer B  = 4 * S;
    localparam integer WB = 32 * S;
    localparam integer LB = $clog2(B);
    localparam [LB:0]  BL = B[LB:0];

    reg          lo_vld;
    reg [WB-1:0] lo;

    wire [LB:0] e      = {1'b0, off} + len;          // end of the word, from its first beat
    wire        two    = e > BL;                     // the word ends in the beat after its first
    wire        need   = !lo_vld || two;             // it needs a beat from the stream
    wire        pre    = !lo_vld && two;             // hold the first of its two beats first
    assign out_vld = req && !pre && (!need || in_vld);
    assign in_rdy  = req && (pre || (need && out_rdy));
    wire   in_fire = in_vld && in_rdy;
    assign out_uses_in = need;
    wire   fire    = out_vld && out_rdy;

    // the 2B-byte window {next beat, first beat} shifted down by off bytes; the first beat is
    // the held one, or the incoming one when nothing is held (the word then lies in it alone)
    wire [WB-1:0]   first = lo_vld ? lo : in_data;
    // verilator lint_off UNUSEDSIGNAL
    wire [2*WB-1:0] win   = {in_data, first} >> {off, 3'b000};   // a word is its low B bytes
    // verilator lint_on UNUSEDSIGNAL
    // the byte masks as one comparison per byte (a shifted-and-decremented mask ripples: 69
    // levels at 64-byte beats)
    wire [LB:0]     len0  = (cut != {(LB+1){1'b0}}) ? cut : len;
    wire [LB:0]     len1  = len - cut;
    // verilator lint_off UNUSEDSIGNAL
    wire [LB+1:0]   off1  = {2'b00, off} + {1'b0, cut};
    wire [2*WB-1:0] win1  = {in_data, first} >> {off1, 3'b000};
    // verilator lint_on UNUSEDSIGNAL
    genvar k;
    generate
        for (k = 0; k < B; k = k + 1) begin : g_byte
            localparam [LB:0] K = k;
            assign out_data[k*8 +: 8] = (K < len0) ? win[k*8 +: 8] : 8'd0;    // bytes < len0
            assign out_hi[k*8 +: 8]   = (K < len1) ? win1[k*8 +: 8] : 8'd0;   // bytes < len - cut
        end
    endgenerate

    always @(posedge clk) begin
        if (in_fire) lo <= in_data;
        if (!rst_n || clr)  lo_vld <= 1'b0;
        else if (pre)       lo_vld <= lo_vld || in_fire;
        else if (fire)      lo_vld <= keep && (e != BL);   // the beat it ends in has bytes left
    end

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n) begin
        if (req && (len == {(LB+1){1'b0}} || len > BL)) `NPU_ASSERT_FAIL("realigner word length not in 1..B")
        if (fire && pre) `NPU_ASSERT_FAIL("realigner emits a word whose first beat is not held")
        if (req && cut >= len && cut != {(LB+1){1'b0}}) `NPU_ASSERT_FAIL("realigner cut not inside the word")
    end
`endif
endmodule
`default_nettype wire
