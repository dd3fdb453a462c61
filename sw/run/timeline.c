/* timeline.c - a program's slices from its per-cycle samples and DRAM bursts; see timeline.h.
 * Pure: no simulator, no file (timeline_file.c samples the simulator and writes the JSON). */
#include "run/timeline.h"

#include <stdlib.h>
#include <string.h>

int npu_tl_queue_of(const npu_insn_t *in)
{
    switch (npu_op_queue(npu_insn_op(in))) {
    case 'L':
        return NPU_TL_LOAD;
    case 'E':
        return NPU_TL_EXEC;
    case 'S':
        return NPU_TL_STORE;
    default:
        return -1;
    }
}

void npu_tl_prog_init(npu_tl_prog_t *p, const npu_insn_t *insn, size_t n_insn, uint64_t start)
{
    memset(p, 0, sizeof *p);
    p->insn = insn;
    p->n_insn = n_insn;
    p->start = start;
}

void npu_tl_prog_free(npu_tl_prog_t *p)
{
    free(p->ev);
    memset(p, 0, sizeof *p);
}

static void add(npu_tl_prog_t *p, uint32_t track, uint64_t ts, uint64_t end, uint32_t arg,
                uint64_t addr)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 1024;
        npu_tl_event_t *e = realloc(p->ev, cap * sizeof *e);
        if (!e) {
            p->oom = 1; /* reported by npu_timeline_close: the file would be incomplete */
            return;
        }
        p->ev = e;
        p->cap = cap;
    }
    p->ev[p->n].ts = ts;
    p->ev[p->n].dur = end - ts;
    p->ev[p->n].addr = addr;
    p->ev[p->n].track = track;
    p->ev[p->n].arg = arg;
    p->n++;
}

/* QSTATE's view of queue q: 1 when its slice is open (LOAD / STORE: a descriptor in flight; EXEC:
 * an instruction queued or a unit busy, PC_E then naming the head or the last one issued). */
static int queue_active(unsigned q, uint32_t qstate)
{
    if (q == NPU_TL_EXEC)
        return (qstate >> 30 & 1u) || (qstate >> 4 & 0xFu) != 0;
    return (qstate >> (q == NPU_TL_LOAD ? 29 : 31) & 1u) != 0;
}

static void sample_queues(npu_tl_prog_t *p, const npu_tl_sample_t *s)
{
    for (unsigned q = 0; q < 3; q++) {
        int on = queue_active(q, s->qstate);
        if (p->q_open[q] && (!on || s->pc[q] != p->q_pc[q])) {
            add(p, q, p->q_since[q], s->cycle, p->q_pc[q], 0);
            p->q_open[q] = 0;
        }
        if (on && !p->q_open[q]) {
            p->q_open[q] = 1;
            p->q_pc[q] = s->pc[q];
            p->q_since[q] = s->cycle;
        }
    }
}

/* A counter that grew between the last sample and this one: its run continues or starts; a run
 * whose counter stood still ends. The run covers the cycles with an increment, moved back by
 * NPU_TL_CNT_LAG onto the queue slices' time. */
static void sample_counters(npu_tl_prog_t *p, const npu_tl_sample_t *s)
{
    uint64_t t = s->cycle > NPU_TL_CNT_LAG ? s->cycle - NPU_TL_CNT_LAG : 0;
    for (unsigned i = 0; i < NPU_TL_NCNT; i++) {
        uint32_t d = s->cnt[i] - (p->have ? p->last.cnt[i] : 0u); /* wraps like the counter */
        if (d && !p->c_since[i])
            p->c_since[i] = t + 1;
        else if (!d && p->c_since[i]) {
            add(p, NPU_TL_CNT0 + i, p->c_since[i] - 1, t, 0, 0);
            p->c_since[i] = 0;
        }
    }
}

void npu_tl_prog_sample(npu_tl_prog_t *p, const npu_tl_sample_t *s)
{
    sample_queues(p, s);
    sample_counters(p, s);
    p->last = *s;
    p->have = 1;
    p->cycles = s->cycle + 1;
}

void npu_tl_prog_finish(npu_tl_prog_t *p)
{
    for (unsigned q = 0; q < 3; q++)
        if (p->q_open[q])
            add(p, q, p->q_since[q], p->cycles, p->q_pc[q], 0);
    for (unsigned i = 0; i < NPU_TL_NCNT; i++)
        if (p->c_since[i])
            add(p, NPU_TL_CNT0 + i, p->c_since[i] - 1,
                p->cycles > NPU_TL_CNT_LAG ? p->cycles - NPU_TL_CNT_LAG : 0, 0, 0);
    memset(p->q_open, 0, sizeof p->q_open);
    memset(p->c_since, 0, sizeof p->c_since);
}

/* The first lane free at start (bursts of one direction complete in order, so this packs them
 * as tightly as their overlap allows). */
void npu_tl_prog_burst(npu_tl_prog_t *p, int write, uint64_t addr, unsigned beats, uint64_t start,
                       uint64_t end)
{
    uint64_t *lanes = p->lane_end[write ? 1 : 0];
    unsigned l = 0;
    if (start < p->start || end < start)
        return; /* a burst of an earlier program (the fetch of the last one draining) */
    start -= p->start;
    end -= p->start;
    while (l + 1 < NPU_TL_DRAM_LANES && lanes[l] > start)
        l++;
    lanes[l] = end;
    add(p, (write ? NPU_TL_WR0 : NPU_TL_RD0) + l, start, end, beats, addr);
}

#define NPU_TL_X_TRACK(c, t, s) t,
static const char *const k_cnt_track[NPU_TL_NCNT] = {NPU_TL_COUNTERS(NPU_TL_X_TRACK)};

const char *npu_tl_track_name(unsigned track, char *buf, size_t n)
{
    static const char *const q[3] = {"LOAD", "EXEC", "STORE"};
    if (track < NPU_TL_CNT0)
        snprintf(buf, n, "%s", q[track]);
    else if (track < NPU_TL_RD0)
        snprintf(buf, n, "%s", k_cnt_track[track - NPU_TL_CNT0]);
    else if (track < NPU_TL_WR0)
        snprintf(buf, n, "DRAM read %u", track - NPU_TL_RD0);
    else
        snprintf(buf, n, "DRAM write %u", track - NPU_TL_WR0);
    return buf;
}
