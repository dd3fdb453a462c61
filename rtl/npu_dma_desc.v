`default_nettype none
// npu_dma_desc: the LOAD/STORE descriptor as both DMA engines see it (docs/design.md section 2).
// Latches the fields of the instruction when the engine accepts it, together with the start
// checks (48-bit arithmetic, no overflow): malformed descriptor, last DRAM byte past the end,
// last SPM word past the end. The checks are computed from the instruction word in the accepting
// cycle and registered, so the wide arithmetic runs once per instruction, not in every cycle.
// TRANSPOSE = 1 (LOAD): the transpose bit selects the transposed layout (odd row_bytes is bad);
// TRANSPOSE = 0 (STORE): a set transpose bit is itself a malformed descriptor.
module npu_dma_desc #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    parameter SPM_WORDS = 4096,
    parameter DRAM_AW   = 24,
    parameter TRANSPOSE = 1
) (
    input  wire         clk,
    input  wire         load,          // the engine accepts cmd_insn this cycle
    input  wire [127:0] cmd_insn,
    output reg  [2:0]   tag,
    output reg          tr,
    output reg  [15:0]  rows,
    output reg  [31:0]  daddr,
    output reg  [15:0]  saddr,
    output reg  [15:0]  sstride,
    output reg  [15:0]  rbytes,
    output reg  [15:0]  dstride,       // beats
    output reg  [15:0]  nbeats,        // beats per row = ceil(row_bytes / 4S)
    output reg          bad,           // ERR_BAD_DESC
    output reg          dram_err,      // ERR_DRAM_ADDR, dlast = the byte
    output reg          spm_err,       // ERR_SPM_ADDR, slast = the word
    output reg  [31:0]  dlast,
    output reg  [31:0]  slast
);
    localparam integer LB = $clog2(4 * S);  // log2 bytes per beat
    localparam integer LE = $clog2(2 * S);  // log2 elements per beat (transpose block side)
    localparam [31:0] E32      = 2 * S;
    localparam [15:0] E16      = E32[15:0];
    localparam [31:0] SPMW32   = SPM_WORDS;
    localparam [47:0] DRAM_LIM = 48'd1 << DRAM_AW;

    wire        d_tr      = cmd_insn[15];
    wire [15:0] d_rows    = cmd_insn[31:16];
    wire [31:0] d_daddr   = cmd_insn[63:32];
    wire [15:0] d_saddr   = cmd_insn[79:64];
    wire [15:0] d_sstride = cmd_insn[95:80];
    wire [15:0] d_rbytes  = cmd_insn[111:96];
    wire [15:0] d_dstride = cmd_insn[127:112];
    // opcode and token bits are the queue's business
    wire unused = &{1'b0, cmd_insn[11:0]};

    function [15:0] beats_of(input [15:0] b);
        beats_of = {{LB{1'b0}}, b[15:LB]} + {15'd0, |b[LB-1:0]};
    endfunction
    wire [47:0] d_last = {16'd0, d_daddr} + ({32'd0, d_rows} - 48'd1) * {16'd0, {16'd0, d_dstride} << LB}
                         + {32'd0, d_rbytes} - 48'd1;
    // transposed: the last word of the last column, with (rows + 2S - 1) / 2S words per column
    wire        use_tr = (TRANSPOSE != 0) && d_tr;
    wire [47:0] s_last = use_tr
        ? {32'd0, d_saddr} + ({32'd0, 1'b0, d_rbytes[15:1]} - 48'd1) * {32'd0, d_sstride}
          + (({32'd0, d_rows} + {32'd0, E16} - 48'd1) >> LE) - 48'd1
        : {32'd0, d_saddr} + ({32'd0, d_rows} - 48'd1) * {32'd0, d_sstride}
          + {32'd0, beats_of(d_rbytes)} - 48'd1;
    wire        d_bad  = (d_rows == 16'd0) || (d_rbytes == 16'd0) || (d_daddr[LB-1:0] != {LB{1'b0}})
                         || ((TRANSPOSE != 0) ? (d_tr && d_rbytes[0]) : d_tr);

    always @(posedge clk) begin
        if (load) begin
            tag      <= cmd_insn[14:12];
            tr       <= use_tr;
            rows     <= d_rows;
            daddr    <= d_daddr;
            saddr    <= d_saddr;
            sstride  <= d_sstride;
            rbytes   <= d_rbytes;
            dstride  <= d_dstride;
            nbeats   <= beats_of(d_rbytes);
            bad      <= d_bad;
            dram_err <= d_last >= DRAM_LIM;
            dlast    <= d_last[31:0];   // err_info reports the low 32 bits
            spm_err  <= s_last >= {16'd0, SPMW32};
            slast    <= s_last[31:0];
        end
    end
    wire unused_hi = &{1'b0, d_last[47:32], s_last[47:32], SPM_AW[0]};
endmodule
`default_nettype wire
