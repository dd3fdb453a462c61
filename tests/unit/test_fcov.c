/* test_fcov.c - functional coverage (sw/run/fcov.c): per-WAVE attribution of mode, pass, edge,
 * fan-out and stall on emitted programs; the file round trip; the report. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fmemopen */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/fcov.h"
#include "run/runtime.h"
#include "test_cfgs.h"

static uint64_t sum_mode(const npu_fcov_t *c, unsigned m)
{
    uint64_t s = 0;
    for (int p = 0; p < NPU_FCOV_PASSES; p++)
        for (int e = 0; e < 2; e++)
            for (int f = 0; f < NPU_FCOV_FANS; f++)
                for (int st = 0; st < 2; st++)
                    s += c->hits[m][p][e][f][st];
    return s;
}

static void compile(int pol, int M, int N, int K, npu_gemm_report_t *rep)
{
    npu_cfg_t cfg = test_cfg(8);
    cr_assert_eq(npu_gemm_compile_modes(&cfg, 1u << 24, M, N, K, 0, 0, pol, rep), NPU_GEMM_PASS);
}

Test(fcov, every_wave_attributed_to_mode_pass_edge_fanout)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_gemm_report_t rep;
    npu_fcov_t c;
    /* FW policy, full 16x16 tiles: FW, fan-out 2, fwd (C is tag Y), not edge, no stall */
    compile(NPU_EMIT_FW, 64, 32, 32, &rep);
    memset(&c, 0, sizeof c);
    npu_fcov_program(&cfg, rep.prog.insn, rep.prog.n, 0, &c);
    cr_assert_eq(c.hits[NPU_MODE_FW][NPU_FCOV_FWD][0][NPU_FCOV_FAN2][0], rep.expect.waves[NPU_MODE_FW]);
    cr_assert_eq(npu_fcov_hit_points(&c), 1);
    npu_gemm_report_free(&rep);
    /* an edge n-block (N = 24: 16 + 8) under FlexSA: VSW/ISW waves on the 8-wide block are edge-
     * free for their mode (n = S), FW waves of the k remainder (K = 40: 16, 16, 8) are edge */
    compile(NPU_EMIT_FLEXSA, 70, 24, 40, &rep);
    memset(&c, 0, sizeof c);
    npu_fcov_program(&cfg, rep.prog.insn, rep.prog.n, 1, &c);
    for (unsigned m = 0; m < 4; m++)
        cr_assert_eq(sum_mode(&c, m), rep.expect.waves[m], "mode %u", m);
    cr_assert_gt(c.hits[NPU_MODE_HSW][NPU_FCOV_FWD][0][NPU_FCOV_FAN4][1] +
                 c.hits[NPU_MODE_VSW][NPU_FCOV_FWD][0][NPU_FCOV_FAN2][1], 0);
    cr_assert_eq(c.hits[NPU_MODE_FW][NPU_FCOV_FWD][0][NPU_FCOV_FAN2][0], 0, "stalled run");
    npu_gemm_report_free(&rep);
    /* 1G4C: ISW WAVEs on banks loaded by masked LDWs: fan-out 1 */
    compile(NPU_EMIT_1G4C, 64, 32, 32, &rep);
    memset(&c, 0, sizeof c);
    npu_fcov_program(&cfg, rep.prog.insn, rep.prog.n, 0, &c);
    cr_assert_eq(c.hits[NPU_MODE_ISW][NPU_FCOV_FWD][0][NPU_FCOV_FAN1][0], rep.expect.waves[NPU_MODE_ISW]);
    npu_gemm_report_free(&rep);
}

Test(fcov, pass_comes_from_the_store_tag)
{
    npu_cfg_t cfg = test_cfg(8);
    npu_gemm_report_t rep;
    npu_fcov_t c;
    compile(NPU_EMIT_FW, 32, 16, 16, &rep);
    for (size_t i = 0; i < rep.prog.n; i++) /* relabel the C stores as dW */
        if (npu_insn_op(&rep.prog.insn[i]) == NPU_OP_STORE)
            npu_insn_put(&rep.prog.insn[i], NPU_FLD_STORE_tag, NPU_TAG_DW);
    memset(&c, 0, sizeof c);
    npu_fcov_program(&cfg, rep.prog.insn, rep.prog.n, 0, &c);
    cr_assert_eq(c.hits[NPU_MODE_FW][NPU_FCOV_DW][0][NPU_FCOV_FAN2][0], rep.expect.waves[NPU_MODE_FW]);
    for (size_t i = 0; i < rep.prog.n; i++) /* PARTIAL: no pass, nothing hit */
        if (npu_insn_op(&rep.prog.insn[i]) == NPU_OP_STORE)
            npu_insn_put(&rep.prog.insn[i], NPU_FLD_STORE_tag, NPU_TAG_PARTIAL);
    memset(&c, 0, sizeof c);
    npu_fcov_program(&cfg, rep.prog.insn, rep.prog.n, 0, &c);
    cr_assert_eq(npu_fcov_hit_points(&c), 0);
    npu_gemm_report_free(&rep);
}

Test(fcov, file_round_trip_and_report)
{
    npu_fcov_t c, d;
    char path[] = "/tmp/fcov_test_XXXXXX", buf[4096];
    int fd = mkstemp(path);
    FILE *f;
    cr_assert_geq(fd, 0);
    close(fd);
    memset(&c, 0, sizeof c);
    memset(&d, 0, sizeof d);
    c.hits[NPU_MODE_FW][NPU_FCOV_DX][1][NPU_FCOV_FAN2][1] = 7;
    c.hits[NPU_MODE_ISW][NPU_FCOV_DW][0][NPU_FCOV_FAN1][0] = 3;
    cr_assert_eq(npu_fcov_append(path, &c), 0);
    cr_assert_eq(npu_fcov_append(path, &c), 0);
    cr_assert_eq(npu_fcov_read(path, &d), 0);
    cr_assert_eq(d.hits[NPU_MODE_FW][NPU_FCOV_DX][1][NPU_FCOV_FAN2][1], 14u);
    cr_assert_eq(d.hits[NPU_MODE_ISW][NPU_FCOV_DW][0][NPU_FCOV_FAN1][0], 6u);
    cr_assert_eq(npu_fcov_points(), 60);
    cr_assert_eq(npu_fcov_hit_points(&d), 2);
    f = fmemopen(buf, sizeof buf, "w");
    npu_fcov_print(&d, f);
    fclose(f);
    cr_assert(strstr(buf, "2 of 60 functional cover points hit") != NULL, "%s", buf);
    cr_assert(strstr(buf, "holes: FW/fan2/fwd/full/nostall") != NULL, "%s", buf);
    f = fopen(path, "a");
    fputs("fcov FW fwd 0 4 0 1\n", f); /* FW never has fan-out 4 */
    fclose(f);
    cr_assert_eq(npu_fcov_read(path, &d), -1);
    remove(path);
    cr_assert_eq(npu_fcov_read(path, &d), -1);
}
