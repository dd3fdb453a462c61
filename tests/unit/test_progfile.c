/*
 * test_progfile.c - saved programs (sw/run/progfile.h) on the C functional model:
 *
 * progfile/round_trip  a GEMM run, saved, loaded (a file of one program that starts a simulator at
 *                      the run's start cycle): sizes, plan, layout, program, timing, expected
 *                      results equal the run's; replayed on a fresh model: PASS, same cycles and
 *                      counters; the configuration check accepts its own config and names both
 *                      when another one (or the same name with other parameters) asks.
 * progfile/recorded_program  a GEMM recorded while it runs (run/recorder.h), saved as kind 2,
 *                      parsed, replayed (PASS; a changed recorded byte is a mismatch at that
 *                      address); prefixes and flips refused.
 * progfile/sequence    three GEMMs recorded, two on one model and one on a new model: the file
 *                      holds the three in order with their labels and which start a model;
 *                      replayed in order as `npu run` does: PASS each; the second replayed on a
 *                      new model instead starts at another cycle: refused, the cycles named.
 * progfile/damaged     every prefix of the file (truncated), every byte flipped (corrupt or
 *                      caught by a field check), extra bytes: refused with a message, no leak of
 *                      a half-parsed program (ASan in make test-asan).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_funcsim.h"
#include "ref/golden.h"
#include "io/file.h"
#include "run/progfile.h"
#include "run/recorder.h"
#include "run/runtime.h"
#include "test_cfgs.h"

/* A 9 x 7 x 12 transA GEMM run on the C model and saved; returns the file's bytes. */
static uint8_t *saved(npu_cfg_t *c, npu_gemm_report_t *rep, size_t *n)
{
    int16_t A[9 * 12], B[12 * 7];
    int32_t gold[9 * 7];
    npu_dram_timing_t t = {8.0, 30, 4, 7, 5};
    char path[] = "/tmp/npu_prog_XXXXXX", err[300];
    uint8_t *buf;
    FILE *f;
    npu_sim_t *s;
    npu_random_operands(9, 7, 12, 5, A, B);
    npu_golden_gemm(9, 7, 12, A, 9, 1, B, 7, 0, gold, 7);
    npu_funcsim_config(c);
    s = npu_sim_open(&t);
    cr_assert_eq(npu_gemm_run(c, s, 9, 7, 12, A, B, 1, 0, NULL, 1000000, rep), NPU_GEMM_PASS);
    npu_sim_close(s);
    close(mkstemp(path));
    cr_assert_eq(npu_progfile_save(path, c, &t, rep, A, B, gold, err, sizeof err), 0, "%s", err);
    f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    buf = malloc(*n);
    cr_assert_eq(fread(buf, 1, *n, f), *n);
    fclose(f);
    remove(path);
    return buf;
}

Test(progfile, round_trip)
{
    npu_cfg_t c = test_cfg(2), other = test_cfg(8), same_name = test_cfg(2);
    npu_gemm_report_t rep;
    npu_progset_t set;
    npu_progfile_t p;
    npu_sim_t *s;
    char err[300];
    size_t n;
    uint8_t *buf = saved(&c, &rep, &n);
    cr_assert_eq(npu_progset_parse(buf, n, &set, err, sizeof err), 0, "%s", err);
    cr_assert(set.n == 1 && set.version == NPU_PROGFILE_VERSION && set.p[0].fresh);
    cr_assert(set.p[0].start_cycle == rep.run.start_cycle && rep.run.start_cycle > 0);
    p = set.p[0];
    cr_assert(p.gemm.M == 9 && p.gemm.N == 7 && p.gemm.K == 12 && p.gemm.transA && !p.gemm.transB);
    cr_assert(!memcmp(&p.gemm.plan, &rep.plan, sizeof rep.plan), "the plan");
    cr_assert(!memcmp(&p.gemm.args, &rep.args, sizeof rep.args), "the DRAM layout");
    cr_assert(p.gemm.prog.n == rep.prog.n && p.gemm.prog_base == rep.prog_base);
    cr_assert_arr_eq(p.gemm.prog.insn, rep.prog.insn, rep.prog.n * sizeof *rep.prog.insn);
    cr_assert(p.timing.bytes_per_cycle == 8.0 && p.timing.stall_pct == 7 && p.timing.seed == 5);
    cr_assert_not_null(p.expect);
    cr_assert_eq(npu_progfile_check_cfg(&p, &c, err, sizeof err), 0, "%s", err);
    s = npu_sim_open(&p.timing);
    cr_assert_eq(npu_progfile_run(&c, s, &p, NULL, 1000000), NPU_GEMM_PASS, "%s", p.gemm.counters_msg);
    npu_sim_close(s);
    cr_assert_arr_eq(p.gemm.run.cnt, rep.run.cnt, sizeof rep.run.cnt, "replay: the same counters");
    cr_assert_eq(npu_progfile_check_cfg(&p, &other, err, sizeof err), -1);
    cr_assert(strstr(err, "built for configuration 'tiny', this binary simulates 'small'"), "%s", err);
    same_name.queue_depth++;
    cr_assert_eq(npu_progfile_check_cfg(&p, &same_name, err, sizeof err), -1);
    cr_assert(strstr(err, "parameters differ"), "%s", err);
    set.p[0] = p; /* the run's report, freed with the file */
    npu_progset_free(&set);
    npu_gemm_report_free(&rep);
    free(buf);
}

