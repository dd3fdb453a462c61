`default_nettype none
`include "npu_assert.vh"
// npu_spm: banked scratchpad. BANKS banks of BANK_WORDS words of WB bits; bank = addr / BANK_WORDS.
// BANK_WORDS must be a power of 2 (the bank is then the address bits above log2(BANK_WORDS)).
// Each bank is split into 2^SUBW equal sub-banks, each with one read and one write port per
// cycle, so a bank serves up to 2^SUBW reads and as many writes per cycle when they fall in
// different sub-banks. Sub-bank = XOR over the set in-bank address bits i of a code c(i) != 0.
// Why codes: two addresses one bit apart are always in different sub-banks, which the drain needs
// (it writes both SPM words of an OBUF row in one cycle: words w and w+1 of a wide row, w even,
// differ in bit 0; for the skinny split layout rows r and r + split_rows of the C staging buffer
// are D = split_rows * stride apart, with the compiler's power-of-two tiles one address bit, and
// a carry-free add flips one bit). SUBW = 2 (four sub-banks, npu_top) cycles the codes 01, 10, 11
// over the bits, so the codes of two adjacent bits and their XOR are the three non-zero codes:
//   - an ISW slot reads rows at offsets 0, b, 2b, 3b (+ t * stride) from the wave's first row;
//     with power-of-two m and stride, b = m/4 * stride is one address bit and t * stride < b
//     adds no carry into it: four different sub-banks every cycle (HSW/VSW: 0, 2b, two);
//   - the drain writes two OBUF rows r, r+1 (r even) per cycle: wide words w, w+1, w+s, w+s+1
//     (s = 2 * n-blocks) are four sub-banks unless s = 2^(3j) (s = 8: N of 49..64 at S = 8, or
//     more); skinny words 0, D, s, s + D unless log2(D) = log2(s) mod 3.
// SUBW = 1 is the plain XOR of all bits (two sub-banks). A plain low-bits split would put the
// skinny pair (even distance) in one sub-bank every time.
// Per unit (bank, sub-bank) and per direction the lowest requesting port index wins; a request
// to the same unit from a lower port blocks higher ones.
// PAIR_RD = 1: the last read port is the second word of the port before it (the STORE reads
// words w, w+1 of a two-word chunk at BEAT_WORDS = 2): it is granted only in a cycle its
// partner is granted too. Why: a lone second word would be a read nobody uses (the STORE
// reads w again with w+1 later) and the SPM read counter would count it, so the counters would
// depend on the arbitration instead of on the program.
// Grants are combinational; a write happens at the clock edge of its grant, read data comes out
// registered the cycle after the grant (rd_vld). A read and a write of the same word in the same
// cycle return the old data. Addresses must be in range (requestors check before issuing).
// Arbitration depth (synthesis, issue 7: the grants sit between the requestors' address logic
// and their grant logic): each port's unit {bank, sub-bank} is computed once (the sub-bank is a
// balanced XOR tree of the in-bank bits), every pair of ports compares units, and a port is
// blocked by the OR of its lower ports' matches: no chain of per-port conditions.
// Counter outputs (cnt_rd, cnt_wr, cnt_conflict) describe the PREVIOUS cycle: they are counted
// from registered grant/request bits, so the grant logic does not feed the counter adders
// (npu_ctrl adds them one cycle later than the other counters, see its LATE_CNT).
// The storage is modelled as one array (arbitration guarantees one access per sub-bank and port
// kind per cycle), which keeps simulation cheap.
module npu_spm #(
    parameter integer BANKS      = 4,
    parameter integer BANK_WORDS = 1024,
    parameter integer WB         = 256,
    parameter integer NR         = 3,
    parameter integer NW         = 2,
    parameter integer SUBW       = 2,    // log2(sub-banks per bank)
    parameter integer PAIR_RD    = 0     // 1: port NR-1 granted only with port NR-2 (header)
) (
    input  wire                                   clk,
    input  wire                                   rst_n,
    input  wire [NR-1:0]                          rd_req,
    input  wire [NR*$clog2(BANKS*BANK_WORDS)-1:0] rd_addr,
    output reg  [NR-1:0]                          rd_gnt,
    output reg  [NR-1:0]                          rd_vld,
    output reg  [NR*WB-1:0]                       rd_data,
    input  wire [NW-1:0]                          wr_req,
    input  wire [NW*$clog2(BANKS*BANK_WORDS)-1:0] wr_addr,
    input  wire [NW*WB-1:0]                       wr_data,
    output reg  [NW-1:0]                          wr_gnt,
    output reg  [$clog2(NR+1)-1:0]                cnt_rd,
    output reg  [$clog2(NW+1)-1:0]                cnt_wr,
    output reg  [$clog2(NR+NW+1)-1:0]             cnt_conflict
);
    localparam integer AW    = $clog2(BANKS * BANK_WORDS);
    localparam integer BW    = $clog2(BANK_WORDS);   // row bits inside a bank
    localparam integer WORDS = BANKS * BANK_WORDS;
    localparam integer RCW   = $clog2(NR + 1);
    localparam integer WCW   = $clog2(NW + 1);
    localparam integer CCW   = $clog2(NR + NW + 1);

    reg [WB-1:0] mem [0:WORDS-1];   // no reset (datapath)

    localparam integer UW    = AW - BW + SUBW;       // unit id: {bank, sub-bank}

    // code of address bit i (see the header)
    function [SUBW-1:0] sub_code(input integer i);
        if (SUBW == 2) sub_code = (i % 3 == 0) ? 2'b01 : (i % 3 == 1) ? 2'b10 : 2'b11;
        else           sub_code = {{(SUBW-1){1'b0}}, 1'b1};
    endfunction
    // unit {bank, sub-bank} of an address; sub-bank bit j = XOR of the in-bank bits whose code
    // has bit j set (masked, then one reduction: a balanced XOR tree)
    function [UW-1:0] unit_of(input [AW-1:0] a);
        /* verilator lint_off UNUSED */
        reg [AW+SUBW-1:0] t;                                  // bank at [UW-1:SUBW]
        /* verilator lint_on UNUSED */
        reg [BW-1:0]   m_;
        reg [SUBW-1:0] c_;
        integer j_, b_;
        begin
            t = {a, {SUBW{1'b0}}} >> BW;
            for (j_ = 0; j_ < SUBW; j_ = j_ + 1) begin
                for (b_ = 0; b_ < BW; b_ = b_ + 1) begin
                    c_ = sub_code(b_);
                    m_[b_] = a[b_] & c_[j_];
                end
                t[j_] = ^m_;
            end
            unit_of = t[UW-1:0];
        end
    endfunction

    // one unit id per port, then pairwise compares; blocked = OR of the lower ports' matches
    reg  [NR*UW-1:0] rd_unit;
    reg  [NW*UW-1:0] wr_unit;
    reg  [NR-1:0]    rd_blk;
    reg  [NW-1:0]    wr_blk;
    integer i, k;
    always @(*) begin
        for (i = 0; i < NR; i = i + 1) rd_unit[i*UW +: UW] = unit_of(rd_addr[i*AW +: AW]);
        for (i = 0; i < NW; i = i + 1) wr_unit[i*UW +: UW] = unit_of(wr_addr[i*AW +: AW]);
        rd_blk = {NR{1'b0}};
        for (i = 1; i < NR; i = i + 1)
            for (k = 0; k < i; k = k + 1)
                rd_blk[i] = rd_blk[i] | (rd_req[k] && rd_unit[k*UW +: UW] == rd_unit[i*UW +: UW]);
        wr_blk = {NW{1'b0}};
        for (i = 1; i < NW; i = i + 1)
            for (k = 0; k < i; k = k + 1)
                wr_blk[i] = wr_blk[i] | (wr_req[k] && wr_unit[k*UW +: UW] == wr_unit[i*UW +: UW]);
        rd_gnt = rd_req & ~rd_blk;
        if (PAIR_RD != 0) rd_gnt[NR-1] = rd_gnt[NR-1] & rd_gnt[NR-2];
        wr_gnt = wr_req & ~wr_blk;
    end

    // Counter pulses of the previous cycle, from registers (rd_vld is the registered rd_gnt).
    reg [NR-1:0] rd_req_q;
    reg [NW-1:0] wr_req_q, wr_gnt_q;
    always @(posedge clk) begin
        if (!rst_n) begin
            rd_req_q <= {NR{1'b0}}; wr_req_q <= {NW{1'b0}}; wr_gnt_q <= {NW{1'b0}};
        end else begin
            rd_req_q <= rd_req; wr_req_q <= wr_req; wr_gnt_q <= wr_gnt;
        end
    end
    always @(*) begin
        cnt_rd = {RCW{1'b0}};
        cnt_wr = {WCW{1'b0}};
        cnt_conflict = {CCW{1'b0}};
        for (i = 0; i < NR; i = i + 1) begin
            cnt_rd       = cnt_rd + {{(RCW-1){1'b0}}, rd_vld[i]};
            cnt_conflict = cnt_conflict + {{(CCW-1){1'b0}}, rd_req_q[i] && !rd_vld[i]};
        end
        for (i = 0; i < NW; i = i + 1) begin
            cnt_wr       = cnt_wr + {{(WCW-1){1'b0}}, wr_gnt_q[i]};
            cnt_conflict = cnt_conflict + {{(CCW-1){1'b0}}, wr_req_q[i] && !wr_gnt_q[i]};
        end
    end

    always @(posedge clk) begin
        for (i = 0; i < NW; i = i + 1)
            if (wr_gnt[i]) mem[wr_addr[i*AW +: AW]] <= wr_data[i*WB +: WB];
        for (i = 0; i < NR; i = i + 1)
            if (rd_gnt[i]) rd_data[i*WB +: WB] <= mem[rd_addr[i*AW +: AW]];
    end

    always @(posedge clk) begin
        if (!rst_n) rd_vld <= {NR{1'b0}};
        else        rd_vld <= rd_gnt;
    end

`ifdef NPU_ASSERTS
    // Reference for the arbitration above, written independently of it: same unit = same bank
    // and an XOR-fold (bit by bit) of the address difference equal to zero.
    function same_bank;
        input [AW-1:0] a;
        input [AW-1:0] b;
        reg   [AW-1:0] x;
        reg   [SUBW-1:0] f;
        integer b_;
        begin
            x = a ^ b;
            f = {SUBW{1'b0}};
            for (b_ = 0; b_ < BW; b_ = b_ + 1)
                if (x[b_]) f = f ^ sub_code(b_);
            same_bank = ((x >> BW) == {AW{1'b0}}) && f == {SUBW{1'b0}};
        end
    endfunction
    // One access per unit and direction (addresses are always in range: BANKS * BANK_WORDS is a
    // power of 2 here; the requestors' range checks are asserted in npu_exec), and the grants are
    // exactly "requested, and no lower port requests the same unit" (the rule of the header).
    // The registered counter bits follow the grants of the previous cycle.
    reg [NR-1:0] ref_rd_gnt;
    reg [NW-1:0] ref_wr_gnt;
    integer ai, ak;
    always @(*) begin
        ref_rd_gnt = rd_req;
        for (ai = 0; ai < NR; ai = ai + 1)
            for (ak = 0; ak < ai; ak = ak + 1)
                if (rd_req[ak] && same_bank(rd_addr[ai*AW +: AW], rd_addr[ak*AW +: AW]))
                    ref_rd_gnt[ai] = 1'b0;
        if (PAIR_RD != 0 && !ref_rd_gnt[NR-2]) ref_rd_gnt[NR-1] = 1'b0;
        ref_wr_gnt = wr_req;
        for (ai = 0; ai < NW; ai = ai + 1)
            for (ak = 0; ak < ai; ak = ak + 1)
                if (wr_req[ak] && same_bank(wr_addr[ai*AW +: AW], wr_addr[ak*AW +: AW]))
                    ref_wr_gnt[ai] = 1'b0;
    end
    integer bi, bk;
    always @(posedge clk) if (rst_n) begin
        if (rd_gnt != ref_rd_gnt) `NPU_ASSERT_FAIL("SPM read grants are not the priority rule")
        if (wr_gnt != ref_wr_gnt) `NPU_ASSERT_FAIL("SPM write grants are not the priority rule")
        for (bi = 0; bi < NR; bi = bi + 1)
            for (bk = 0; bk < bi; bk = bk + 1)
                if (rd_gnt[bi] && rd_gnt[bk] && same_bank(rd_addr[bi*AW +: AW], rd_addr[bk*AW +: AW]))
                    `NPU_ASSERT_FAIL("SPM two reads granted in one sub-bank")
        for (bi = 0; bi < NW; bi = bi + 1)
            for (bk = 0; bk < bi; bk = bk + 1)
                if (wr_gnt[bi] && wr_gnt[bk] && same_bank(wr_addr[bi*AW +: AW], wr_addr[bk*AW +: AW]))
                    `NPU_ASSERT_FAIL("SPM two writes granted in one sub-bank")
        if ((rd_vld & ~rd_req_q) != {NR{1'b0}} || (wr_gnt_q & ~wr_req_q) != {NW{1'b0}})
            `NPU_ASSERT_FAIL("SPM counter bits: a grant without a request")
    end
`endif
endmodule
`default_nettype wire
