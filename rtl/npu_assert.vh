// npu_assert.vh: simulation-only invariant checks, shared by every RTL module.
// Compiled in when NPU_ASSERTS is defined (the test models are built with +define+NPU_ASSERTS;
// synthesis and the speed-reference build leave it out, so checks cost nothing there).
// Plain Verilog (no SVA) so Verilator, Icarus and Yosys all read the same sources.
//
// Usage, inside a module that has clk and rst_n:
//   `include "npu_assert.vh"
//   `ifdef NPU_ASSERTS
//   always @(posedge clk) if (rst_n) begin
//       if (push && full) `NPU_ASSERT_FAIL("push while full")
//   end
//   `endif
// A failure prints "NPU_ASSERT <instance path>: <message>" and ends the simulation with $finish;
// the harness (tb/npu_sim.cpp, npu_sim_run returns -1) turns that into a reported error that
// names the cycle. Messages must not contain commas (they are macro arguments).
`ifndef NPU_ASSERT_VH
`define NPU_ASSERT_VH
`define NPU_ASSERT_FAIL(msg) begin $display("NPU_ASSERT %m: %s", msg); $finish; end
`endif