Test(progfile, damaged)
{
    npu_cfg_t c = test_cfg(2);
    npu_gemm_report_t rep;
    npu_progset_t p;
    char err[300];
    size_t n;
    uint8_t *buf = saved(&c, &rep, &n), *big = malloc(n + 1);
    for (size_t k = 0; k < n; k++) {
        err[0] = '\0';
        cr_assert_eq(npu_progset_parse(buf, k, &p, err, sizeof err), -1, "prefix %zu accepted", k);
        cr_assert(err[0], "prefix %zu: no message", k);
    }
    for (size_t k = 0; k < n; k++) {
        buf[k] ^= 0x10;
        err[0] = '\0';
        cr_assert_eq(npu_progset_parse(buf, n, &p, err, sizeof err), -1, "flip at %zu accepted", k);
        cr_assert(err[0], "flip at %zu: no message", k);
        buf[k] ^= 0x10;
    }
    memcpy(big, buf, n);
    big[n] = 0;
    cr_assert_eq(npu_progset_parse(big, n + 1, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "1 bytes past the end"), "%s", err);
    cr_assert_eq(npu_progset_parse(buf, n / 2, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "truncated"), "%s", err);
    buf[n / 2] ^= 1;
    cr_assert_eq(npu_progset_parse(buf, n, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "corrupt"), "%s", err);
    npu_gemm_report_free(&rep);
    free(buf);
    free(big);
}

