// rtl/npu.f: the NPU's RTL files, one path per line (from the repository root), each module
// after every module it instantiates, npu_top last. The Makefile reads it into RTL (lint,
// models, coverage, synthesis: constraints/synth.sh) and stops if a file in rtl/ is missing
// here. Comments: // to the end of the line (Verilator -f reads this file as it is).
// leaves and shared blocks
// the bf16 arithmetic units (issue 15): npu_pe's BF16 MAC, the OBUF's and DRAIN acc's fp32 add,
// the narrow DRAIN's conversion (`make bf16-check` tests them against the C model)
rtl/npu_bf16_mul.v
rtl/npu_fp32_add.v
rtl/npu_fp32_to_bf16.v
rtl/npu_drain_narrow.v
// the packed DRAIN's lane packer (issue 14: short output rows back to back in the SPM)
rtl/npu_drain_pack.v
rtl/npu_fp32_mul.v
rtl/npu_pe.v
rtl/npu_core.v
rtl/npu_flexsa.v
rtl/npu_obuf.v
rtl/npu_fifo.v
rtl/npu_range_fifo.v
rtl/npu_burst_len.v
rtl/npu_axi_owed.v
rtl/npu_axi_rd_arb.v
rtl/npu_spm.v
rtl/npu_spm_reader.v
rtl/npu_spm_burst.v
rtl/npu_noc.v
// control, fetch, DMA
rtl/npu_ctrl.v
rtl/npu_fetch.v
rtl/npu_dmaq.v
rtl/npu_dma_desc.v
rtl/npu_dma_align.v
rtl/npu_dma_pack.v
rtl/npu_dma_load.v
rtl/npu_dma_store.v
// EXEC queue: the units, then npu_exec
rtl/npu_exec_decode.v
rtl/npu_exec_ldw_rows.v
rtl/npu_exec_ldw.v
rtl/npu_exec_wave.v
rtl/npu_exec_inject.v
rtl/npu_exec_events.v
rtl/npu_exec_obuf_hazard.v
rtl/npu_exec_drain.v
rtl/npu_vec_lane_fp.v
rtl/npu_vec_lane_int.v
rtl/npu_exec_vec.v
rtl/npu_exec.v
// top
rtl/npu_perf_counters.v
rtl/npu_top.v
