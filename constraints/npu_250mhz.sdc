# constraints/npu_250mhz.sdc -- FlexTrain NPU, top module npu_top, target clock 250 MHz (4.000 ns).
#
# For downstream timing tools (OpenSTA / OpenROAD, Synopsys DC / PrimeTime, Cadence Genus /
# Tempus). Yosys does not read SDC: `make synth` gives logic levels on generic gates, not
# nanoseconds (constraints/README.md). Rough guide for this target: about 90-110 levels of 2-input
# gates fit in a cycle after clock-to-Q, setup and the uncertainty below (45 nm-class library);
# compare with the "depth" column and the deepest path of the synth report.
# Only standard SDC commands; the library-specific lines at the end are commented out.

set clk_period 4.000

# ---- clock: one clock domain, clk, rising edge everywhere (all flip-flops use posedge clk)
create_clock -name clk -period $clk_period [get_ports clk]
# jitter + skew margin before clock-tree synthesis
set_clock_uncertainty [expr {0.05 * $clk_period}] [get_clocks clk]

# ---- I/O: every port is synchronous to clk (the AXI-like DRAM master and the CSR port).
# 40% of the cycle is budgeted outside the NPU on each side. The DRAM model is a Moore machine
# (docs/memory.md §1), so its ready/valid do not depend combinationally on the NPU's outputs.
set io_in   [get_ports {rst_n csr_addr* csr_wdata* csr_we m_ar_ready m_r_valid m_r_data* m_r_last m_r_id* m_r_resp m_aw_ready m_w_ready m_b_valid m_b_resp}]
set io_out  [get_ports {m_ar_valid m_ar_addr* m_ar_len* m_ar_id* m_r_ready m_aw_valid m_aw_addr* m_aw_len* m_w_valid m_w_data* m_w_strb* m_w_last m_b_ready}]
set_input_delay  [expr {0.40 * $clk_period}] -clock clk $io_in
set_output_delay [expr {0.40 * $clk_period}] -clock clk $io_out
# rst_n is a synchronous reset (sampled at posedge clk by every unit with state): it stays a
# timed input; drive it from a reset synchroniser outside the NPU.

# ---- CSR port false paths. csr_rdata is a combinational read of the CSR mux (docs/isa.md §6):
# the host samples it without a clock edge of the NPU (the harness sets csr_addr, evaluates, then
# reads), so csr_addr -> csr_rdata and the counters/status registers -> csr_rdata are not
# clk-to-clk paths. halted is a level the host polls. CSR writes (csr_we, csr_addr, csr_wdata into
# the registers) stay timed: they take effect at a clock edge.
set_output_delay 0 -clock clk [get_ports {csr_rdata* halted}]
set_false_path -to [get_ports {csr_rdata* halted}]

# ---- library-specific (uncomment with your library's cell names and units)
# set_driving_cell -lib_cell BUF_X2 $io_in
# set_load 0.005 [all_outputs]
# set_max_transition [expr {0.10 * $clk_period}] [current_design]
