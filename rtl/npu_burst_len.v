`default_nettype none
// npu_burst_len: length of the next AXI-like burst, the one rule shared by the fetch unit and both
// DMA engines: the beats still wanted, at most MAX_BURST, and never across a 4 KiB line (AXI).
// Beats are 4S*BEAT_WORDS bytes (both powers of two), so the beats left before the line are a
// shift (docs/memory.md "Words and beats": bursts count DRAM beats, not SPM words).
//
// Registered (issue 7): the rule (a 12-bit subtract and two 16-bit minimums, 16 levels) used to
// sit in series with the owner's address/remaining-beats arithmetic and the AR handshake, the
// deepest path of fetch (43-47 levels) and of both DMA address generators (30). The result is
// now a register computed from the owner's registers: `ok` says it belongs to their current
// values. The owner raises `upd` in every cycle in which it changes addr or want, so `ok` is 0
// in the next cycle (the recomputation) and 1 from the one after: an engine issues at most one
// burst every other cycle. That costs nothing in steady state (a burst holds the data channel
// for its beats plus the DRAM's per-burst cost, >= 2 cycles) and one cycle at the start of an
// instruction or program.
module npu_burst_len #(
    parameter S         = 8,
    parameter MAX_BURST = 16,
    parameter BEAT_WORDS = 1       // SPM words per DRAM beat
) (
    input  wire        clk,
    input  wire        rst_n,
    input  wire [11:0] addr,     // low bits of the burst's byte address
    input  wire [15:0] want,     // beats still wanted (>= 1)
    input  wire        upd,      // the owner changes addr or want at this clock edge
    output reg  [15:0] len,      // beats in this burst
    output reg         whole,    // len == want: the burst takes every wanted beat
    output reg         ok        // len/whole belong to the current addr/want
);
    localparam integer LB = $clog2(4 * S * BEAT_WORDS);   // log2 bytes per DRAM beat
    localparam [31:0] MAXB32 = MAX_BURST;
    localparam [15:0] MAXB16 = MAXB32[15:0];
    wire [12:0] to4k = (13'd4096 - {1'b0, addr}) >> LB;   // beats before the 4 KiB line
    wire [15:0] lmax = (MAXB16 < {3'd0, to4k}) ? MAXB16 : {3'd0, to4k};
    always @(posedge clk) begin
        len   <= (want < lmax) ? want : lmax;
        whole <= want <= lmax;
        ok    <= rst_n && !upd;
    end
endmodule
`default_nettype wire
