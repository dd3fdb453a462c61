`default_nettype none
`include "npu_assert.vh"
// npu_exec_ldw_rows: the SPM word requests of one LDW row stream (npu_exec_ldw has two: the
// rows of cores 0/1 and, when the core pairs load in parallel, those of cores 2/3).
// On start it requests nrows tile rows row0, row0 + 1, ... in order, one per accepted request
// (req_vld && req_rdy). Row r is a zero word (req_zero, the SPM is not read) when r < klo or
// r >= k; the nonzero rows are read from base upwards, stride words apart (base: the address of
// the stream's first nonzero row). "More rows" and "this row is zero" are registered with the
// row count, so the request and its grant, which gate the counters, follow no compare.
module npu_exec_ldw_rows #(
    parameter FW_ = 7                // row counters 0..2S in FW_ + 1 bits
) (
    input  wire          clk,
    input  wire          rst_n,
    input  wire          start,
    input  wire [FW_:0]  row0,       // the stream's first tile row
    input  wire [FW_:0]  nrows,      // rows requested (0: none)
    input  wire [7:0]    k,
    input  wire [5:0]    klo,
    input  wire [15:0]   base,
    input  wire [15:0]   stride,
    output wire          req_vld,
    output wire [31:0]   req_addr,   // wide: the checks compare it with the range check's word
    output wire          req_zero,
    output wire [FW_:0]  req_row,    // the tile row requested
    input  wire          req_rdy
);
    reg  [FW_:0] row, last;          // the row requested; the stream ends after row `last`
    reg  [31:0]  addr;
    reg          more, zero;
    reg  [7:0]   k_q;
    reg  [5:0]   klo_q;
    reg  [15:0]  stride_q;
    wire [8:0]   nxt  = {{(8-FW_){1'b0}}, row} + 9'd1;
    wire [8:0]   r0   = {{(8-FW_){1'b0}}, row0};
    function is_zero(input [8:0] r, input [7:0] kk, input [5:0] lo);
        is_zero = r >= {1'b0, kk} || r < {3'd0, lo};
    endfunction

    always @(posedge clk) begin
        if (!rst_n) begin
            more <= 1'b0;
        end else if (start) begin
            row      <= row0;
            last     <= row0 + nrows - 1'b1;
            more     <= nrows != {(FW_+1){1'b0}};
            zero     <= is_zero(r0, k, klo);
            addr     <= {16'd0, base};
            k_q      <= k;
            klo_q    <= klo;
            stride_q <= stride;
        end else if (req_vld && req_rdy) begin
            row  <= row + 1'b1;
            more <= row != last;
            zero <= is_zero(nxt, k_q, klo_q);
            if (!zero) addr <= addr + {16'd0, stride_q};
        end
    end

`ifdef NPU_ASSERTS
    always @(posedge clk) if (rst_n && more && zero != is_zero({{(8-FW_){1'b0}}, row}, k_q, klo_q))
        `NPU_ASSERT_FAIL("registered LDW row state differs")
`endif

    assign req_vld  = more;
    assign req_addr = addr;
    assign req_zero = zero;
    assign req_row  = row;
endmodule
`default_nettype wire
