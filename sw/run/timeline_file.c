/* timeline_file.c - the simulator sampled every cycle and the trace-event JSON file; see
 * timeline.h. Each event is one small cJSON object printed and freed at once: cJSON does the
 * escaping, and a long run's events are never all in memory as a JSON tree. */
#include "run/timeline.h"

#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "run/runtime.h"

struct npu_timeline {
    FILE *f;
    int events;         /* events written (a comma before each but the first) */
    int failed;         /* a write or an allocation failed */
    unsigned programs;  /* programs written: the next pid - 1 */
    uint64_t t_next;    /* the next program's offset on the shared clock: the cycles run before */
    cJSON *other;       /* otherData: the metadata and one entry per program */
    npu_tl_prog_t prog; /* the program being sampled */
    int in_prog;
};

static npu_timeline_t *g_active;

void npu_timeline_install(npu_timeline_t *tl) { g_active = tl; }
npu_timeline_t *npu_timeline_active(void) { return g_active; }

npu_timeline_t *npu_timeline_open(const char *path, const char *meta_json)
{
    npu_timeline_t *tl = calloc(1, sizeof *tl);
    cJSON *meta = meta_json ? cJSON_Parse(meta_json) : NULL;
    if (!tl || !(tl->other = cJSON_CreateObject()) || !(tl->f = fopen(path, "w"))) {
        cJSON_Delete(meta);
        if (tl)
            cJSON_Delete(tl->other);
        free(tl);
        return NULL;
    }
    if (meta)
        cJSON_AddItemToObject(tl->other, "meta", meta);
    cJSON_AddStringToObject(tl->other, "time_unit", "1 us = 1 NPU cycle");
    cJSON_AddItemToObject(tl->other, "programs", cJSON_CreateArray());
    fputs("{\"traceEvents\":[\n", tl->f);
    return tl;
}

/* Writes one event object and deletes it. */
static void put(npu_timeline_t *tl, cJSON *ev)
{
    char *s = ev ? cJSON_PrintUnformatted(ev) : NULL;
    if (!s || fprintf(tl->f, "%s%s", tl->events++ ? ",\n" : "", s) < 0)
        tl->failed = 1;
    free(s);
    cJSON_Delete(ev);
}

static cJSON *meta_event(const char *what, unsigned pid, unsigned tid, const char *key,
                         cJSON *value)
{
    cJSON *ev = cJSON_CreateObject(), *args = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", what);
    cJSON_AddStringToObject(ev, "ph", "M");
    cJSON_AddNumberToObject(ev, "pid", pid);
    cJSON_AddNumberToObject(ev, "tid", tid);
    cJSON_AddItemToObject(args, key, value);
    cJSON_AddItemToObject(ev, "args", args);
    return ev;
}

/* One slice: the instruction's disassembly on a queue track, the kind on a counter track, the
 * burst's direction, beats and address on a DRAM lane. */
static cJSON *slice_event(const npu_tl_prog_t *p, const npu_tl_event_t *e, unsigned pid,
                          uint64_t t0)
{
#define NPU_TL_X_SLICE(c, t, s) s,
    static const char *const cnt_name[NPU_TL_NCNT] = {NPU_TL_COUNTERS(NPU_TL_X_SLICE)};
    static const char *const cat[3] = {"queue", "counter", "dram"};
    int kind = e->track < NPU_TL_CNT0 ? 0 : e->track < NPU_TL_RD0 ? 1 : 2;
    char name[160];
    cJSON *ev = cJSON_CreateObject(), *args = cJSON_CreateObject();
    if (kind == 0 && e->arg < p->n_insn && npu_disasm(&p->insn[e->arg], name, sizeof name) >= 0)
        ;
    else if (kind == 0)
        snprintf(name, sizeof name, "pc %u", e->arg);
    else if (kind == 1)
        snprintf(name, sizeof name, "%s", cnt_name[e->track - NPU_TL_CNT0]);
    else
        snprintf(name, sizeof name, "%s %u beats", e->track < NPU_TL_WR0 ? "read" : "write",
                 e->arg);
    cJSON_AddStringToObject(ev, "name", name);
    cJSON_AddStringToObject(ev, "cat", cat[kind]);
    cJSON_AddStringToObject(ev, "ph", "X");
    cJSON_AddNumberToObject(ev, "ts", (double)(t0 + e->ts));
    cJSON_AddNumberToObject(ev, "dur", (double)e->dur);
    cJSON_AddNumberToObject(ev, "pid", pid);
    cJSON_AddNumberToObject(ev, "tid", e->track + 1);
    if (kind == 0)
        cJSON_AddNumberToObject(args, "pc", e->arg);
    if (kind == 2)
        cJSON_AddNumberToObject(args, "addr", (double)e->addr);
    cJSON_AddItemToObject(ev, "args", args);
    return ev;
}

