/* test_report.c - text and JSON reports: well-formed JSON (checked by a small parser), escaping and
 * non-finite numbers (cJSON, run/out.h), CSV tables with metadata, counter names from the X-macro, derived figures. */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu_funcsim.h"
#include "run/out.h"
#include "run/report.h"
#include "run/runtime.h"
#include "test_cfgs.h"

/* ---- a minimal strict JSON validator ---- */
static const char *ws(const char *p) { while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++; return p; }
static const char *value(const char *p);
static const char *string(const char *p)
{
    if (*p != '"') return NULL;
    for (p++; *p != '"'; p++) {
        if (!*p || (unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++) if (!isxdigit((unsigned char)p[i])) return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) return NULL;
        }
    }
    return p + 1;
}
static const char *number(const char *p)
{
    const char *s = p;
    if (*p == '-') p++;
    if (!isdigit((unsigned char)*p)) return NULL;
    while (isdigit((unsigned char)*p)) p++;
    if (*p == '.') { p++; if (!isdigit((unsigned char)*p)) return NULL; while (isdigit((unsigned char)*p)) p++; }
    if (*p == 'e' || *p == 'E') { p++; if (*p == '+' || *p == '-') p++; if (!isdigit((unsigned char)*p)) return NULL; while (isdigit((unsigned char)*p)) p++; }
    return p > s ? p : NULL;
}
static const char *value(const char *p)
{
    p = ws(p);
    if (*p == '{') {
        p = ws(p + 1);
        if (*p == '}') return p + 1;
        for (;;) {
            if (!(p = string(ws(p)))) return NULL;
            p = ws(p);
            if (*p++ != ':') return NULL;
            if (!(p = value(p))) return NULL;
            p = ws(p);
            if (*p == '}') return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (*p == '[') {
        p = ws(p + 1);
        if (*p == ']') return p + 1;
        for (;;) {
            if (!(p = value(p))) return NULL;
            p = ws(p);
            if (*p == ']') return p + 1;
            if (*p++ != ',') return NULL;
        }
    }
    if (*p == '"') return string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    return number(p);
}
static int json_ok(const char *s)
{
    const char *e = value(s);
    return e && *ws(e) == '\0';
}

static char *capture(void (*fn)(FILE *, const npu_cfg_t *, const npu_gemm_report_t *, const npu_report_opts_t *),
                     const npu_cfg_t *c, const npu_gemm_report_t *r, const npu_report_opts_t *o)
{
    FILE *f = tmpfile();
    long n;
    char *buf;
    cr_assert_not_null(f);
    fn(f, c, r, o);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* What f holds, as a string (the caller frees it). */
static char *slurp(FILE *f)
{
    long n = ftell(f);
    char *buf = malloc((size_t)n + 1);
    rewind(f);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    return buf;
}

Test(report, out_json_metadata_escaping_and_non_finite)
{
    npu_cfg_t c = test_cfg(2);
    npu_out_meta_t m = {"gemm", &c, 42, "abc123-dirty"};
    cJSON *root = npu_out_json_new(&m);
    FILE *f = tmpfile();
    char *js;
    cr_assert(!json_ok("{\"a\":1,}"), "the validator rejects bad JSON");
    cr_assert(!json_ok("{\"a\":\"x\ny\"}"));
    cJSON_AddStringToObject(root, "msg", "tab\there \"q\" \\ nl\n\x01\x7f");
    cJSON_AddNumberToObject(root, "nan", NAN);
    cJSON_AddNumberToObject(root, "inf", INFINITY);
    cr_assert_eq(npu_out_json_print(f, root), 0);
    js = slurp(f);
    fclose(f);
    cr_assert(json_ok(js), "invalid JSON: %s", js);
    cr_assert(strchr(js, '\n') == js + strlen(js) - 1, "one line: %s", js);
    cr_assert(!strncmp(js, "{\"schema\":1,\"command\":\"gemm\",\"rev\":\"abc123-dirty\",\"seed\":42,"
                           "\"config\":{\"name\":", 76), "%s", js);
    cr_assert(strstr(js, "\"nan\":null") && strstr(js, "\"inf\":null"), "%s", js);
    cr_assert(strstr(js, "\"msg\":\"tab\\there \\\"q\\\" \\\\ nl\\n\\u0001"), "%s", js);
    free(js);
    m.rev = NULL;
    cr_assert_eq(npu_out_json_print(f = tmpfile(), npu_out_json_new(&m)), 0);
    js = slurp(f);
    fclose(f);
    cr_assert(strstr(js, "\"rev\":\"unknown\""), "%s", js);
    free(js);
    cr_assert_eq(npu_out_json_print(stderr, NULL), -1);
}

Test(report, table_csv_with_metadata_and_json_rows)
{
    static const char *const cols[] = {"name", "n", "big", "util"};
    npu_cfg_t c = test_cfg(2);
    npu_out_meta_t m = {"conv", &c, 7, "r1"};
    char path[] = "/tmp/npu_table_XXXXXX", *csv, *js;
    npu_table_t t;
    cJSON *rows;
    FILE *f;
    int err;
    close(mkstemp(path));
    cr_assert_eq(npu_table_open(&t, path, 1, &m, cols, 4), 0);
    npu_table_str(&t, "a,\"b\"");
    npu_table_int(&t, -3);
    npu_table_u64(&t, 1ull << 40);
    npu_table_num(&t, NAN, "%.3f");
    npu_table_end_row(&t);
    npu_table_str(&t, "plain");
    npu_table_int(&t, 4);
    npu_table_u64(&t, 5);
    npu_table_num(&t, 0.25, "%.3f");
    npu_table_end_row(&t);
    rows = npu_table_close(&t, &err);
    cr_assert_eq(err, 0);
    f = fopen(path, "r");
    fseek(f, 0, SEEK_END);
    csv = slurp(f);
    fclose(f);
    remove(path);
    cr_assert_str_eq(csv, "# npu conv config=tiny seed=7 rev=r1 schema=1\nname,n,big,util\n"
                          "\"a,\"\"b\"\"\",-3,1099511627776,nan\nplain,4,5,0.250\n");
    js = cJSON_PrintUnformatted(rows);
    cr_assert_str_eq(js, "[{\"name\":\"a,\\\"b\\\"\",\"n\":-3,\"big\":1099511627776,\"util\":null},"
                         "{\"name\":\"plain\",\"n\":4,\"big\":5,\"util\":0.25}]");
    free(js);
    free(csv);
    cJSON_Delete(rows);
    cr_assert_eq(npu_table_open(&t, "/nonexistent-dir/x.csv", 0, &m, cols, 4), -1);
}

Test(report, counter_names_and_util)
{
    npu_cfg_t c = test_cfg(2);
    uint64_t cnt[NPU_NUM_COUNTERS] = {0};
    cr_assert_str_eq(npu_counter_name(0), "cycles");
    cr_assert_str_eq(npu_counter_name(NPU_CNT_dram_rd_partial), "dram_rd_partial");
    cr_assert_str_eq(npu_counter_text(NPU_CNT_macs_core1), "useful MACs in core 1");
    cr_assert_null(npu_counter_name(NPU_NUM_COUNTERS));
    cnt[NPU_CNT_cycles] = 100;
    cnt[NPU_CNT_macs_core0] = 400;
    cnt[NPU_CNT_macs_core3] = 400;
    cr_assert_eq(npu_report_useful_macs(cnt), 800u);
    cr_assert_float_eq(npu_report_pe_util(&c, cnt), 800.0 / (16.0 * 100.0), 1e-12);
    cnt[NPU_CNT_cycles] = 0;
    cr_assert_float_eq(npu_report_pe_util(&c, cnt), 0.0, 1e-12);
}

static void run_small(npu_cfg_t *c, npu_gemm_report_t *rep, int inject_error)
{
    int16_t A[35], B[42];
    npu_dram_timing_t t = {8.0, 30, 4, 0, 1};
    npu_sim_t *s;
    for (int i = 0; i < 35; i++) A[i] = (int16_t)(i * 37 - 500);
    for (int i = 0; i < 42; i++) B[i] = (int16_t)(i * 91 - 2000);
    npu_funcsim_config(c);
    s = npu_sim_open(&t);
    if (!inject_error) {
        cr_assert_eq(npu_gemm_run(c, s, 5, 6, 7, A, B, 0, 0, NULL, 1000000, rep), NPU_GEMM_PASS);
    } else {
        /* compile, corrupt one instruction, run by hand, and fill the report like the driver */
        npu_insn_t bad = {{0x2A, 0, 0, 0}};
        cr_assert_eq(npu_gemm_compile(c, 1u << 24, 5, 6, 7, 0, 0, rep), NPU_GEMM_PASS);
        rep->prog.insn[3] = bad;
        cr_assert_eq(npu_run_program(c, s, 0, rep->prog.insn, rep->prog.n, 1000000, &rep->run), NPU_RUN_ERROR);
        rep->rc = NPU_GEMM_NPU_ERROR;
    }
    npu_sim_close(s);
}

Test(report, pass_report_text_and_json)
{
    npu_cfg_t c = test_cfg(2);
    npu_gemm_report_t rep;
    npu_report_opts_t o = {42, 8.0, 30, 0};
    char *txt, *js;
    run_small(&c, &rep, 0);
    txt = capture(npu_report_text, &c, &rep, &o);
    js = capture(npu_report_json, &c, &rep, &o);
    cr_assert(strstr(txt, "result       PASS") != NULL, "%s", txt);
    cr_assert(strstr(txt, "seed         42") != NULL);
    cr_assert(strstr(txt, "PE util") && strstr(txt, "210 useful MACs"), "%s", txt);
    cr_assert(strstr(txt, "               X ") != NULL, "per-tag rows use tag names");
    cr_assert(json_ok(js), "invalid JSON: %s", js);
    cr_assert(strstr(js, "\"result\":\"PASS\"") && strstr(js, "\"pass\":true"));
    cr_assert(strstr(js, "\"seed\":42"));
    cr_assert(strstr(js, "\"useful_macs\":210"));
    for (unsigned i = 0; i < NPU_NUM_COUNTERS; i++) {
        char key[64];
        snprintf(key, sizeof key, "\"%s\":", npu_counter_name(i));
        cr_assert(strstr(js, key) != NULL, "counter %s missing", key);
    }
    cr_assert(strstr(js, "\"read\":{\"PROG\":") != NULL);
    cr_assert_eq(js[strlen(js) - 1], '\n');
    free(txt);
    free(js);
    npu_gemm_report_free(&rep);
}

/* The busy line: the LOAD and STORE queues', the array's (the sum of busy_<mode>) and the
 * drain's busy cycles as shares of the run, and the busiest of the four named. */
Test(report, busy_line_names_the_busiest)
{
    npu_cfg_t c = test_cfg(2);
    npu_gemm_report_t rep;
    char *txt;
    uint64_t *k;
    run_small(&c, &rep, 0);
    k = rep.run.cnt;
    cr_assert(k[NPU_CNT_busy_load] > 0 && k[NPU_CNT_busy_store] > 0, "the run counts both queues");
    k[NPU_CNT_cycles] = 200;
    k[NPU_CNT_busy_load] = 20, k[NPU_CNT_busy_store] = 150, k[NPU_CNT_drain_busy] = 40;
    k[NPU_CNT_busy_fw] = 30, k[NPU_CNT_busy_vsw] = 10, k[NPU_CNT_busy_hsw] = 0, k[NPU_CNT_busy_isw] = 0;
    txt = capture(npu_report_text, &c, &rep, NULL);
    cr_assert(strstr(txt, "busy         LOAD 20 (10.0 %), STORE 150 (75.0 %), array 40 (20.0 %), drain 40 (20.0 %) "
                          "of 200 cycles: the STORE queue most") != NULL, "%s", txt);
    free(txt);
    k[NPU_CNT_busy_isw] = 160; /* the array: 200 of 200 */
    txt = capture(npu_report_text, &c, &rep, NULL);
    cr_assert(strstr(txt, "array 200 (100.0 %), drain 40 (20.0 %) of 200 cycles: the array most") != NULL, "%s", txt);
    free(txt);
    npu_gemm_report_free(&rep);
}

Test(report, error_and_host_error_reports)
{
    npu_cfg_t c = test_cfg(2);
    npu_gemm_report_t rep;
    char *txt, *js;
    run_small(&c, &rep, 1);
    txt = capture(npu_report_text, &c, &rep, NULL);
    js = capture(npu_report_json, &c, &rep, NULL);
    cr_assert(strstr(txt, "ILLEGAL_OPCODE") && strstr(txt, "at pc 3") && strstr(txt, "ILLEGAL op=0x2a"), "%s", txt);
    cr_assert(json_ok(js), "invalid JSON: %s", js);
    cr_assert(strstr(js, "\"npu_error\":{\"name\":\"ILLEGAL_OPCODE\"") != NULL, "%s", js);
    free(txt);
    free(js);
    npu_gemm_report_free(&rep);

    memset(&rep, 0, sizeof rep);
    rep.rc = NPU_GEMM_HOST_ERROR;
    snprintf(rep.host_msg, sizeof rep.host_msg, "does \"not\" fit\n");
    js = capture(npu_report_json, &c, &rep, NULL);
    cr_assert(json_ok(js), "invalid JSON: %s", js);
    cr_assert(strstr(js, "\"host_error\":\"does \\\"not\\\" fit\\n\"") != NULL, "%s", js);
    free(js);
}
