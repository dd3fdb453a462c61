`default_nettype none
// npu_drain_pack: one stream of a packed DRAIN (docs/isa.md "DRAIN", pack): the lanes left over
// from the stream's last words (carry, c lanes), then the first n 32-bit lanes of row a. The first
// K = (c + n) / S whole words of S lanes go out on words (word j = lanes jS..jS+S-1), the lanes
// after them are the next carry. Combinational; the drain engine (npu_exec_drain) holds the
// carry and the stream's position.
//   MAXN: the longest row (lanes): 2S-1 for a plain stream, S for a skinny one;
//   OW:   words out, (S-1 + MAXN) / S (2 at MAXN = 2S-1, 1 at MAXN = S).
// Why lanes: the rows are int32 and each row starts on a lane, so the shifts are by whole lanes
// (c lanes, not a byte shifter), and a stream that ends on a word leaves no carry.
module npu_drain_pack #(
    parameter S    = 8,
    parameter MAXN = 2 * S - 1,
    parameter OW   = (S - 1 + MAXN) / S
) (
    input  wire [32*S-1:0]      carry,
    input  wire [$clog2(S)-1:0] c,
    input  wire [5:0]           n,
    input  wire [32*MAXN-1:0]   a,
    output wire [32*S*OW-1:0]   words,
    output wire [1:0]           k,
    output wire [32*S-1:0]      rest
);
    localparam L  = S * (OW + 1);            // lanes of the window: >= S-1 + MAXN
    localparam LW = 32 * L;
    localparam LS = $clog2(S);

    // lane mask: the first cnt lanes
    function [LW-1:0] first_lanes(input [6:0] cnt);
        integer i;
        begin
            first_lanes = {LW{1'b0}};
            for (i = 0; i < L; i = i + 1)
                if (i < cnt) first_lanes[32*i +: 32] = 32'hFFFF_FFFF;
        end
    endfunction
    wire [6:0]    c7  = {{(7-LS){1'b0}}, c};
    wire [6:0]    n7  = {1'b0, n};
    wire [LW-1:0] cw  = {{(LW-32*S){1'b0}}, carry} & first_lanes(c7);
    wire [LW-1:0] aw  = {{(LW-32*MAXN){1'b0}}, a} & first_lanes(n7);
    wire [LW-1:0] win = cw | (aw << {c7, 5'd0});
    wire [6:0]    tot = c7 + n7;
    wire [6:0]    kk  = tot >> LS;
    assign k     = kk[1:0];
    assign words = win[0 +: 32*S*OW];
    wire [LW-1:0] sh = win >> {kk, {(LS+5){1'b0}}};   // K words of 32 S bits
    assign rest  = sh[0 +: 32*S];
    wire unused = &{1'b0, sh[LW-1:32*S], kk[6:2]};
endmodule
`default_nettype wire
