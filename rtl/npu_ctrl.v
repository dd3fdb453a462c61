`default_nettype none
// npu_ctrl: CSR file, run state (IDLE -> RUNNING -> DONE | ERROR), the four dependency-token
// counters between the LOAD, EXEC and STORE queues, the no-progress watchdog and the 64-bit
// performance counters. The first error wins: its code, pc and detail are frozen in the CSRs
// and `run` drops, so every unit stops issuing and the host can read the state.
module npu_ctrl #(
    parameter S               = 8,
    parameter SPM_WORDS       = 4096,
    parameter OBUF_ROWS       = 256,
    parameter TOKEN_MAX       = 15,
    parameter WATCHDOG_CYCLES = 20000,
    parameter DTYPE           = 0,     // reported in HW_DTYPE
    parameter NCNT            = 58,
    parameter NERR            = 4,
    // counters whose increment arrives one cycle after its event (registered at the source:
    // npu_spm's counts); they are added while run was high two cycles earlier (run_q2)
    parameter [NCNT-1:0] LATE_CNT = {NCNT{1'b0}}
) (
    input  wire                clk,
    input  wire                rst_n,
    input  wire [11:0]         csr_addr,
    input  wire [31:0]         csr_wdata,
    input  wire                csr_we,
    output reg  [31:0]         csr_rdata,
    output wire                halted,
    output wire                unit_rst_n,   // units are reset for one cycle when a run starts
    output reg                 fetch_start,  // one-cycle pulse after that reset
    output wire                run,
    output reg  [31:0]         prog_base,
    output reg  [31:0]         prog_len,
    // machine state
    input  wire                fetch_done,
    input  wire [31:0]         fetch_pc,
    input  wire [3:0]          ql_cnt,
    input  wire [3:0]          qe_cnt,
    input  wire [3:0]          qs_cnt,
    input  wire                busy_l,
    input  wire                busy_e,
    input  wire                busy_s,
    input  wire [31:0]         pc_l,
    input  wire [31:0]         pc_e,
    input  wire [31:0]         pc_s,
    input  wire                progress,
    // errors from the units (level or pulse; the first one is latched)
    input  wire [NERR-1:0]     err_vec,
    input  wire [NERR*8-1:0]   err_code,
    input  wire [NERR*32-1:0]  err_info,
    input  wire [NERR*32-1:0]  err_pc,
    // dependency tokens: l2e, e2l, e2s, s2e
    input  wire                pop_l2e,
    input  wire                pop_e2l,
    input  wire                pop_e2s,
    input  wire                pop_s2e,
    input  wire                push_l2e,
    input  wire [2:0]          push_e2l,
    input  wire [2:0]          push_e2s,
    input  wire                push_s2e,
    output wire                l2e_avail,
    output wire                e2l_avail,
    output wire                e2s_avail,
    output wire                s2e_avail,
    // performance counter increments, 16 bits each, index order of NPU_COUNTERS
    input  wire [NCNT*16-1:0]  cnt_inc,
    // NoC head flits (npu_top), frozen with the error so the host sees the stuck flit
    input  wire [31:0]         noc_state,
    // the DRAM port owes no R beat or B response (npu_axi_owed): halted waits for it
    input  wire                dram_quiet
);
`include "npu_defs.vh"
    reg  [1:0]  state;
    reg  [7:0]  e_code;
    reg  [31:0] e_pc, e_info, e_noc;
    reg  [31:0] wd_limit, wd_cnt;
    reg         srst;
    reg         run_q;              // run, one cycle late (counter pipeline)
    reg         run_q2;             // run, two cycles late (the LATE_CNT counters)
    reg  [NCNT*16-1:0] inc_q;       // counter increments, one cycle late
    reg  [7:0]  tok [0:3];
    reg  [63:0] cnt [0:NCNT-1];

    // A late counter's increment still in inc_q when run_q has dropped is added in this cycle:
    // halted waits for it (only after an error can one be there: no unit touches the SPM in the
    // cycle all are idle, see the assertion below, so a DONE halts as early as before).
    reg  [NCNT-1:0] late_nz;
    integer li;
    always @(*)
        for (li = 0; li < NCNT; li = li + 1)
            late_nz[li] = LATE_CNT[li] && inc_q[li*16 +: 16] != 16'd0;
    wire late_pend    = run_q2 && |late_nz;
    assign halted     = (state == ST_DONE || state == ST_ERROR) && !run_q && !late_pend && dram_quiet;
    assign run        = state == ST_RUNNING && !srst && !fetch_start;
    assign unit_rst_n = rst_n && !srst;
    assign l2e_avail  = tok[0] != 8'd0;
    assign e2l_avail  = tok[1] != 8'd0;
    assign e2s_avail  = tok[2] != 8'd0;
    assign s2e_avail  = tok[3] != 8'd0;

    wire start = csr_we && csr_addr == CSR_CTRL && csr_wdata[0] && state != ST_RUNNING;
    wire clear = start || (csr_we && csr_addr == CSR_CTRL && csr_wdata[1]);

    // token arithmetic in 8 bits so an overflow past TOKEN_MAX is visible
    wire [7:0] tok_next0 = tok[0] + {7'd0, push_l2e} - {7'd0, pop_l2e};
    wire [7:0] tok_next1 = tok[1] + {5'd0, push_e2l} - {7'd0, pop_e2l};
    wire [7:0] tok_next2 = tok[2] + {5'd0, push_e2s} - {7'd0, pop_e2s};
    wire [7:0] tok_next3 = tok[3] + {7'd0, push_s2e} - {7'd0, pop_s2e};
    localparam [7:0] TMAX = TOKEN_MAX[7:0];
    // The overflow check of each counter, (tok + push - pop) mod 256 > TMAX, with the pop (the
    // latest input: the EXEC issue's) only selecting between two precomputed compares, so the
    // error capture does not wait for the add and the compare.
    wire [7:0] tok_p0 = tok[0] + {7'd0, push_l2e}, tok_p1 = tok[1] + {5'd0, push_e2l};
    wire [7:0] tok_p2 = tok[2] + {5'd0, push_e2s}, tok_p3 = tok[3] + {7'd0, push_s2e};
    wire [3:0] ovf_nopop = {tok_p3 > TMAX, tok_p2 > TMAX, tok_p1 > TMAX, tok_p0 > TMAX};
    // with a pop: above TMAX + 1, or 0 (a pop without a token wraps to 255: reported too);
    // equal to the sum's compare for every TMAX below 255 (gencfg: TOKEN_MAX 1..15)
    localparam [8:0] TMAX1 = {1'b0, TMAX} + 9'd1;
    wire [3:0] ovf_pop = {{1'b0, tok_p3} > TMAX1 || tok_p3 == 8'd0,
                          {1'b0, tok_p2} > TMAX1 || tok_p2 == 8'd0,
                          {1'b0, tok_p1} > TMAX1 || tok_p1 == 8'd0,
                          {1'b0, tok_p0} > TMAX1 || tok_p0 == 8'd0};
    wire [3:0] pops = {pop_s2e, pop_e2s, pop_e2l, pop_l2e};
    wire [3:0] tok_ovf = (pops & ovf_pop) | (~pops & ovf_nopop);

    wire [31:0] qstate = {busy_s, busy_e, busy_l, fetch_done,
                          tok[3][3:0], tok[2][3:0], tok[1][3:0], tok[0][3:0],
                          qs_cnt, qe_cnt, ql_cnt};
    wire all_idle = fetch_done && ql_cnt == 4'd0 && qe_cnt == 4'd0 && qs_cnt == 4'd0
                 && !busy_l && !busy_e && !busy_s;

    // first unit error by priority (index 0 first)
    reg        u_err;
    reg [7:0]  u_code;
    reg [31:0] u_pc, u_info;
    integer i;
    always @(*) begin
        u_err = 1'b0; u_code = ERR_NONE; u_pc = 32'd0; u_info = 32'd0;
        for (i = NERR - 1; i >= 0; i = i - 1)
            if (err_vec[i]) begin
                u_err  = 1'b1;
                u_code = err_code[i*8 +: 8];
                u_pc   = err_pc[i*32 +: 32];
                u_info = err_info[i*32 +: 32];
            end
    end

    // the queue whose head is most likely stuck: EXEC, else LOAD, else STORE
    wire [31:0] stuck_pc = (qe_cnt != 0 || busy_e) ? pc_e : (ql_cnt != 0 || busy_l) ? pc_l : pc_s;

    always @(posedge clk) begin
        if (!rst_n) begin
            state <= ST_IDLE; e_code <= ERR_NONE; e_pc <= 0; e_info <= 0; e_noc <= 0;
            prog_base <= 0; prog_len <= 0; wd_limit <= WATCHDOG_CYCLES; wd_cnt <= 0;
            srst <= 1'b0; fetch_start <= 1'b0;
            for (i = 0; i < 4; i = i + 1) tok[i] <= 8'd0;
        end else begin
            srst        <= start;
            fetch_start <= srst;
            if (csr_we && csr_addr == CSR_PROG_BASE) prog_base <= csr_wdata;
            if (csr_we && csr_addr == CSR_PROG_LEN)  prog_len  <= csr_wdata;
            if (csr_we && csr_addr == CSR_WATCHDOG)  wd_limit  <= csr_wdata;
            if (start) begin
                state  <= ST_RUNNING;
                e_code <= ERR_NONE; e_pc <= 0; e_info <= 0; e_noc <= 0; wd_cnt <= 0;
                for (i = 0; i < 4; i = i + 1) tok[i] <= 8'd0;
            end else if (run) begin
                tok[0] <= tok_next0; tok[1] <= tok_next1; tok[2] <= tok_next2; tok[3] <= tok_next3;
                wd_cnt <= progress ? 32'd0 : wd_cnt + 32'd1;
                e_noc  <= noc_state;   // kept from the last running cycle: the error's view
                if (u_err) begin
                    state <= ST_ERROR; e_code <= u_code; e_pc <= u_pc; e_info <= u_info;
                end else if (|tok_ov) begin
                    state <= ST_ERROR; e_code <= ERR_TOKEN_OVERFLOW; e_pc <= stuck_pc;
                    e_info <= {28'd0, tok_ovf};
                end else if (wd_limit != 0 && wd_cnt >= wd_limit) begin
                    state <= ST_ERROR; e_code <= ERR_DEADLOCK; e_pc <= stuck_pc; e_info <= qstate;
                end else if (all_idle) begin
                    state <= ST_DONE;
                end
            end
        end
    end
    wire [3:0] tok_ov = tok_ovf;

    // Performance counters count while the program runs. One loop with blocking assignments:
    // the array is read only by the combinational CSR mux below, never by another clocked
    // process, so there is no ordering race, and Verilator updates it in place (non-blocking
    // writes to an unpacked array cost a shadow copy and a flag per element, every cycle: this
    // block was the most expensive control logic of the whole simulation).
    integer c;
    /* verilator lint_off BLKSEQ */
    // The increments are registered first (adders one cycle late): the event logic feeding them is
    // then not in series with the 64-bit adders, which synthesis found on the NPU's deepest path.
    // `halted` waits for that last registered increment, so a halted NPU's counters are complete.
    // LATE_CNT counters arrive one cycle after their event and are added under run_q2, so every
    // counter counts exactly the events of the cycles in which run was high.
    always @(posedge clk) begin
        if (!rst_n || clear) begin
            run_q  <= 1'b0;
            run_q2 <= 1'b0;
        end else begin
            run_q  <= run;
            run_q2 <= run_q;
            inc_q  <= cnt_inc;
        end
        for (c = 0; c < NCNT; c = c + 1) begin
            if (!rst_n || clear)                   cnt[c] = 64'd0;
            else if (LATE_CNT[c] ? run_q2 : run_q) cnt[c] = cnt[c] + {48'd0, inc_q[c*16 +: 16]};
        end
    end
    /* verilator lint_on BLKSEQ */

    // CSR reads
    localparam CIW = $clog2(NCNT);
    wire [11:0] ci_lo = csr_addr - CSR_CNT_LO;
    wire [11:0] ci_hi = csr_addr - CSR_CNT_HI;
    always @(*) begin
        csr_rdata = 32'd0;
        case (csr_addr)
            CSR_CTRL:      csr_rdata = 32'd0;
            CSR_STATUS:    csr_rdata = {16'd0, e_code, 6'd0, state};
            CSR_ERR_PC:    csr_rdata = e_pc;
            CSR_ERR_INFO:  csr_rdata = e_info;
            CSR_PROG_BASE: csr_rdata = prog_base;
            CSR_PROG_LEN:  csr_rdata = prog_len;
            CSR_WATCHDOG:  csr_rdata = wd_limit;
            CSR_HW_S:      csr_rdata = S;
            CSR_HW_SPM:    csr_rdata = SPM_WORDS;
            CSR_HW_OBUF:   csr_rdata = OBUF_ROWS;
            CSR_HW_DTYPE:  csr_rdata = DTYPE;
            CSR_QSTATE:    csr_rdata = qstate;
            CSR_PC_L:      csr_rdata = pc_l;
            CSR_PC_E:      csr_rdata = pc_e;
            CSR_PC_S:      csr_rdata = pc_s;
            CSR_FETCH_PC:  csr_rdata = fetch_pc;
            CSR_NOCSTATE:  csr_rdata = state == ST_RUNNING ? noc_state : e_noc;
            default: begin
                if (csr_addr >= CSR_CNT_LO && {20'd0, ci_lo} < NCNT)
                    csr_rdata = cnt[ci_lo[CIW-1:0]][31:0];
                else if (csr_addr >= CSR_CNT_HI && {20'd0, ci_hi} < NCNT)
                    csr_rdata = cnt[ci_hi[CIW-1:0]][63:32];
            end
        endcase
    end

`include "npu_assert.vh"
`ifdef NPU_ASSERTS
    // Token counters: a pop needs a token (else the counter would wrap and be reported as an
    // overflow, hiding the real bug), and no counter is above TOKEN_MAX while running (an
    // overflow always ends the run with ERR_TOKEN_OVERFLOW in the same cycle).
    always @(posedge clk) if (rst_n && run) begin
        if ((pop_l2e && tok[0] == 8'd0) || (pop_e2l && tok[1] == 8'd0)
            || (pop_e2s && tok[2] == 8'd0) || (pop_s2e && tok[3] == 8'd0))
            `NPU_ASSERT_FAIL("token counter underflow (pop without a token)")
        if (tok[0] > TMAX || tok[1] > TMAX || tok[2] > TMAX || tok[3] > TMAX)
            `NPU_ASSERT_FAIL("token counter above TOKEN_MAX while running (unreported overflow)")
    end
    // A late counter event in the cycle the NPU went idle (DONE) would delay `halted` by a cycle:
    // the units touch the SPM only while busy, so it never happens.
    always @(posedge clk) if (rst_n && state == ST_DONE && !run_q && late_pend)
        `NPU_ASSERT_FAIL("late counter event after the last busy cycle")
`endif
endmodule
`default_nettype wire
