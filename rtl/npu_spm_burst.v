`default_nettype none
`include "npu_assert.vh"
// npu_spm_burst: the SPM burst server of LOAD_SPM (docs/isa.md, docs/memory.md "LOAD_SPM").
// The LOAD engine (npu_dma_load) runs a LOAD_SPM as a LOAD of the source's bytes (byte address
// = SPM word * B) and sends its AXI-like read bursts here instead of to the DRAM; this module
// answers them from the SPM, so the engine's address generator, realigner and transposer work
// unchanged.
// Contract (the DRAM read channel's, as the engine uses it):
//  - AR: ar_addr is a beat-aligned byte address (a beat = BW words of B = 4S bytes), ar_len the
//    beats - 1; accepted into a two-entry request FIFO (ar_rdy = not full: registered).
//  - R: the beats of the bursts in request order, BW words each (word w in bits [0, WB), w + 1
//    above), r_last on each burst's last beat; r_vld / r_rdy handshake; no error response.
//  - SPM: one read port (npu_top: read port 8, below the vector unit's, the A and stationary
//    streams' and the drain's, above the STORE's), one word per granted cycle; data the cycle
//    after the grant (rd_vld). Word addresses wrap modulo 2^SPM_AW (the SPM's size: npu_spm's banks are a power
//    of two), so a padded run past the end reads words the engine drops anyway.
// Throughput: one word per cycle while granted and the output FIFO has room: a beat per cycle at
// BW = 1, per two cycles at BW = 2 (one port). A read is issued only when the output FIFO has
// room for its beat counting the beats in flight (registered counts only: no R handshake or
// SPM grant in the request), so the FIFO never overflows; OD = 3 entries sustain a beat per
// cycle at BW = 1 (2 at BW = 2). Latency: AR accepted in cycle t, first read t + 2, first beat
// out (r_vld) t + 4.
module npu_spm_burst #(
    parameter integer S      = 8,
    parameter integer SPM_AW = 12,
    parameter integer BW     = 1      // SPM words per beat (BEAT_WORDS): 1 or 2
) (
    input  wire               clk,
    input  wire               rst_n,
    input  wire               ar_vld,
    output wire               ar_rdy,
    input  wire [31:0]        ar_addr,
    input  wire [7:0]         ar_len,
    output wire               r_vld,
    input  wire               r_rdy,
    output wire [32*S*BW-1:0] r_data,
    output wire               r_last,
    // SPM read port
    output wire               rd_req,
    output wire [SPM_AW-1:0]  rd_addr,
    input  wire               rd_gnt,
    input  wire               rd_vld,
    input  wire [32*S-1:0]    rd_data
);
    localparam integer WB  = 32 * S;
    localparam integer DWB = WB * BW;
    localparam integer LW  = $clog2(4 * S);          // log2 bytes per word
    localparam integer OD  = (BW > 1) ? 2 : 3;       // output FIFO entries (header)
    localparam integer OCW = $clog2(OD + 1);
    localparam [31:0]  OD32 = OD;
    localparam [OCW:0] OD1  = OD32[OCW:0];

    // ---- requests: a FIFO of {beats - 1, first word}
    wire              rq_full, rq_empty;
    wire [SPM_AW+7:0] rq_dout;
    // verilator lint_off UNUSEDSIGNAL
    wire [1:0]        rq_count;
    wire [31:0]       unused_addr = ar_addr;   // the bits above the SPM and below a word
    // verilator lint_on UNUSEDSIGNAL
    assign ar_rdy = !rq_full;

    // ---- the burst being read: next word, words left (<= 256 * BW)
    reg               c_act;
    reg [SPM_AW-1:0]  c_addr;
    reg [9:0]         c_left;
    wire              c_hi   = (BW > 1) && c_left[0];       // the beat's second word (BW = 2)
    wire              c_end  = (c_left == 10'd1);           // the burst's last word
    // room for a new beat in the output FIFO, with the beat in flight (registered)
    wire [OCW-1:0]    oc;
    reg               pend;                                 // a beat issued, not yet pushed
    wire              room   = ({1'b0, oc} + {{OCW{1'b0}}, pend}) < OD1;
    assign rd_req  = c_act && (c_hi || room);
    assign rd_addr = c_addr;
    wire              rd_fire = rd_req && rd_gnt;
    // the next burst: when idle, or as the last word of this one is issued
    wire              take   = !rq_empty && (!c_act || (rd_fire && c_end));
    wire [9:0]        words  = ({2'b00, rq_dout[SPM_AW +: 8]} + 10'd1) << (BW - 1);

    npu_fifo #(.W(SPM_AW + 8), .DEPTH(2)) u_rq (
        .clk(clk), .rst_n(rst_n), .push(ar_vld && !rq_full),
        .din({ar_len, ar_addr[LW +: SPM_AW]}), .pop(take),
        .dout(rq_dout), .full(rq_full), .empty(rq_empty), .count(rq_count));

    // ---- the words read: their place, one cycle behind the grant (with rd_vld)
    reg               p_hi, p_last;
    reg [WB-1:0]      lo;                                   // BW = 2: the beat's first word
    wire              push   = rd_vld && (BW == 1 || p_hi);
    wire [DWB-1:0]    beat;
    generate
        if (BW > 1) begin : g_two
            assign beat = {rd_data, lo};
        end else begin : g_one
            assign beat = rd_data;
            // verilator lint_off UNUSEDSIGNAL
            wire unused_lo = &{1'b0, lo};
            // verilator lint_on UNUSEDSIGNAL
        end
    endgenerate

    always @(posedge clk) begin
        if (!rst_n) begin
            c_act <= 1'b0;
            pend  <= 1'b0;
        end else begin
            if (take)                      c_act <= 1'b1;
            else if (rd_fire && c_end)     c_act <= 1'b0;
            // a beat is in flight from its first word's grant until it is pushed
            pend <= (rd_fire && !c_hi) || (pend && !push);
        end
        if (take) begin
            c_addr <= rq_dout[SPM_AW-1:0];
            c_left <= words;
        end else if (rd_fire) begin
            c_addr <= c_addr + 1'b1;
            c_left <= c_left - 10'd1;
        end
        if (rd_fire) begin
            p_hi   <= c_hi;
            p_last <= c_end;
        end
        if (rd_vld && !(BW == 1 || p_hi)) lo <= rd_data;
    end

    // ---- output FIFO of {last, beat}
    wire          of_empty;
    wire          of_full;
    wire [DWB:0]  of_dout;
    npu_fifo #(.W(DWB + 1), .DEPTH(OD)) u_of (
        .clk(clk), .rst_n(rst_n), .push(push), .din({p_last, beat}), .pop(r_vld && r_rdy),
        .dout(of_dout), .full(of_full), .empty(of_empty), .count(oc));
    assign r_vld  = !of_empty;
    assign r_data = of_dout[DWB-1:0];
    assign r_last = of_dout[DWB];

`ifdef NPU_ASSERTS
    // The room rule keeps the output FIFO from overflowing; the words of a beat come in order.
    always @(posedge clk) if (rst_n) begin
        if (push && of_full && !(r_vld && r_rdy)) `NPU_ASSERT_FAIL("SPM burst server: output FIFO overflow")
        if (rd_vld && !p_hi && BW > 1 && !pend) `NPU_ASSERT_FAIL("SPM burst server: a word without its beat")
        if (ar_vld && ar_addr[LW +: 1] != 1'b0 && BW > 1)
            `NPU_ASSERT_FAIL("SPM burst server: burst address not beat-aligned")
    end
`else
    // verilator lint_off UNUSEDSIGNAL
    wire unused_full = of_full;
    // verilator lint_on UNUSEDSIGNAL
`endif
endmodule
`default_nettype wire
