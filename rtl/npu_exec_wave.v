`default_nettype none
`include "npu_assert.vh"
// npu_exec_wave: the wave streamer of npu_exec: the A rows of the issued WAVEs, SPM -> the two
// H channels (-> LBUF_H of each core; npu_exec_inject pops them into the array).
//   in:  issue (a WAVE issues) with its bcast and a_hi flags, per stream position start
//        addresses and SPM row stride (npu_exec_decode's wv_*); the wave queue's write slot, its
//        two slots' array modes and per set row counts (kept once, in npu_exec_inject); the SPM A
//        ports' grants and data; the H channels' ready.
//   out: the four SPM A read ports (one per stream position), the H channel flits; busy (a
//        read or flit in flight), progress (a row read granted), waves (issued, not fully
//        read: at most the two waves of the wave queue, npu_exec's issue limit).
// It keeps the streaming fields of the (at most two) waves issued and not yet streamed, in the
// wave queue's slots (written at wq_wr, as npu_exec_inject's), and streams them in issue order.
module npu_exec_wave #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    // verilator lint_off UNUSEDPARAM
    parameter SPM_WORDS = 4096       // the checks only (NPU_ASSERTS)
    // verilator lint_on UNUSEDPARAM
) (
    input  wire                  clk,
    input  wire                  rst_n,
    input  wire                  issue,
    input  wire                  wv_bc,
    input  wire                  wv_ahi,
    input  wire [4*SPM_AW-1:0]   wv_sa,
    input  wire [15:0]           wv_stride,
    input  wire                  wq_wr,        // the wave queue slot the next issued wave takes
    input  wire [2*2-1:0]        wq_modes,     // per slot: array mode
    input  wire [2*64-1:0]       wq_lens,      // per slot: rows per set
    output wire                  busy,
    output wire                  progress,
    output wire [1:0]            waves,
    output wire [3:0]            rda_req,      // one A port per stream position
    output wire [4*SPM_AW-1:0]   rda_addr,
    input  wire [3:0]            rda_gnt,
    input  wire [4*32*S-1:0]     rda_data,
    // two H channels: [0] = L (LBUF_H of cores 0/2), [1] = R (cores 1/3); the low endpoint of a
    // channel (core 0/1) keeps lanes 0..S-1 of a flit, the high one (core 2/3) lanes S..2S-1
    output wire [1:0]            h_vld,
    output wire [7:0]            h_gid,        // per channel: core bitmask of its destinations
    output wire [2*32*S-1:0]     h_data,
    output wire [1:0]            h_two,        // the flit carries two SPM words (two rows)
    input  wire [1:0]            h_rdy
);
`include "npu_defs.vh"
    localparam WB = 32 * S;          // SPM word bits

    // the waves issued and not streamed: written at wq_wr, streamed from wq_st
    reg  [1:0]   wq_unstreamed;
    reg          wq_st;
    reg          wq_ahi  [0:1];      // a_hi: every core takes A lanes S..2S-1
    reg          wq_bc   [0:1];      // bcast: position 0 reads each row once, the L flit carries it twice
    reg  [4*SPM_AW-1:0] wq_sa [0:1]; // per stream position: SPM address of its first row
    reg  [15:0]  wq_str  [0:1];
    reg  [15:0]  st_t;
    reg  [SPM_AW-1:0] st_off;        // st_t * row stride (mod the SPM size)
    reg  [4*SPM_AW-1:0] st_addr_r;   // per position: wq_sa[wq_st] + st_off (registered)
    reg  [3:0]   st_done;

    // streamer: slot t reads row t of every set that has one, all in the same cycle, one SPM read
    // port each, so each sub-array gets a row per cycle (npu_exec_inject pops a slot per cycle).
    // Sets are mapped to four stream positions, which fix the H channel and the flit half:
    //   p0 = channel L low (core 0)   p1 = L high (core 2)   p2 = R low (core 1)   p3 = R high (core 3)
    //   FW : set 0 -> p0 as a full flit (lanes 0..S-1 to core 0, S..2S-1 to core 2)
    //   HSW: set 0 -> p0, set 1 -> p1, packed into one L flit (k <= S: each row is S lanes)
    //   VSW: set 0 -> p0 full on L, set 1 -> p2 full on R
    //   ISW: set j -> p j; L packs sets 0/1, R packs sets 2/3
    // So one flit per slot and channel; a packed flit carries two SPM words (h_two). A position
    // refused by the SPM retries; the slot ends when every position of it was granted.
    function [3:0] pos_on(input [1:0] md);
        case (md)
            MODE_FW:  pos_on = 4'b0001;
            MODE_HSW: pos_on = 4'b0011;
            MODE_VSW: pos_on = 4'b0101;
            default:  pos_on = 4'b1111;
        endcase
    endfunction
    // the set that position p carries (for positions the mode uses)
    function [1:0] pos_set(input [1:0] md, input integer p);
        pos_set = (md == MODE_VSW && p == 2) ? 2'd1 : p[1:0];
    endfunction
    wire        st_act  = wq_unstreamed != 2'd0;
    wire [1:0]  st_mode = wq_st ? wq_modes[3:2] : wq_modes[1:0];
    wire [63:0] st_len  = wq_st ? wq_lens[127:64] : wq_lens[63:0];
    wire        st_ahi  = wq_ahi[wq_st];
    wire        st_bc   = wq_bc[wq_st];
    wire        st_full = st_mode == MODE_FW || st_mode == MODE_VSW;
    wire [3:0]  st_on   = st_bc ? 4'b0001 : pos_on(st_mode);
    wire [3:0]  st_rdy;
    wire [3:0]  rda_idle_p;
    wire [3:0]  st_psets, st_fire;
    wire [4*SPM_AW-1:0] st_addr;
    wire [4*4-1:0] st_otag;         // per position: {dup, pair, ahi, full} of its head flit word
    wire [4*32*S-1:0] st_odata;
    wire [3:0]  st_ovld, st_ordy;
    genvar p;
    generate
        for (p = 0; p < 4; p = p + 1) begin : g_pos
            wire [1:0] sj = pos_set(st_mode, p);
            assign st_psets[p] = st_on[p] && st_t < st_len[sj*16 +: 16];
            wire pend = st_act && st_psets[p] && !st_done[p];
            assign st_addr[p*SPM_AW +: SPM_AW] = st_addr_r[p*SPM_AW +: SPM_AW];
            // positions 0/2 carry the channel's flit; pair = its high position has a row too
            wire pair;
            if (p == 0 || p == 2) begin : g_pair
                assign pair = st_psets[p + 1];
            end else begin : g_nopair
                assign pair = 1'b0;
            end
            npu_spm_reader #(.AW(SPM_AW), .WB(WB), .GW(4), .ZEROS(0)) u_rda (
                .clk(clk), .rst_n(rst_n),
                .req_vld(pend), .req_addr(st_addr[p*SPM_AW +: SPM_AW]), .req_zero(1'b0),
                .req_gid({st_bc, pair, st_ahi, st_full}), .req_rdy(st_rdy[p]),
                .rd_req(rda_req[p]), .rd_addr(rda_addr[p*SPM_AW +: SPM_AW]), .rd_gnt(rda_gnt[p]),
                .rd_data(rda_data[p*WB +: WB]),
                .out_vld(st_ovld[p]), .out_gid(st_otag[p*4 +: 4]), .out_data(st_odata[p*WB +: WB]),
                .out_rdy(st_ordy[p]), .idle(rda_idle_p[p])
            );
            assign st_fire[p] = pend && st_rdy[p];
        end
        // flit assembly per channel c: the low position's word heads the flit; a packed flit
        // (HSW/ISW) takes the S lanes of each row (a_hi: lanes S..2S-1) into its half; a bcast
        // flit (dup) carries its one row in both halves (one SPM word, two deliveries)
        for (p = 0; p < 2; p = p + 1) begin : g_hch
            localparam integer LO = 2 * p, HI = 2 * p + 1;
            wire [WB-1:0] wl = st_odata[LO*WB +: WB];
            wire [WB-1:0] wh = st_odata[HI*WB +: WB];
            wire full = st_otag[LO*4];
            wire ahi  = st_otag[LO*4 + 1];
            wire pair = st_otag[LO*4 + 2];
            wire dup  = st_otag[LO*4 + 3];
            wire two  = !full && pair;
            wire [WB/2-1:0] lo_half = ahi ? wl[WB/2 +: WB/2] : wl[0 +: WB/2];
            wire [WB/2-1:0] hi_half = full ? wl[WB/2 +: WB/2] : dup ? lo_half :
                                      !pair ? {WB/2{1'b0}} : ahi ? wh[WB/2 +: WB/2] : wh[0 +: WB/2];
            assign h_vld[p] = st_ovld[LO] && (!two || st_ovld[HI]);
            assign h_gid[p*4 +: 4] = (4'b0001 << p) | ((full || pair || dup) ? (4'b0100 << p) : 4'b0000);
            assign h_data[p*WB +: WB] = {hi_half, lo_half};
            assign h_two[p] = two;
            assign st_ordy[LO] = h_vld[p] && h_rdy[p];
            assign st_ordy[HI] = h_vld[p] && h_rdy[p] && two;
        end
    endgenerate
    wire rda_idle = &rda_idle_p;
    wire [3:0] st_pend = {4{st_act}} & st_psets & ~st_done;
    wire st_slot_end = st_act && (st_pend & ~st_fire) == 4'd0;
    wire st_last = st_slot_end && st_t == st_len[15:0] - 16'd1;
    // The running addresses are registered (synthesis: no adder in front of the SPM grants and
    // the slot logic behind them); the three candidates come from registers and the late slot
    // end only selects: next wave's first rows (the entry a WAVE may be writing), + stride, or
    // unchanged (a WAVE written into an idle streamer: st_off is 0 there).
    wire [4*SPM_AW-1:0] sa_new  = (issue && wq_wr == ~wq_st) ? wv_sa : wq_sa[~wq_st];
    wire [4*SPM_AW-1:0] sa_same = (issue && wq_wr == wq_st) ? wv_sa : st_addr_r;
    reg  [4*SPM_AW-1:0] sa_step;
    integer sax;
    always @(*)
        for (sax = 0; sax < 4; sax = sax + 1)
            sa_step[sax*SPM_AW +: SPM_AW] = st_addr_r[sax*SPM_AW +: SPM_AW] + wq_str[wq_st][SPM_AW-1:0];
    always @(posedge clk) st_addr_r <= st_last ? sa_new : st_slot_end ? sa_step : sa_same;

    always @(posedge clk) begin
        if (!rst_n) begin
            wq_unstreamed <= 0; wq_st <= 0;
            st_t <= 0; st_off <= 0; st_done <= 0;
        end else begin
            if (issue) begin
                wq_bc[wq_wr]   <= wv_bc;
                wq_ahi[wq_wr]  <= wv_ahi;
                wq_sa[wq_wr]   <= wv_sa;
                wq_str[wq_wr]  <= wv_stride;
            end
            wq_unstreamed <= wq_unstreamed + {1'b0, issue} - {1'b0, st_last};
            if (st_last) begin
                wq_st   <= ~wq_st;
                st_t    <= 0;
                st_off  <= 0;
                st_done <= 0;
            end else if (st_slot_end) begin
                st_t    <= st_t + 16'd1;
                st_off  <= st_off + wq_str[wq_st][SPM_AW-1:0];
                st_done <= 0;
            end else begin
                st_done <= st_done | st_fire;
            end
        end
    end

    assign busy     = !rda_idle;
    assign progress = |st_fire;
    assign waves    = wq_unstreamed;

`ifdef NPU_ASSERTS
    integer ax;
    localparam [33:0] SPM_WORDS34 = {2'd0, SPM_WORDS[31:0]};
    always @(posedge clk) if (rst_n) begin
        for (ax = 0; ax < 4; ax = ax + 1)
            if (st_act && st_addr_r[ax*SPM_AW +: SPM_AW] != wq_sa[wq_st][ax*SPM_AW +: SPM_AW] + st_off)
                `NPU_ASSERT_FAIL("registered stream address differs")
        for (ax = 0; ax < 4; ax = ax + 1)
            if (rda_req[ax] && {{(34-SPM_AW){1'b0}}, rda_addr[ax*SPM_AW +: SPM_AW]} >= SPM_WORDS34)
                `NPU_ASSERT_FAIL("wave stream address past the SPM")
        // a packed flit's high word belongs to the same slot as its low word
        if ((st_ordy[1] && !st_ordy[0]) || (st_ordy[3] && !st_ordy[2]))
            `NPU_ASSERT_FAIL("H flit high half popped without its low half")
    end
`endif
endmodule
`default_nettype wire
