`default_nettype none
// npu_dma_desc: the LOAD/STORE descriptor as both DMA engines see it (docs/isa.md).
// Latches the fields of the instruction when the engine accepts it, together with the start
// checks (no overflow): malformed descriptor, last DRAM byte past the end, last SPM word past the
// end. Malformed: zero rows or row_bytes, an odd dram_addr, row_bytes or dram_stride (DRAM rows
// are int16 elements at any element address, docs/isa.md). TR_BYTES = the element size of the
// engine's transposed layout: 2 (LOAD: int16), 4 (STORE: int32 / fp32, row_bytes a multiple of 4,
// else malformed); 0 would make a set transpose bit malformed.
//
// Two stages (issue 7: the checks were a 16x21-bit multiply, three adds and a compare in series
// from the queue head, 44 levels, deeper than a PE):
//  1. accepting cycle: the fields, the multiplications split in two 8-bit halves of rows, and the
//     other addends pre-summed. With (n-1)*s + x - 1 = n*s + x + ~s (two's complement):
//       dram last = daddr + (rows-1)*dstride + rbytes - 1 = [daddr + rbytes + ~dstride]
//                   + rows*dstride   (dstride in bytes)
//       spm last  = saddr + (n-1)*sstride + w - 1 = [saddr + (w-1) + ~sstride + 1] + n*sstride,
//                   n = rows, w = ceil(row_bytes/4S) (normal), n = row_bytes/TR_BYTES,
//                   w = ceil(rows/(4S/TR_BYTES)) (transposed); w - 1 = hi + |lo - 1, so [..] = saddr + hi
//                   + ~sstride + |lo, with no incrementer in series.
//     The limits are subtracted here too, so a check is the sign of a sum in stage 2.
//  2. one cycle later: each last address (and its distance to the limit) is the pre-sum plus the
//     two shifted half products, a 3-operand add; `vld` rises with the results.
// The engine waits for `vld` in its CHECK state: one cycle more per LOAD/STORE instruction.
// Same values as before (exact while the operands are in range: rows, row_bytes >= 1, which the
// malformed-descriptor check, reported first, guarantees).
// FILL (`fill`, LOAD engine only): the LOAD format without its DRAM side. The transpose bit and
// the DRAM fields are ignored: no transposed layout, no alignment or DRAM range check, daddr
// (ERR_INFO of a malformed FILL) and dstride read 0 (the engine walks a FILL as a LOAD of
// beat-aligned rows); the SPM range is checked like a normal LOAD's.
// LOAD_SPM (`spm`, LOAD engine only): a LOAD whose rows are in the SPM. daddr and dstride are
// the source in bytes (src_addr * 4S, src_stride * 4S), so the engine walks it as a LOAD of
// those DRAM bytes; the "DRAM" range check is against the SPM's bytes (dram_err then means the
// source leaves the SPM; dlast its last byte). Malformed also: LOAD's DRAM pitch bits
// (stride_shift, dram_stride) not zero, a source pitch past the 19-bit byte pitch. `ovl`: the
// source's and the destination's word ranges [first, last] overlap, computed in a third stage
// from the registered last addresses, so `vld` comes one cycle later for a LOAD_SPM only.
module npu_dma_desc #(
    parameter S         = 8,
    parameter SPM_AW    = 12,
    parameter SPM_WORDS = 4096,
    parameter DRAM_AW   = 24,
    parameter TR_BYTES  = 2
) (
    input  wire         clk,
    input  wire         rst_n,
    input  wire         load,          // the engine accepts cmd_insn this cycle
    input  wire [127:0] cmd_insn,
    input  wire         fill,          // cmd_insn is a FILL (valid with load)
    input  wire         spm,           // cmd_insn is a LOAD_SPM (valid with load)
    output reg  [2:0]   tag,
    output reg          tr,
    output reg  [15:0]  rows,
    output reg  [31:0]  daddr,
    output reg  [15:0]  saddr,
    output reg  [15:0]  sstride,
    output reg  [15:0]  rbytes,
    output reg  [18:0]  dstride,       // bytes: the field << stride_shift (FILL: 0)
    output reg          cont,          // dstride == row_bytes: the rows are one contiguous run
    output reg  [15:0]  nbeats,        // beats per row = ceil(row_bytes / 4S)
    output reg  [15:0]  nbeats_m1,     // nbeats - 1, registered: the engines' last-beat compares
    output reg          vld,           // the checks below belong to the last accepted descriptor
    output reg          bad,           // ERR_BAD_DESC
    output reg          dram_err,      // ERR_DRAM_ADDR, dlast = the byte
    output reg          spm_err,       // ERR_SPM_ADDR, slast = the word
    output reg  [31:0]  dlast,
    output reg  [31:0]  slast,
    output reg          ovl            // LOAD_SPM: source and destination overlap (BAD_DESC)
);
`include "npu_defs.vh"
    localparam integer LB = $clog2(4 * S);  // log2 bytes per beat
    localparam integer TRB = (TR_BYTES == 4) ? 4 : 2;   // transposed element bytes
    localparam integer LT = $clog2(TRB);               // log2 of it
    localparam integer LE = $clog2(4 * S / TRB);       // log2 elements per beat (transpose block side)
    // sum widths: DRAM last < 2^32 + 2^14 * 2^19 + 2^16 (rows are 14 bits), SPM last < 2^32 + 2^17, one sign bit more
    localparam integer XW = 35;
    localparam integer SW = 35;
    localparam [XW-1:0] DRAM_LIM = {{(XW-1){1'b0}}, 1'b1} << DRAM_AW;
    localparam [31:0]   SPMW32   = SPM_WORDS;
    localparam [SW-1:0] SPM_LIM  = {{(SW-32){1'b0}}, SPMW32};
    localparam [XW-1:0] SRC_LIM  = {{(XW-32){1'b0}}, SPMW32} << LB;   // LOAD_SPM: the SPM's bytes

    // the LOAD layout: STORE and FILL have the same fields at the same bits (NPU_ISA_FIELDS)
    wire        d_tr      = cmd_insn[F_LOAD_TRANSPOSE_LSB];
    wire [15:0] d_rows    = {{(16-F_LOAD_ROWS_W){1'b0}}, cmd_insn[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W]};
    wire [31:0] p_daddr   = cmd_insn[F_LOAD_DRAM_ADDR_LSB +: F_LOAD_DRAM_ADDR_W];
    wire [15:0] d_saddr   = cmd_insn[F_LOAD_SPM_ADDR_LSB +: F_LOAD_SPM_ADDR_W];
    wire [15:0] d_sstride = cmd_insn[F_LOAD_SPM_STRIDE_LSB +: F_LOAD_SPM_STRIDE_W];
    wire [15:0] d_rbytes  = cmd_insn[F_LOAD_ROW_BYTES_LSB +: F_LOAD_ROW_BYTES_W];
    // the DRAM pitch: the 16-bit field shifted left by stride_shift (0..3)
    wire [15:0] d_dsfield = cmd_insn[F_LOAD_DRAM_STRIDE_LSB +: F_LOAD_DRAM_STRIDE_W];
    wire [1:0]  d_dshift  = cmd_insn[F_LOAD_STRIDE_SHIFT_LSB +: F_LOAD_STRIDE_SHIFT_W];
    wire [18:0] p_dstride = {3'd0, d_dsfield} << d_dshift;
    // LOAD_SPM: the source (w1) in bytes; its pitch must fit the engine's 19-bit byte pitch
    wire [15:0] s_src     = cmd_insn[F_LOAD_SPM_SRC_ADDR_LSB +: F_LOAD_SPM_SRC_ADDR_W];
    wire [15:0] s_srcstr  = cmd_insn[F_LOAD_SPM_SRC_STRIDE_LSB +: F_LOAD_SPM_SRC_STRIDE_W];
    wire [34:0] s_pitch   = {19'd0, s_srcstr} << LB;
    wire        s_bad     = spm && (d_dsfield != 16'd0 || d_dshift != 2'd0 || s_pitch[34:19] != 16'd0);
    wire [31:0] d_daddr   = spm ? {{(16-LB){1'b0}}, s_src, {LB{1'b0}}} : p_daddr;
    wire [18:0] d_dstride = spm ? s_pitch[18:0] : p_dstride;
    // opcode and token bits are the queue's business
    wire unused = &{1'b0, cmd_insn[F_INSN_OP_LSB +: F_INSN_OP_W], cmd_insn[F_INSN_POP_PREV_LSB],
                    cmd_insn[F_INSN_POP_NEXT_LSB], cmd_insn[F_INSN_PUSH_PREV_LSB],
                    cmd_insn[F_INSN_PUSH_NEXT_LSB]};

    function [15:0] beats_of(input [15:0] b);
        beats_of = {{LB{1'b0}}, b[15:LB]} + {15'd0, |b[LB-1:0]};
    endfunction
    wire        use_tr = (TR_BYTES != 0) && d_tr && !fill;
    // a transposed row holds whole elements: row_bytes a multiple of TRB (bit 1 for int32)
    wire        tr_odd = use_tr && (TRB == 4) && d_rbytes[1];
    wire        d_bad  = (d_rows == 16'd0) || (d_rbytes == 16'd0) || (!fill && (
                         d_daddr[0] || d_rbytes[0] || d_dstride[0] || ((TR_BYTES == 0) && d_tr)
                         || tr_odd)) || s_bad;
    reg         f_fill, f_spm;

    // ---- stage 1: half products and pre-sums
    wire [XW-1:0] stride_x = {{(XW-19){1'b0}}, d_dstride};
    wire [XW-1:0] d_pre = {{(XW-32){1'b0}}, d_daddr} + {{(XW-16){1'b0}}, d_rbytes} + ~stride_x;
    wire [15:0]   s_n   = use_tr ? (d_rbytes >> LT) : d_rows;
    // w - 1 = hi + |lo - 1 (the -1 is in ~sstride)
    wire [15:0]   s_hi  = use_tr ? {{LE{1'b0}}, d_rows[15:LE]} : {{LB{1'b0}}, d_rbytes[15:LB]};
    wire          s_lo  = use_tr ? |d_rows[LE-1:0] : |d_rbytes[LB-1:0];
    wire [SW-1:0] s_pre = {{(SW-16){1'b0}}, d_saddr} + {{(SW-16){1'b0}}, s_hi}
                          + ~{{(SW-16){1'b0}}, d_sstride} + {{(SW-1){1'b0}}, s_lo};
    reg  [XW-1:0] dp_pre, dp_lim;        // DRAM pre-sum, and minus the limit
    reg  [SW-1:0] sp_pre, sp_lim;        // SPM pre-sum, and minus the limit
    reg  [26:0]   dm_lo, dm_hi;          // rows[7:0] * dstride, rows[15:8] * dstride
    reg  [23:0]   sm_lo, sm_hi;          // n[7:0] * sstride, n[15:8] * sstride
    reg           s1;                    // stage 2 runs this cycle
    reg           s2;                    // LOAD_SPM: stage 3 (the overlap) runs this cycle

    always @(posedge clk) begin
        if (!rst_n) begin
            s1 <= 1'b0; s2 <= 1'b0; vld <= 1'b0;
        end else begin
            s1  <= load;
            s2  <= s1 && f_spm;
            vld <= (s1 && !f_spm) || s2;
        end
        if (load) begin
            tag      <= cmd_insn[F_LOAD_TAG_LSB +: F_LOAD_TAG_W];
            tr       <= use_tr;
            rows     <= d_rows;
            daddr    <= fill ? 32'd0 : d_daddr;
            f_fill   <= fill;
            f_spm    <= spm;
            saddr    <= d_saddr;
            sstride  <= d_sstride;
            rbytes   <= d_rbytes;
            dstride  <= fill ? 19'd0 : d_dstride;
            cont     <= !fill && (d_dstride == {3'd0, d_rbytes});
            nbeats   <= beats_of(d_rbytes);
            nbeats_m1 <= beats_of(d_rbytes) - 16'd1;
            bad      <= d_bad;
            dp_pre   <= d_pre;
            dp_lim   <= d_pre - (spm ? SRC_LIM : DRAM_LIM);
            sp_pre   <= s_pre;
            sp_lim   <= s_pre - SPM_LIM;
            dm_lo    <= {8'd0, d_rows[7:0]} * d_dstride;
            dm_hi    <= {8'd0, d_rows[15:8]} * d_dstride;
            sm_lo    <= {8'd0, s_n[7:0]} * d_sstride;
            sm_hi    <= {8'd0, s_n[15:8]} * d_sstride;
        end
    end

    // ---- stage 2: the last addresses and their distance to the limits (sign = inside)
    wire [XW-1:0] d_last = dp_pre + {{(XW-27){1'b0}}, dm_lo} + ({{(XW-27){1'b0}}, dm_hi} << 8);
    wire [XW-1:0] d_dist = dp_lim + {{(XW-27){1'b0}}, dm_lo} + ({{(XW-27){1'b0}}, dm_hi} << 8);
    wire [SW-1:0] s_last = sp_pre + {{(SW-24){1'b0}}, sm_lo} + ({{(SW-24){1'b0}}, sm_hi} << 8);
    wire [SW-1:0] s_dist = sp_lim + {{(SW-24){1'b0}}, sm_lo} + ({{(SW-24){1'b0}}, sm_hi} << 8);
    always @(posedge clk) begin
        if (s1) begin
            dram_err <= !d_dist[XW-1] && !f_fill;   // last byte - 2^DRAM_AW >= 0 (FILL: none)
            dlast    <= d_last[31:0];       // err_info reports the low 32 bits
            spm_err  <= !s_dist[SW-1];      // last word - SPM_WORDS >= 0
            slast    <= s_last[31:0];
        end
    end
    // ---- stage 3 (LOAD_SPM): the source words [daddr / 4S, dlast / 4S] against the destination's
    // [saddr, slast] (the bounding ranges: strided rows that interleave are refused too)
    wire [31:0] src_lo = daddr >> LB;
    wire [31:0] src_hi = dlast >> LB;
    always @(posedge clk) begin
        if (load)    ovl <= 1'b0;   // a LOAD / FILL / STORE: none (no stage 3)
        else if (s2) ovl <= src_lo <= slast && {16'd0, saddr} <= src_hi;
    end
    wire unused_hi = &{1'b0, d_last[XW-1:32], s_last[SW-1:32], SPM_AW[0]};
endmodule
`default_nettype wire