/* The process and thread names (tracks sorted by their number: queues, counters, DRAM). */
static void put_names(npu_timeline_t *tl, unsigned pid, size_t n_insn)
{
    char name[200]; /* the label (up to 127 characters) and the counts */
    unsigned char used[NPU_TL_WR0 + NPU_TL_DRAM_LANES] = {0};
    for (size_t i = 0; i < tl->prog.n; i++)
        used[tl->prog.ev[i].track] = 1;
    snprintf(name, sizeof name, "%s (program %u, %zu instructions)", npu_run_label(), pid, n_insn);
    put(tl, meta_event("process_name", pid, 0, "name", cJSON_CreateString(name)));
    put(tl, meta_event("process_sort_index", pid, 0, "sort_index", cJSON_CreateNumber(pid)));
    for (unsigned t = 0; t < NPU_TL_WR0 + NPU_TL_DRAM_LANES; t++) {
        if (!used[t] && t >= NPU_TL_CNT0)
            continue;
        npu_tl_track_name(t, name, sizeof name);
        put(tl, meta_event("thread_name", pid, t + 1, "name", cJSON_CreateString(name)));
        put(tl, meta_event("thread_sort_index", pid, t + 1, "sort_index", cJSON_CreateNumber(t)));
    }
}

static void on_burst(void *ctx, int write, uint64_t addr, unsigned beats, uint64_t start,
                     uint64_t end)
{
    npu_timeline_t *tl = ctx;
    if (tl->in_prog)
        npu_tl_prog_burst(&tl->prog, write, addr, beats, start, end);
}

void npu_timeline_begin(npu_timeline_t *tl, npu_sim_t *sim, const npu_insn_t *prog, size_t n)
{
    npu_tl_prog_init(&tl->prog, prog, n, npu_sim_cycle(sim));
    tl->in_prog = 1;
    npu_sim_burst_hook(sim, on_burst, tl); /* -1 on the functional model: no bursts */
}

#define NPU_TL_X_ID(c, t, s) NPU_CNT_##c,
static const unsigned k_cnt_id[NPU_TL_NCNT] = {NPU_TL_COUNTERS(NPU_TL_X_ID)};

static void sample(npu_timeline_t *tl, npu_sim_t *sim)
{
    npu_tl_sample_t s;
    s.cycle = npu_sim_cycle(sim) - tl->prog.start;
    s.qstate = npu_sim_csr_read(sim, NPU_CSR_QSTATE);
    s.pc[0] = npu_sim_csr_read(sim, NPU_CSR_PC_L);
    s.pc[1] = npu_sim_csr_read(sim, NPU_CSR_PC_E);
    s.pc[2] = npu_sim_csr_read(sim, NPU_CSR_PC_S);
    for (unsigned i = 0; i < NPU_TL_NCNT; i++)
        s.cnt[i] = npu_sim_csr_read(sim, NPU_CSR_CNT_LO + k_cnt_id[i]);
    npu_tl_prog_sample(&tl->prog, &s);
}

int npu_timeline_run(npu_timeline_t *tl, npu_sim_t *sim, uint64_t max_cycles)
{
    for (uint64_t i = 0; i < max_cycles; i++) {
        int rc = npu_sim_run(sim, 1);
        if (rc < 0)
            return rc; /* the RTL stopped */
        sample(tl, sim);
        if (rc)
            return rc; /* halted, its last cycle sampled */
    }
    return 0;
}

/* The program's entry under otherData.programs: where it sits in time and its counters. */
static void add_program(npu_timeline_t *tl, unsigned pid, const uint64_t *cnt)
{
#define NPU_TL_X_CNT_NAME(n, t) #n,
    static const char *const names[NPU_NUM_COUNTERS] = {NPU_COUNTERS(NPU_TL_X_CNT_NAME)};
    cJSON *p = cJSON_CreateObject(), *c = cJSON_CreateObject();
    cJSON_AddNumberToObject(p, "pid", pid);
    cJSON_AddStringToObject(p, "label", npu_run_label());
    cJSON_AddNumberToObject(p, "sim_start", (double)tl->prog.start);
    cJSON_AddNumberToObject(p, "instructions", (double)tl->prog.n_insn);
    cJSON_AddNumberToObject(p, "ts", (double)tl->t_next);
    cJSON_AddNumberToObject(p, "cycles", (double)tl->prog.cycles);
    for (unsigned i = 0; cnt && i < NPU_NUM_COUNTERS; i++)
        cJSON_AddNumberToObject(c, names[i], (double)cnt[i]);
    cJSON_AddItemToObject(p, "counters", c);
    cJSON_AddItemToArray(cJSON_GetObjectItem(tl->other, "programs"), p);
}

void npu_timeline_end(npu_timeline_t *tl, npu_sim_t *sim, const uint64_t *cnt)
{
    unsigned pid = ++tl->programs;
    npu_sim_burst_hook(sim, NULL, NULL);
    tl->in_prog = 0;
    npu_tl_prog_finish(&tl->prog);
    put_names(tl, pid, tl->prog.n_insn);
    for (size_t i = 0; i < tl->prog.n; i++)
        put(tl, slice_event(&tl->prog, &tl->prog.ev[i], pid, tl->t_next));
    tl->failed |= tl->prog.oom;
    add_program(tl, pid, cnt);
    tl->t_next += tl->prog.cycles; /* the shared clock: the next run starts where this ended */
    npu_tl_prog_free(&tl->prog);
}

int npu_timeline_close(npu_timeline_t *tl)
{
    char *other;
    int rc;
    if (!tl)
        return 0;
    if (g_active == tl)
        g_active = NULL;
    other = cJSON_PrintUnformatted(tl->other);
    /* no displayTimeUnit: ts counts cycles as microseconds, which the viewers show as such */
    if (!other || fprintf(tl->f, "\n],\"otherData\":%s}\n", other) < 0)
        tl->failed = 1;
    free(other);
    cJSON_Delete(tl->other);
    rc = fclose(tl->f) != 0 || tl->failed ? -1 : 0;
    free(tl);
    return rc;
}
