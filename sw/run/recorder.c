/* recorder.c - see recorder.h. */
#include "run/recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"

static npu_recorder_t *g_active;

void npu_recorder_install(npu_recorder_t *r) { g_active = r; }
npu_recorder_t *npu_recorder_active(void) { return g_active; }

void npu_recorder_init(npu_recorder_t *r) { memset(r, 0, sizeof *r); }

void npu_recorder_free(npu_recorder_t *r)
{
    if (g_active == r)
        g_active = NULL;
    for (size_t i = 0; i < r->n; i++)
        npu_progfile_free(&r->p[i]);
    free(r->p);
    memset(r, 0, sizeof *r);
}

void npu_recorder_sim_opened(npu_recorder_t *r, const npu_sim_t *sim, const npu_dram_timing_t *t)
{
    r->opened = t ? sim : NULL;
    if (t)
        r->opened_timing = *t;
    else
        r->failed = "a simulator was opened without a DRAM timing";
}

/* A new record at the end, its simulator placed: a fresh one just opened, or the last one. */
static npu_progfile_t *add_record(npu_recorder_t *r, const npu_sim_t *sim)
{
    npu_progfile_t *p;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 16;
        npu_progfile_t *q = cap <= NPU_PROGFILE_MAX_PROGS ? realloc(r->p, cap * sizeof *q) : NULL;
        if (!q) {
            r->failed = r->cap < NPU_PROGFILE_MAX_PROGS ? "out of memory while recording"
                                                         : "too many programs to save";
            return NULL;
        }
        r->p = q;
        r->cap = cap;
    }
    p = &r->p[r->n];
    memset(p, 0, sizeof *p);
    npu_prog_init(&p->gemm.prog);
    if (sim == r->opened) { /* the first program on a simulator the CLI just opened */
        p->fresh = 1;
        p->timing = r->opened_timing;
        r->opened = NULL;
    } else if (r->n > 0 && sim == r->sim) { /* after the previous program, on its simulator */
        p->timing = r->p[r->n - 1].timing;
    } else {
        r->failed = "a program ran on a simulator the CLI did not open";
        return NULL;
    }
    r->sim = sim;
    r->n++;
    return p;
}

void npu_recorder_before(npu_recorder_t *r, npu_sim_t *sim, uint64_t base, const npu_insn_t *prog,
                         size_t n)
{
    size_t dbytes = 0;
    const uint8_t *dram = npu_sim_dram(sim, &dbytes);
    uint64_t lo, hi;
    npu_progfile_t *p;
    npu_progrec_t *c;
    if (r->failed || !(p = add_record(r, sim)))
        return;
    c = &p->rec;
    p->kind = NPU_PROGFILE_REC;
    p->start_cycle = npu_sim_cycle(sim);
    p->gemm.prog_base = base;
    snprintf(c->label, sizeof c->label, "%s", npu_run_label());
    npu_prog_dram_window(prog, n, base, &lo, &hi);
    hi = hi < dbytes ? hi : dbytes;
    lo = lo < hi ? lo : hi;
    c->base = base;
    c->lo = lo;
    c->len = (size_t)(hi - lo);
    c->before = malloc(c->len ? c->len : 1);
    c->after = malloc(c->len ? c->len : 1);
    for (size_t i = 0; i < n && !r->failed; i++)
        if (npu_prog_push(&p->gemm.prog, &prog[i]) != 0)
            r->failed = "out of memory while recording";
    if (!c->before || !c->after || !dram) {
        r->failed = "out of memory while recording";
        return;
    }
    memcpy(c->before, dram + lo, c->len);
}

void npu_recorder_after(npu_recorder_t *r, npu_sim_t *sim, const npu_run_result_t *res)
{
    const uint8_t *dram = npu_sim_dram(sim, NULL);
    npu_progrec_t *c;
    if (r->failed || r->n == 0 || !dram)
        return;
    c = &r->p[r->n - 1].rec;
    memcpy(c->after, dram + c->lo, c->len);
    memcpy(c->cnt, res->cnt, sizeof c->cnt);
    c->ncnt = NPU_NUM_COUNTERS;
    c->cycles = res->end_cycle - res->start_cycle;
}

int npu_recorder_save(const npu_recorder_t *r, const char *path, const npu_cfg_t *cfg, char *err,
                      size_t errn)
{
    if (r->failed)
        return npu_io_fail(err, errn, "%s: %s", path, r->failed);
    if (r->n == 0)
        return npu_io_fail(err, errn, "%s: the command ran no program", path);
    return npu_progset_save(path, cfg, r->p, r->n, err, errn);
}