/* The recorder's programs written (npu_recorder_save) and read back: the file's bytes. */
static uint8_t *saved_recording(const npu_recorder_t *rec, const npu_cfg_t *c, size_t *n)
{
    char path[] = "/tmp/npu_rec_XXXXXX", err[300];
    unsigned char *buf = NULL;
    close(mkstemp(path));
    cr_assert_eq(npu_recorder_save(rec, path, c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npu_read_file(path, &buf, n, err, sizeof err), 0, "%s", err);
    remove(path);
    return buf;
}

/* A 9 x 7 x 12 GEMM recorded (run/recorder.h) on the C model, saved as kind 2 and parsed. */
static uint8_t *recorded(npu_cfg_t *c, npu_dram_timing_t *t, npu_recorder_t *rec, size_t *n)
{
    int16_t A[9 * 12], B[12 * 7];
    npu_gemm_report_t rep;
    npu_sim_t *s;
    npu_random_operands(9, 7, 12, 5, A, B);
    npu_funcsim_config(c);
    s = npu_sim_open(t);
    npu_recorder_init(rec);
    npu_recorder_install(rec);
    npu_recorder_sim_opened(rec, s, t); /* what npu_cli_open_sim tells it */
    npu_run_set_label("gemm 9x7x12");
    cr_assert_eq(npu_gemm_run(c, s, 9, 7, 12, A, B, 0, 0, NULL, 1000000, &rep), NPU_GEMM_PASS);
    npu_recorder_install(NULL);
    npu_sim_close(s);
    cr_assert(rec->n == 1 && !rec->failed && rec->p[0].rec.len > 0);
    cr_assert_eq(rec->p[0].rec.cnt[NPU_CNT_insn_exec], rep.run.cnt[NPU_CNT_insn_exec]);
    npu_gemm_report_free(&rep);
    return saved_recording(rec, c, n);
}

Test(progfile, recorded_program)
{
    npu_cfg_t c = test_cfg(2);
    npu_dram_timing_t t = {8.0, 30, 4, 7, 5};
    npu_recorder_t rec;
    npu_progset_t set;
    npu_progfile_t p;
    npu_run_result_t r;
    size_t n, bad;
    uint64_t first;
    char err[300];
    uint8_t *buf = recorded(&c, &t, &rec, &n);
    npu_sim_t *s;
    cr_assert_eq(npu_progset_parse(buf, n, &set, err, sizeof err), 0, "%s", err);
    cr_assert_eq(set.n, 1);
    p = set.p[0];
    cr_assert(p.kind == NPU_PROGFILE_REC && !strcmp(p.rec.label, "gemm 9x7x12") && p.fresh);
    cr_assert(p.gemm.prog.n == rec.p[0].gemm.prog.n && p.rec.len == rec.p[0].rec.len &&
              p.rec.lo == rec.p[0].rec.lo);
    s = npu_sim_open(&p.timing);
    cr_assert_eq(npu_progfile_run_rec(&c, s, &p, 1000000, &r, &bad, &first, err, sizeof err),
                 NPU_GEMM_PASS, "%s", err);
    npu_sim_close(s);
    p.rec.after[p.rec.len / 2] ^= 1; /* the replay must see a DRAM byte the recording did not */
    s = npu_sim_open(&p.timing);
    cr_assert_eq(npu_progfile_run_rec(&c, s, &p, 1000000, &r, &bad, &first, err, sizeof err),
                 NPU_GEMM_MISMATCH);
    cr_assert(bad == 1 && first == p.rec.lo + p.rec.len / 2);
    npu_sim_close(s);
    npu_progset_free(&set);
    for (size_t k = 0; k < n; k += 7) { /* prefixes and flips: refused with a message */
        err[0] = '\0';
        cr_assert_eq(npu_progset_parse(buf, k, &set, err, sizeof err), -1, "prefix %zu", k);
        buf[k] ^= 0x10;
        cr_assert_eq(npu_progset_parse(buf, n, &set, err, sizeof err), -1, "flip at %zu", k);
        cr_assert(err[0]);
        buf[k] ^= 0x10;
    }
    npu_recorder_free(&rec);
    free(buf);
}

/* Three GEMMs recorded: two on one model, the third on a new one; the file's bytes. */
static uint8_t *sequence(npu_cfg_t *c, const npu_dram_timing_t *t, size_t *n)
{
    static const int dims[3][3] = {{9, 7, 12}, {16, 5, 8}, {4, 20, 6}};
    npu_recorder_t rec;
    unsigned char *buf = NULL;
    npu_sim_t *s = NULL;
    npu_funcsim_config(c);
    npu_recorder_init(&rec);
    npu_recorder_install(&rec);
    for (int i = 0; i < 3; i++) {
        int16_t A[20 * 20], B[20 * 20];
        npu_gemm_report_t rep;
        if (i != 1) { /* the second follows the first on its model */
            npu_sim_close(s);
            s = npu_sim_open(t);
            npu_recorder_sim_opened(&rec, s, t);
        }
        npu_random_operands(dims[i][0], dims[i][1], dims[i][2], 5 + (uint64_t)i, A, B);
        npu_run_set_label("gemm %d", i);
        cr_assert_eq(npu_gemm_run(c, s, dims[i][0], dims[i][1], dims[i][2], A, B, 0, 0, NULL,
                                  1000000, &rep), NPU_GEMM_PASS);
        npu_gemm_report_free(&rep);
    }
    npu_recorder_install(NULL);
    npu_sim_close(s);
    buf = saved_recording(&rec, c, n);
    npu_recorder_free(&rec);
    return buf;
}

Test(progfile, sequence)
{
    npu_cfg_t c = test_cfg(2);
    npu_dram_timing_t t = {8.0, 30, 4, 7, 5};
    npu_progset_t set;
    npu_run_result_t r;
    npu_sim_t *s = NULL;
    size_t n, bad;
    uint64_t first;
    char err[300];
    uint8_t *buf = sequence(&c, &t, &n);
    cr_assert_eq(npu_progset_parse(buf, n, &set, err, sizeof err), 0, "%s", err);
    cr_assert_eq(set.n, 3);
    for (size_t i = 0; i < 3; i++) {
        char want[16];
        snprintf(want, sizeof want, "gemm %zu", i);
        cr_assert_str_eq(set.p[i].rec.label, want);
        cr_assert_eq(set.p[i].fresh, i != 1, "program %zu", i);
        if (set.p[i].fresh) { /* as npu run does */
            npu_sim_close(s);
            s = npu_sim_open(&set.p[i].timing);
        }
        cr_assert_eq(npu_progfile_run_rec(&c, s, &set.p[i], 1000000, &r, &bad, &first, err,
                                          sizeof err), NPU_GEMM_PASS, "program %zu: %s", i, err);
    }
    cr_assert(set.p[1].start_cycle > set.p[0].start_cycle + set.p[0].rec.cycles - 1);
    npu_sim_close(s);
    s = npu_sim_open(&set.p[1].timing); /* the second alone, on a new model: another start */
    cr_assert_eq(npu_progfile_run_rec(&c, s, &set.p[1], 1000000, &r, &bad, &first, err,
                                      sizeof err), NPU_GEMM_COUNTERS);
    cr_assert(strstr(err, "started at simulator cycle"), "%s", err);
    npu_sim_close(s);
    npu_progset_free(&set);
    free(buf);
}
