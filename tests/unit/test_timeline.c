#define _POSIX_C_SOURCE 200809L /* mkstemp */
/* test_timeline.c - the timeline stage (sw/run/timeline.h): slices from hand-made samples and
 * bursts, and a GEMM on the C model sampled into a trace-event file that cJSON reads back with
 * one slice per instruction of each queue. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/isa.h"
#include "io/file.h"
#include "model/prog_time.h"
#include "npu_funcsim.h"
#include "npu_sim.h"
#include "run/runtime.h"
#include "run/timeline.h"
#include "test_cfgs.h"

/* QSTATE with the LOAD busy bit and the EXEC queue's occupancy. */
static uint32_t qs(int load_busy, unsigned exec_n)
{
    return (load_busy ? 1u << 29 : 0u) | (exec_n & 0xFu) << 4;
}

static void feed(npu_tl_prog_t *p, uint64_t c, uint32_t q, uint32_t pl, uint32_t pe, uint32_t fw)
{
    npu_tl_sample_t s;
    memset(&s, 0, sizeof s);
    s.cycle = c;
    s.qstate = q;
    s.pc[0] = pl;
    s.pc[1] = pe;
    s.cnt[0] = fw; /* busy_fw, the first of NPU_TL_COUNTERS */
    npu_tl_prog_sample(p, &s);
}

static const npu_tl_event_t *find(const npu_tl_prog_t *p, uint32_t track, size_t k)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->ev[i].track == track && k-- == 0)
            return &p->ev[i];
    return NULL;
}

Test(timeline, slices_from_samples)
{
    npu_tl_prog_t p;
    const npu_tl_event_t *e;
    uint32_t fw = 0;
    npu_tl_prog_init(&p, NULL, 0, 100);
    for (uint64_t c = 0; c < 20; c++) {
        /* LOAD 0 in flight in cycles 2..5, LOAD 1 in 6..9; EXEC 3 queued from 4 to 11; the FW
         * counter grows in cycles 5..7 and 10 */
        int lb = c >= 2 && c < 10;
        fw += (c >= 5 && c <= 7) || c == 10;
        feed(&p, c, qs(lb, c >= 4 && c < 12), c < 6 ? 0 : 1, 3, fw);
    }
    npu_tl_prog_finish(&p);
    cr_assert_not_null(e = find(&p, NPU_TL_LOAD, 0));
    cr_assert(e->ts == 2 && e->dur == 4 && e->arg == 0, "LOAD 0: ts %llu dur %llu",
              (unsigned long long)e->ts, (unsigned long long)e->dur);
    cr_assert_not_null(e = find(&p, NPU_TL_LOAD, 1));
    cr_assert(e->ts == 6 && e->dur == 4 && e->arg == 1);
    cr_assert_null(find(&p, NPU_TL_LOAD, 2));
    cr_assert_not_null(e = find(&p, NPU_TL_EXEC, 0));
    cr_assert(e->ts == 4 && e->dur == 8 && e->arg == 3);
    /* counter runs move back by NPU_TL_CNT_LAG onto the queues' time */
    cr_assert_not_null(e = find(&p, NPU_TL_CNT0, 0));
    cr_assert(e->ts == 5 - NPU_TL_CNT_LAG && e->dur == 3, "FW run: ts %llu dur %llu",
              (unsigned long long)e->ts, (unsigned long long)e->dur);
    cr_assert_not_null(e = find(&p, NPU_TL_CNT0, 1));
    cr_assert(e->ts == 10 - NPU_TL_CNT_LAG && e->dur == 1);
    cr_assert_eq(p.cycles, 20u);
    npu_tl_prog_free(&p);
}

Test(timeline, open_slices_closed_at_the_end)
{
    npu_tl_prog_t p;
    const npu_tl_event_t *e;
    npu_tl_prog_init(&p, NULL, 0, 0);
    for (uint64_t c = 0; c < 5; c++)
        feed(&p, c, qs(1, 0), 7, 0, (uint32_t)c + 1);
    npu_tl_prog_finish(&p);
    cr_assert_not_null(e = find(&p, NPU_TL_LOAD, 0));
    cr_assert(e->ts == 0 && e->dur == 5 && e->arg == 7);
    cr_assert_not_null(e = find(&p, NPU_TL_CNT0, 0));
    cr_assert(e->ts == 0 && e->dur == 5 - NPU_TL_CNT_LAG);
    npu_tl_prog_free(&p);
}

