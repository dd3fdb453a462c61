/* recorder.c - see recorder.h. */
#include "run/recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static npu_recorder_t *g_active;

void npu_recorder_install(npu_recorder_t *r) { g_active = r; }
npu_recorder_t *npu_recorder_active(void) { return g_active; }

void npu_recorder_init(npu_recorder_t *r, const char *label)
{
    memset(r, 0, sizeof *r);
    npu_prog_init(&r->prog);
    snprintf(r->rec.label, sizeof r->rec.label, "%s", label);
}

void npu_recorder_free(npu_recorder_t *r)
{
    if (g_active == r)
        g_active = NULL;
    npu_prog_free(&r->prog);
    free(r->rec.before);
    free(r->rec.after);
    r->rec.before = r->rec.after = NULL;
}

void npu_recorder_before(npu_recorder_t *r, npu_sim_t *sim, uint64_t base, const npu_insn_t *prog,
                         size_t n)
{
    size_t dbytes = 0;
    const uint8_t *dram = npu_sim_dram(sim, &dbytes);
    uint64_t lo, hi;
    if (r->runs++ > 0) /* one program is kept: the caller refuses a command of several */
        return;
    npu_prog_dram_window(prog, n, base, &lo, &hi);
    hi = hi < dbytes ? hi : dbytes;
    lo = lo < hi ? lo : hi;
    r->rec.base = base;
    r->rec.lo = lo;
    r->rec.len = (size_t)(hi - lo);
    r->rec.before = malloc(r->rec.len ? r->rec.len : 1);
    r->rec.after = malloc(r->rec.len ? r->rec.len : 1);
    for (size_t i = 0; i < n && !r->failed; i++)
        r->failed = npu_prog_push(&r->prog, &prog[i]) != 0;
    if (!r->rec.before || !r->rec.after || !dram) {
        r->failed = 1;
        return;
    }
    memcpy(r->rec.before, dram + lo, r->rec.len);
}

void npu_recorder_after(npu_recorder_t *r, npu_sim_t *sim, const npu_run_result_t *res)
{
    const uint8_t *dram = npu_sim_dram(sim, NULL);
    if (r->runs != 1 || r->failed || !dram)
        return;
    memcpy(r->rec.after, dram + r->rec.lo, r->rec.len);
    memcpy(r->rec.cnt, res->cnt, sizeof r->rec.cnt);
    r->rec.ncnt = NPU_NUM_COUNTERS;
    r->rec.cycles = res->end_cycle - res->start_cycle;
}
