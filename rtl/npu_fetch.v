`default_nettype none
// npu_fetch: reads the program (PROG_LEN 128-bit instructions at PROG_BASE) from DRAM in bursts,
// splits beats into instructions, checks the opcode and pushes each instruction with its index
// (pc) into the LOAD, EXEC or STORE queue. It stops at an illegal opcode (error with its pc).
module npu_fetch #(
    parameter S         = 8,     // a beat is 4S bytes: npu_top passes S * BEAT_WORDS (a DRAM beat)
    parameter DRAM_AW   = 24,
    parameter MAX_BURST = 16
) (
    input  wire           clk,
    input  wire           rst_n,
    input  wire           start,        // one-cycle pulse: begin a new program
    input  wire           run,          // 0 after an error: stop issuing requests
    input  wire [31:0]    prog_base,
    input  wire [31:0]    prog_len,
    // AXI-like read master
    output wire           ar_vld,
    input  wire           ar_rdy,
    output wire [31:0]    ar_addr,
    output wire [7:0]     ar_len,
    input  wire           r_vld,
    output wire           r_rdy,
    input  wire [32*S-1:0] r_data,
    input  wire           r_last,
    input  wire           r_resp,
    // instruction queues (instruction in [127:0], pc in [159:128])
    output wire [159:0]   q_din,
    output wire           ql_push,
    input  wire           ql_full,
    output wire           qe_push,
    input  wire           qe_full,
    output wire           qs_push,
    input  wire           qs_full,
    output wire           done,         // every instruction has been pushed
    output wire [31:0]    fetch_pc,
    output wire           err,
    output wire [7:0]     err_code,
    output wire [31:0]    err_info,
    output wire [31:0]    err_pc,
    output wire           ev_beat,
    output wire           ev_burst
);
`include "npu_defs.vh"
    localparam B     = 4 * S;                    // bytes per beat
    localparam WB    = 32 * S;
    // The beat buffer holds two bursts, so one burst streams in while the previous one is
    // being split into instructions (fetch keeps up with one-cycle instructions even at S=2).
    localparam BUF   = 2 * MAX_BURST;
    localparam BW    = $clog2(BUF + 1);
    // Instructions per beat (B >= 16) or beats per instruction (B < 16).
    localparam IPB   = (B >= 16) ? B / 16 : 1;
    localparam BPI   = (B >= 16) ? 1 : 16 / B;
    localparam ALIGN = (B >= 16) ? B : 16;

    reg         active;
    reg  [31:0] pc;                 // next instruction to push
    reg         pc_last;            // pc + 1 == len, kept in a register (off the beat-pop path)
    reg  [31:0] len;
    // next beat address: stays below prog_end <= 2^DRAM_AW <= 2^32 (checked at start), so 32 bits
    reg  [31:0] addr;
    reg  [31:0] raddr;              // address of the next beat to return (bursts come in order)
    reg  [31:0] beats_left;         // beats not yet requested
    // Room of the beat buffer: BUF - (beats in flight + bf_count), one register instead of the
    // sum of two counters, so the check before a request is one small compare and the AR
    // handshake only selects between two precomputed updates (part of the depth cut of issue 7).
    reg  [BW:0] room;
    reg         failed;
    reg  [7:0]  f_code;
    reg  [31:0] f_info;

    // beat buffer sized for a whole burst, so r_rdy never depends on the queues
    // room plus the beats freed this cycle, for each value of the late signals (a pop follows
    // the queues and the opcode decode, the AR handshake the arbiter): they only select
    wire [BW:0] room_d, room_d1, room_db, room_d1b;
    wire         bf_full, bf_empty;
    wire [BW-1:0] bf_count;
    wire [WB-1:0] bf_dout;
    wire         bf_pop;

    // beats wanted, clipped to 16 bits (a burst is at most MAX_BURST <= 256 beats anyway)
    wire [15:0] want   = (beats_left > 32'hFFFF) ? 16'hFFFF : beats_left[15:0];
    wire [15:0] blen16;             // registered: valid when blen_ok (npu_burst_len)
    wire        blen_ok, blen_whole;
    wire        ar_fire = ar_vld && ar_rdy;
    npu_burst_len #(.S(S), .MAX_BURST(MAX_BURST)) u_blen (
        .clk(clk), .rst_n(rst_n), .addr(addr[11:0]), .want(want), .upd(start || ar_fire),
        .len(blen16), .whole(blen_whole), .ok(blen_ok));
    wire [31:0] blen   = {16'd0, blen16};
    // blen16 <= MAX_BURST < 2^BW (BUF = 2 MAX_BURST), so the low BW+1 bits carry it
    wire [BW:0] blen_b = blen16[BW:0];
    localparam [31:0] BUF32 = BUF;
    assign ar_vld  = active && run && !failed && beats_left != 0 && blen_ok
                  && blen_b <= room;
    assign ar_addr = addr;
    assign ar_len  = blen[7:0] - 8'd1;
    assign r_rdy   = 1'b1;
    assign ev_beat = r_vld && !r_resp;
    assign ev_burst = ar_fire;

    wire bf_push = r_vld && !r_resp && active;
    assign room_d   = room + {{BW{1'b0}}, r_vld && !bf_push};   // + a dropped beat
    assign room_d1  = room_d + {{BW{1'b0}}, 1'b1};               // + a popped beat
    assign room_db  = room_d - blen_b;                           // - a requested burst
    assign room_d1b = room_d1 - blen_b;
    npu_fifo #(.W(WB), .DEPTH(BUF)) u_beats (
        .clk(clk), .rst_n(rst_n && !start),
        .push(bf_push), .din(r_data),
        .pop(bf_pop), .dout(bf_dout), .full(bf_full), .empty(bf_empty), .count(bf_count)
    );

    // ---- split beats into instructions
    wire [INSN_BITS-1:0] insn;
    wire         insn_vld;
    wire         insn_take;
    generate
        if (B >= 16) begin : g_wide
            localparam SLW = $clog2(IPB + 1);
            localparam [SLW-1:0] LAST = IPB[SLW-1:0] - 1'b1;
            reg [SLW-1:0] slot;
            assign insn     = bf_dout[slot*INSN_BITS +: INSN_BITS];
            assign insn_vld = !bf_empty;
            // a beat is consumed after its last slot or after the program's last instruction
            assign bf_pop   = insn_take && (slot == LAST || pc_last);
            always @(posedge clk) begin
                if (!rst_n || start) slot <= 0;
                else if (insn_take) slot <= (slot == LAST) ? {SLW{1'b0}} : slot + 1'b1;
            end
        end else begin : g_narrow
            reg [INSN_BITS-1:0] asm_q;
            localparam NBW = $clog2(BPI + 1);
            localparam [NBW-1:0] FULL = BPI[NBW-1:0];
            reg [NBW-1:0] nb;
            assign insn     = asm_q;
            assign insn_vld = nb == FULL;
            assign bf_pop   = !bf_empty && nb != FULL;
            always @(posedge clk) begin
                if (!rst_n || start) nb <= 0;
                else begin
                    if (bf_pop) begin
                        asm_q <= {bf_dout, asm_q[INSN_BITS-1:WB]};   // little-endian: later beats are higher
                        nb    <= nb + 1'b1;
                    end else if (insn_take) nb <= 0;
                end
            end
        end
    endgenerate

    wire [F_INSN_OP_W-1:0] op = insn[F_INSN_OP_LSB +: F_INSN_OP_W];
    // The opcodes the hardware executes, each listed by hand (not every name of the generated
    // list): an opcode the RTL does not implement yet stays ILLEGAL_OPCODE instead of being
    // run as something else. FILL and LOAD_SPM run in the LOAD DMA engine (npu_dma_load).
    wire to_l = op == OP_LOAD || op == OP_SYNC_L || op == OP_FILL || op == OP_LOAD_SPM;
    wire to_s = op == OP_STORE || op == OP_SYNC_S;
    wire to_e = op == OP_LDW || op == OP_WAVE || op == OP_DRAIN || op == OP_SYNC_E
             || op == OP_VEC || op == OP_VSET;
    wire illegal = !(to_l || to_s || to_e);
    wire have = active && run && !failed && insn_vld && pc != len;
    assign insn_take = have && !illegal && ((to_l && !ql_full) || (to_s && !qs_full) || (to_e && !qe_full));
    assign ql_push = insn_take && to_l;
    assign qs_push = insn_take && to_s;
    assign qe_push = insn_take && to_e;
    assign q_din   = {pc, insn};

    // ---- program checks at start
    wire [47:0] prog_end = {16'd0, prog_base} + {12'd0, prog_len, 4'd0};
    wire bad_prog = (prog_base % ALIGN) != 0 || prog_end > (48'd1 << DRAM_AW);

    always @(posedge clk) begin
        if (!rst_n) begin
            active <= 1'b0; failed <= 1'b0; pc <= 0; pc_last <= 1'b0; len <= 0; beats_left <= 0;
            room <= BUF32[BW:0];
            f_code <= ERR_NONE; f_info <= 0; addr <= 0; raddr <= 0;
        end else if (start) begin
            active     <= !bad_prog;
            failed     <= bad_prog;
            f_code     <= bad_prog ? ERR_BAD_PROGRAM : ERR_NONE;
            f_info     <= prog_base;
            pc         <= 0;
            pc_last    <= prog_len == 32'd1;
            len        <= prog_len;
            addr       <= prog_base;
            raddr      <= prog_base;
            beats_left <= (prog_len * 16 + B - 1) / B;
            room       <= BUF32[BW:0];
        end else begin
            if (ar_fire) begin
                addr       <= addr + blen * B;
                beats_left <= beats_left - blen;
            end
            // - a burst's beats when requested, + a beat that is dropped (error response, or
            // arriving while inactive), + a beat popped from the buffer
            if (bf_pop && !bf_empty) room <= ar_fire ? room_d1b : room_d1;
            else                     room <= ar_fire ? room_db : room_d;
            if (r_vld && active) raddr <= raddr + B;
            // ERR_INFO names the beat that came back with the error response
            if (r_vld && r_resp && active && !failed) begin
                failed <= 1'b1; f_code <= ERR_DRAM_RESP; f_info <= raddr;
            end
            if (have && illegal && !failed) begin
                failed <= 1'b1; f_code <= ERR_ILLEGAL_OPCODE; f_info <= {{(32-F_INSN_OP_W){1'b0}}, op};
            end
            if (insn_take) begin
                pc      <= pc + 1;
                pc_last <= pc + 2 == len;
            end
        end
    end

    assign done     = active && pc == len;
    assign fetch_pc = pc;
    assign err      = failed;
    assign err_code = f_code;
    assign err_info = f_info;
    assign err_pc   = pc;
    wire unused = &{1'b0, bf_full, r_last,    // beats are counted, bursts need no end marker
                    bf_count,                 // the room check uses room (bf_count is in it)
                    blen_whole,               // beats_left counts down to 0 instead
                    pc_last};                 // used when a beat holds several instructions

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // AR payload as offered last cycle, for the stability checks (AXI: once valid is high, valid
    // and payload hold until ready; an error stop (run or failed low) may withdraw the request)
    reg        ar_pend;
    reg [31:0] ar_addr_q;
    reg [7:0]  ar_len_q;
    always @(posedge clk) begin
        ar_pend   <= rst_n && !start && ar_vld && !ar_rdy;
        ar_addr_q <= ar_addr;
        ar_len_q  <= ar_len;
    end
    always @(posedge clk) if (rst_n && !start) begin
        if (ar_pend && run && !failed && !ar_vld) `NPU_ASSERT_FAIL("fetch AR valid dropped before ready")
        if (ar_pend && ar_vld && (ar_addr != ar_addr_q || ar_len != ar_len_q))
            `NPU_ASSERT_FAIL("fetch AR payload changed before ready")
        if (ar_vld && (blen == 32'd0 || blen > MAX_BURST))
            `NPU_ASSERT_FAIL("fetch burst length not in 1..MAX_BURST")
        if (ar_vld && {20'd0, addr[11:0]} + blen * B > 32'd4096)
            `NPU_ASSERT_FAIL("fetch burst crosses a 4 KiB line")
        if (ar_vld && blen > beats_left) `NPU_ASSERT_FAIL("fetch burst past the program end")
        if (room > BUF32[BW:0]) `NPU_ASSERT_FAIL("fetch beat buffer room above its size")
        if (BUF32[BW:0] - room < {1'b0, bf_count}) `NPU_ASSERT_FAIL("fetch beats in flight underflow")
        if (bf_push && bf_full && !(bf_pop && !bf_empty))
            `NPU_ASSERT_FAIL("fetch beat buffer overflow")
        if ((ql_push && ql_full) || (qe_push && qe_full) || (qs_push && qs_full))
            `NPU_ASSERT_FAIL("fetch pushes into a full instruction queue")
        if (active && pc > len) `NPU_ASSERT_FAIL("fetch pc past the program length")
        if (pc_last != (pc + 1 == len)) `NPU_ASSERT_FAIL("fetch pc_last out of step with pc")
    end
`endif
endmodule
`default_nettype wire
