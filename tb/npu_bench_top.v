`default_nettype none
// npu_bench_top: the speed reference of `make bench`. The bare FlexSA array (the same npu_flexsa,
// npu_core and npu_pe as the NPU) fed by LFSRs in FW mode, one row per cycle, with the
// stationary bank reloading all the time. It has npu_top's ports and parameters so the same
// harness (tb/npu_sim.cpp) drives it; the DRAM port is idle and `halted` stays low, so
// npu_sim_run(n) simply clocks n cycles. The NPU's simulation speed is reported as a ratio to this
// array's, both measured in one run, which cancels most of the noise of a shared machine.
// The outputs are folded into a checksum CSR so Verilator cannot optimise the array away.
/* verilator lint_off UNUSEDPARAM */ // npu_top's parameters, accepted so the same -G flags apply
module npu_bench_top #(
    parameter S               = 8,
    parameter SPM_BANKS       = 4,
    parameter SPM_BANK_WORDS  = 1024,
    parameter OBUF_ROWS       = 256,
    parameter LBUF_H_DEPTH    = 8,
    parameter LBUF_V_DEPTH    = 16,
    parameter QUEUE_DEPTH     = 8,
    parameter TOKEN_MAX       = 15,
    parameter DRAM_ADDR_BITS  = 24,
    parameter MAX_BURST_BEATS = 16,
    parameter MAX_OUTSTANDING = 4,
    parameter WATCHDOG_CYCLES = 20000,
    parameter DTYPE           = 0,
    parameter BEAT_WORDS      = 1,
    parameter LOAD_PIPELINE   = 0,
    parameter STORE_PIPELINE  = 0
) (
    /* verilator lint_on UNUSEDPARAM */
    input  wire             clk,
    input  wire             rst_n,
    input  wire [11:0]      csr_addr,
    input  wire [31:0]      csr_wdata,
    input  wire             csr_we,
    output wire [31:0]      csr_rdata,
    output wire             halted,
    output wire             m_ar_valid,
    input  wire             m_ar_ready,
    output wire [31:0]      m_ar_addr,
    output wire [7:0]       m_ar_len,
    output wire [1:0]       m_ar_id,
    input  wire             m_r_valid,
    output wire             m_r_ready,
    input  wire [32*S*BEAT_WORDS-1:0] m_r_data,
    input  wire             m_r_last,
    input  wire [1:0]       m_r_id,
    input  wire             m_r_resp,
    output wire             m_aw_valid,
    input  wire             m_aw_ready,
    output wire [31:0]      m_aw_addr,
    output wire [7:0]       m_aw_len,
    output wire             m_w_valid,
    input  wire             m_w_ready,
    output wire [32*S*BEAT_WORDS-1:0] m_w_data,
    output wire [4*S*BEAT_WORDS-1:0]  m_w_strb,
    output wire             m_w_last,
    input  wire             m_b_valid,
    output wire             m_b_ready,
    input  wire             m_b_resp
);
    localparam TAGW = 8;
    localparam F    = 2 * S;
    reg  [63:0] lfsr;
    reg  [31:0] sum;
    reg  [7:0]  row;
    reg  [7:0]  shift_cnt;
    reg  [S-1:0] wsel;               // the PE row written (one-hot, rotating)
    wire [F*32-1:0] out_data, top_data;
    wire [F-1:0]    out_vld, top_vld;
    wire [F*TAGW-1:0] out_tag, top_tag;
    wire [(S / 4 + 1)*64-1:0] rep = {(S / 4 + 1){lfsr}};
    wire [S*16-1:0] a_row = rep[S*16-1:0];
    wire            bank  = row[6];

    // every lane feeds the checksum, so no column of PEs is dead logic
    reg  [31:0] fold;
    integer x;
    always @(*) begin
        fold = 32'd0;
        for (x = 0; x < F; x = x + 1) fold = fold ^ out_data[x*32 +: 32];
    end

    always @(posedge clk) begin
        if (!rst_n) begin
            lfsr <= 64'h9E3779B97F4A7C15; sum <= 32'd0; row <= 8'd0; shift_cnt <= 8'd0;
            wsel <= {{(S-1){1'b0}}, 1'b1};
        end else begin
            lfsr      <= {lfsr[62:0], lfsr[63] ^ lfsr[62] ^ lfsr[60] ^ lfsr[59]};
            row       <= row + 8'd1;
            shift_cnt <= shift_cnt + 8'd1;
            wsel      <= {wsel[S-2:0], wsel[S-1]};
            sum       <= sum ^ fold ^ {24'd0, out_tag[TAGW-1:0]};
        end
    end

    npu_flexsa #(.S(S), .TAGW(TAGW)) u_flexsa (
        .clk(clk), .rst_n(rst_n), .mode(2'd0),
        .inj_vld(4'b0101), .inj_a({{S*16{1'b0}}, a_row, {S*16{1'b0}}, a_row}),
        .inj_sel({4{bank}}), .inj_tag({4{row}}),
        // the bank not in use is written a PE row a cycle half the time, as during back-to-back waves
        .w_row({4{shift_cnt[3] ? wsel : {S{1'b0}}}}), .w_bank({4{~bank}}), .w_in({4{a_row}}),
        .out_vld(out_vld), .out_tag(out_tag), .out_data(out_data),
        .top_vld(top_vld), .top_tag(top_tag), .top_data(top_data)
    );

    assign csr_rdata  = sum;
    assign halted     = 1'b0;
    assign m_ar_valid = 1'b0;
    assign m_ar_addr  = 32'd0;
    assign m_ar_len   = 8'd0;
    assign m_ar_id    = 2'd0;
    assign m_r_ready  = 1'b1;
    assign m_aw_valid = 1'b0;
    assign m_aw_addr  = 32'd0;
    assign m_aw_len   = 8'd0;
    assign m_w_valid  = 1'b0;
    assign m_w_data   = {32*S*BEAT_WORDS{1'b0}};
    assign m_w_strb   = {4*S*BEAT_WORDS{1'b0}};
    assign m_w_last   = 1'b0;
    assign m_b_ready  = 1'b1;
    wire unused = &{1'b0, csr_addr, csr_wdata, csr_we, m_ar_ready, m_r_valid, m_r_data, m_r_last,
                    m_r_id, m_r_resp, m_aw_ready, m_w_ready, m_b_valid, m_b_resp, out_vld, top_vld,
                    top_tag, top_data, out_tag[F*TAGW-1:TAGW], rep};
endmodule
`default_nettype wire