Test(timeline, bursts_on_lanes)
{
    npu_tl_prog_t p;
    npu_tl_prog_init(&p, NULL, 0, 1000);
    npu_tl_prog_burst(&p, 0, 0x40, 4, 1000, 1010); /* lane 0 */
    npu_tl_prog_burst(&p, 0, 0x80, 4, 1002, 1014); /* overlaps: lane 1 */
    npu_tl_prog_burst(&p, 0, 0xC0, 4, 1010, 1018); /* lane 0 is free again at 10 */
    npu_tl_prog_burst(&p, 1, 0x100, 2, 1005, 1009); /* writes have lanes of their own */
    npu_tl_prog_burst(&p, 0, 0x00, 1, 990, 999);    /* before the program: dropped */
    cr_assert_eq(p.n, 4u);
    cr_assert(p.ev[0].track == NPU_TL_RD0 && p.ev[0].ts == 0 && p.ev[0].dur == 10);
    cr_assert(p.ev[1].track == NPU_TL_RD0 + 1 && p.ev[1].ts == 2);
    cr_assert(p.ev[2].track == NPU_TL_RD0 && p.ev[2].ts == 10 && p.ev[2].arg == 4);
    cr_assert(p.ev[3].track == NPU_TL_WR0 && p.ev[3].addr == 0x100);
    npu_tl_prog_free(&p);
}

Test(timeline, queue_of_every_opcode)
{
    npu_insn_t in;
    memset(&in, 0, sizeof in);
    in.w[0] = NPU_OP_LOAD;
    cr_assert_eq(npu_tl_queue_of(&in), NPU_TL_LOAD);
    in.w[0] = NPU_OP_FILL;
    cr_assert_eq(npu_tl_queue_of(&in), NPU_TL_LOAD);
    in.w[0] = NPU_OP_LOAD_SPM;
    cr_assert_eq(npu_tl_queue_of(&in), NPU_TL_LOAD);
    in.w[0] = NPU_OP_WAVE;
    cr_assert_eq(npu_tl_queue_of(&in), NPU_TL_EXEC);
    in.w[0] = NPU_OP_STORE;
    cr_assert_eq(npu_tl_queue_of(&in), NPU_TL_STORE);
    in.w[0] = 0xEE;
    cr_assert_eq(npu_tl_queue_of(&in), -1);
}

/* The X slices of the queue tracks (tid = track + 1): each names an instruction of its queue
 * (args.pc) by its disassembly. Counts them per queue; *ok = 0 on a slice that does not. */
static void count_slices(const cJSON *ev, const npu_prog_t *prog, unsigned *per_q, int *ok)
{
    const cJSON *e;
    char dis[160];
    cJSON_ArrayForEach(e, ev)
    {
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
        int tid = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(e, "tid"));
        double pc = cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "pc"));
        if (!ph || strcmp(ph, "X") || tid < 1 || tid > 3)
            continue;
        per_q[tid - 1]++;
        if (!(pc >= 0 && pc < (double)prog->n) ||
            npu_tl_queue_of(&prog->insn[(size_t)pc]) != tid - 1 ||
            npu_disasm(&prog->insn[(size_t)pc], dis, sizeof dis) < 0 || strcmp(dis, name))
            *ok = 0;
    }
}

