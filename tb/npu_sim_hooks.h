/*
 * npu_sim_hooks.h - force-included (-include) into the Verilated model and the Verilator runtime
 * with -DVL_PRINTF=npu_sim_vl_printf -DVL_USER_FINISH (Makefile VHOOKS): $display output passes
 * through tb/npu_sim.cpp, which keeps the first "NPU_ASSERT ..." line for npu_sim_assert_msg(),
 * and $finish only stops the model (Verilator's default exits the process on a second $finish).
 */
#ifndef NPU_SIM_HOOKS_H
#define NPU_SIM_HOOKS_H
#ifdef __cplusplus
extern "C"
#endif
    void
    npu_sim_vl_printf(const char *fmt, ...)
#ifdef __GNUC__
        __attribute__((format(printf, 1, 2)))
#endif
        ;
#endif
