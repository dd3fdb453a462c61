`default_nettype none
// tb_bf16_units: the bf16 arithmetic units' RTL against the C model's expected results
// (tests/fp/bf16_vectors.c writes the vector files; `make bf16-check` runs both).
//   vvp tb.vvp +dir=DIR    reads DIR/counts.hex and DIR/{mul,add,cvt,mac,fpm}.hex
// Applies every vector to npu_bf16_mul, npu_fp32_add, npu_fp32_to_bf16, npu_fp32_mul (combinational) and to
// npu_pe with BF16 = 1 (clocked: the weight written into one bank, then one MAC step with that bank
// selected, banks alternating), compares bit for bit (an X counts as a mismatch), prints the first
// mismatches and a summary line, and ends with $fatal (exit status 1) on any mismatch (an
// unreadable vector leaves X, a mismatch) or a bad count.
module tb_bf16_units;
    localparam MAX = 1 << 17;   // vectors per file, at most
    reg [127:0] vec [0:MAX-1];
    reg [8*1024-1:0] dir, path;

    reg  [15:0] mul_a, mul_b;
    wire [31:0] mul_p;
    reg  [31:0] add_a, add_b;
    wire [31:0] add_s;
    reg  [31:0] cvt_x;
    wire [15:0] cvt_y;
    reg  [31:0] fpm_a, fpm_b;
    wire [31:0] fpm_p;
    reg         clk, a_sel, w_we, w_bank;
    reg  [15:0] pe_a, pe_w;
    reg  [31:0] pe_psum;
    wire [15:0] pe_a_out;
    wire        pe_sel_out;
    wire [31:0] pe_out;

    npu_bf16_mul     u_mul (.a(mul_a), .b(mul_b), .p(mul_p));
    npu_fp32_add     u_add (.a(add_a), .b(add_b), .s(add_s));
    npu_fp32_to_bf16 u_cvt (.x(cvt_x), .y(cvt_y));
    npu_fp32_mul     u_fpm (.a(fpm_a), .b(fpm_b), .p(fpm_p));
    npu_pe #(.BF16(1)) u_pe (.clk(clk), .a_in(pe_a), .a_sel_in(a_sel), .psum_in(pe_psum),
                           .w_we(w_we), .w_bank(w_bank), .w_in(pe_w), .a_out(pe_a_out),
                           .a_sel_out(pe_sel_out), .psum_out(pe_out));

    integer n, i, f, bad, total;
    reg [31:0] counts [0:4];
    reg [31:0] got, want;

    // The f'th unit's name: its vector file is DIR/<name>.hex.
    function [8*3-1:0] unit;
        input integer f;
        unit = f == 0 ? "mul" : f == 1 ? "add" : f == 2 ? "cvt" : f == 3 ? "mac" : "fpm";
    endfunction

    // Reads the f'th vector file into vec[0 .. n-1] (n from counts.hex).
    task load;
        input integer f;
        begin
            n = counts[f];
            if (counts[f] === 32'bx || n < 1 || n > MAX)
                $fatal(1, "tb_bf16_units: bad vector count for %0s", unit(f));
            for (i = 0; i < n; i = i + 1) vec[i] = 128'bx;
            $sformat(path, "%0s/%0s.hex", dir, unit(f));
            $readmemh(path, vec, 0, n - 1);
        end
    endtask

    // Applies vector v (number i) to the f'th unit; got = its result, want = the model's.
    task apply;
        input integer f;
        input [127:0] v;
        begin
            want = v[31:0];
            case (f)
                0: begin {mul_a, mul_b} = v[63:32]; #1 got = mul_p; end
                1: begin {add_a, add_b} = v[95:32]; #1 got = add_s; end
                2: begin cvt_x = v[47:16]; want = {16'd0, v[15:0]}; #1 got = {16'd0, cvt_y}; end
                4: begin {fpm_a, fpm_b} = v[95:32]; #1 got = fpm_p; end
                default: begin
                    // Write w into bank i % 2 (the PE holds the other bank's previous weight) ...
                    w_we = 1; w_bank = i[0]; pe_w = v[47:32];
                    #1 clk = 1; #1 clk = 0;
                    // ... then one MAC with that bank, a junk weight written into the other bank.
                    w_we = 1; w_bank = !i[0]; pe_w = ~v[47:32];
                    a_sel = i[0]; pe_a = v[63:48]; pe_psum = v[95:64];
                    #1 clk = 1; #1 clk = 0;
                    got = pe_out;
                    if (pe_a_out !== pe_a || pe_sel_out !== a_sel) got = 32'bx;
                end
            endcase
        end
    endtask

    initial begin
        if (!$value$plusargs("dir=%s", dir)) dir = "build/fp";
        bad = 0; total = 0;
        $sformat(path, "%0s/counts.hex", dir);
        $readmemh(path, counts);
        clk = 0; a_sel = 0; w_we = 0; w_bank = 0; pe_a = 0; pe_w = 0; pe_psum = 0;
        for (f = 0; f < 5; f = f + 1) begin
            load(f);
            for (i = 0; i < n; i = i + 1) begin
                apply(f, vec[i]);
                if (got !== want) begin
                    if (bad < 10)
                        $display("MISMATCH %0s vector %0d: %h -> got %h", unit(f), i, vec[i], got);
                    bad = bad + 1;
                end
            end
            total = total + n;
        end
        $display("bf16 units (RTL vs C model): %0d vectors, %0d mismatches", total, bad);
        if (bad != 0) $fatal(1, "tb_bf16_units: %0d mismatches", bad);
        $finish;
    end
endmodule
`default_nettype wire