Test(timeline, gemm_on_the_c_model)
{
    npu_cfg_t c = test_cfg(2);
    char path[] = "/tmp/npu_tl_XXXXXX";
    int fd = mkstemp(path);
    npu_timeline_t *tl;
    npu_gemm_report_t rep;
    int16_t A[12 * 20], B[20 * 10];
    unsigned per_q[3] = {0, 0, 0};
    int names_ok = 1;
    cJSON *root, *prog;
    unsigned char *text = NULL;
    size_t len;
    char err[200];
    cr_assert(fd >= 0);
    for (int i = 0; i < 12 * 20; i++)
        A[i] = (int16_t)(i % 7 - 3);
    for (int i = 0; i < 20 * 10; i++)
        B[i] = (int16_t)(i % 5 - 2);
    npu_funcsim_config(&c);
    npu_sim_t *s = npu_sim_open(NULL);
    cr_assert_not_null(tl = npu_timeline_open(path, "{\"command\":\"test\"}"));
    npu_timeline_install(tl);
    cr_assert_eq(npu_gemm_run(&c, s, 12, 10, 20, A, B, 0, 0, NULL, 1000000, &rep), NPU_GEMM_PASS);
    cr_assert_eq(npu_timeline_close(tl), 0);
    cr_assert_null(npu_timeline_active());
    cr_assert_eq(npu_read_file(path, &text, &len, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(root = cJSON_ParseWithLength((const char *)text, len), "the file is JSON");
    count_slices(cJSON_GetObjectItem(root, "traceEvents"), &rep.prog, per_q, &names_ok);
    prog = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "otherData"), "programs"), 0);
    cr_assert_not_null(prog);
    cr_assert(names_ok, "slices named by the disassembly of their queue's instructions");
    cr_assert_eq(per_q[0], rep.run.cnt[NPU_CNT_insn_load], "one LOAD slice per LOAD");
    cr_assert_eq(per_q[2], rep.run.cnt[NPU_CNT_insn_store], "one STORE slice per STORE");
    cr_assert(per_q[1] > 0 && per_q[1] <= rep.run.cnt[NPU_CNT_insn_exec]);
    cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(prog, "counters"),
                                                           "insn_exec")),
                 (double)rep.run.cnt[NPU_CNT_insn_exec]);
    cJSON_Delete(root);
    free(text);
    npu_gemm_report_free(&rep);
    npu_sim_close(s);
    close(fd);
    remove(path);
}

/* LOAD_SPM's cycles (prog_time.h npu_load_spm_cycles) against the RTL at tiny: the cycles over a
 * SYNC_L that `build/tiny/test_rtl --filter 'spm_copy/cycles' --verbose` logs (exact for the plain
 * copies, within 1 for the transposed ones); and the program model adds them in the LOAD queue. */
Test(timeline, load_spm_cycles_against_the_rtl)
{
    npu_cfg_t c = test_cfg(2);
    unsigned B = 8, F = 4;
    struct { int tr; unsigned rows, rb, ss; uint64_t rtl; } t[] = {
        {0, 64, 4 * B, 4, 266}, {0, 64, 4 * B, 5, 266}, {0, 128, B, 1, 138}, {0, 33, 2 * B + 6, 3, 109},
        {1, 4 * F, 2 * B, 2, 49}, {1, 4 * F, 4 * B, 4, 81}, {1, 2 * F + 1, 3 * B, 5, 57},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npu_insn_t in;
        npu_fields_t f;
        unsigned nd = t[i].tr ? (t[i].rows + F - 1) / F : (t[i].rb + B - 1) / B;
        cr_assert_eq(npu_enc_load_spm(&in, NPU_TAG_X, t[i].tr, t[i].rows, 0, t[i].ss, 0x1000, nd, t[i].rb), 0);
        npu_decode(&in, &f);
        uint64_t m = npu_load_spm_cycles(&c, &f), d = m > t[i].rtl ? m - t[i].rtl : t[i].rtl - m;
        cr_assert_leq(d, t[i].tr ? 1u : 0u, "LOAD_SPM %zu: model %llu, RTL %llu", i,
                      (unsigned long long)m, (unsigned long long)t[i].rtl);
    }
    npu_insn_t p[2];
    uint64_t cy[2];
    char why[128];
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    cr_assert_eq(npu_enc_sync(&p[0], NPU_OP_SYNC_L), 0);
    cr_assert_eq(npu_enc_load_spm(&p[1], NPU_TAG_X, 0, 128, 0, 1, 0x1000, 1, B), 0);
    cr_assert_eq(npu_prog_time(&c, &k, p, 1, &cy[0], why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_prog_time(&c, &k, p, 2, &cy[1], why, sizeof why), 0, "%s", why);
    cr_assert(cy[1] >= cy[0] + 130 && cy[1] <= cy[0] + 146, "LOAD_SPM in the program model: %llu vs %llu",
                  (unsigned long long)cy[1], (unsigned long long)cy[0]);
}
