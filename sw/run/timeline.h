/*
 * timeline.h - a run's timeline (npu ... --timeline F.json): Chrome trace-event JSON that Perfetto
 * (ui.perfetto.dev) and chrome://tracing open.
 *
 * The events come from the simulation itself, sampled after every clock cycle through the
 * simulator API (tb/npu_sim.h), so the RTL needs no extra signal:
 *   - the queues' CSRs QSTATE, PC_L, PC_E, PC_S: a LOAD / STORE slice is a descriptor in flight
 *     in its DMA engine (QSTATE busy_l / busy_s, PC_L / PC_S), an EXEC slice the instruction at
 *     the EXEC queue's head, or the last one issued while its units still work;
 *   - the low words of the counters NPU_TL_COUNTERS: a slice per run of cycles in which a counter
 *     grew (waves by mode from busy_<mode>, drains from drain_busy, the stalls from wait_*), so
 *     a track's summed slice durations equal its counter;
 *   - the DRAM model's burst hook (npu_sim_burst_hook): one slice per burst from its AR / AW to
 *     its last beat, on lanes so that bursts in flight together do not overlap on one track.
 * Each program run is one process of the trace, named after its label (npu_run_label: "conv0
 * fwd (program 1, 69 instructions)"), one track per queue and kind; time is in NPU cycles,
 * written as microseconds (1 us = 1 cycle), on one clock shared by the command's runs: each
 * run's slices are offset by the sampled cycles of the runs before it, in the order they ran.
 *
 * The CLI installs one timeline (npu_timeline_install); npu_run_program then samples every
 * program it runs, cycle by cycle (a few CSR reads per cycle: slower than the plain run).
 */
#ifndef NPU_RUN_TIMELINE_H
#define NPU_RUN_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hw/isa.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"

/* X(counter, track name, slice name): the counters sampled every cycle. */
#define NPU_TL_COUNTERS(X)                                          \
    X(busy_fw, "array FW", "FW wave")                               \
    X(busy_vsw, "array VSW", "VSW wave")                            \
    X(busy_hsw, "array HSW", "HSW wave")                            \
    X(busy_isw, "array ISW", "ISW wave")                            \
    X(drain_busy, "drain", "DRAIN")                                 \
    X(wait_tok_load, "LOAD stall: token", "wait token")             \
    X(wait_tok_exec, "EXEC stall: token", "wait token")             \
    X(wait_exec_weights, "EXEC stall: weights", "wait weights")     \
    X(wait_exec_obuf, "EXEC stall: OBUF", "wait OBUF drain")        \
    X(wait_exec_unit, "EXEC stall: unit", "wait unit")              \
    X(wait_tok_store, "STORE stall: token", "wait token")
#define NPU_TL_X_COUNT(c, t, s) +1
enum { NPU_TL_NCNT = 0 NPU_TL_COUNTERS(NPU_TL_X_COUNT) };

/* A sample after the clock edge of cycle c shows the queues as they are in cycle c + 1 and the
 * counters with the events of cycle c - 1 (npu_ctrl adds registered increments): counter runs
 * are moved back by this many cycles onto the queue slices' time. */
#define NPU_TL_CNT_LAG 2

/* Tracks of a program: the three queues, one per sampled counter, then DRAM burst lanes. */
enum { NPU_TL_LOAD = 0, NPU_TL_EXEC, NPU_TL_STORE, NPU_TL_CNT0 };
#define NPU_TL_DRAM_LANES 64 /* per direction; bursts past them share the last lane */
#define NPU_TL_RD0 (NPU_TL_CNT0 + NPU_TL_NCNT)
#define NPU_TL_WR0 (NPU_TL_RD0 + NPU_TL_DRAM_LANES)

/* One cycle's view, taken after its clock edge. */
typedef struct npu_tl_sample {
    uint64_t cycle;            /* cycles since the program's start */
    uint32_t qstate;           /* CSR QSTATE */
    uint32_t pc[3];            /* PC_L, PC_E, PC_S */
    uint32_t cnt[NPU_TL_NCNT]; /* low words of the NPU_TL_COUNTERS */
} npu_tl_sample_t;

/* One slice ("ph": "X"). */
typedef struct npu_tl_event {
    uint64_t ts, dur; /* cycles since the program's start */
    uint64_t addr;    /* DRAM bursts: the address */
    uint32_t track;   /* NPU_TL_* */
    uint32_t arg;     /* queue tracks: the instruction; bursts: beats */
} npu_tl_event_t;

/* One program's slices, built from its samples and bursts (pure: no simulator). */
typedef struct npu_tl_prog {
    npu_tl_event_t *ev;
    size_t n, cap;
    int oom;                       /* an allocation failed: events were lost */
    const npu_insn_t *insn;        /* the program (not owned; valid until npu_timeline_end) */
    size_t n_insn;
    uint64_t start;                /* simulator cycle of the start */
    uint64_t cycles;               /* sampled cycles */
    int have;                      /* a sample was taken */
    npu_tl_sample_t last;
    int q_open[3];                 /* queue slices open: pc, since */
    uint32_t q_pc[3];
    uint64_t q_since[3];
    uint64_t c_since[NPU_TL_NCNT]; /* counter runs open since (cycle + 1; 0 = none) */
    uint64_t lane_end[2][NPU_TL_DRAM_LANES];
} npu_tl_prog_t;

void npu_tl_prog_init(npu_tl_prog_t *p, const npu_insn_t *insn, size_t n_insn, uint64_t start);
/* Advances the slices by one sample (samples in cycle order, one per cycle). */
void npu_tl_prog_sample(npu_tl_prog_t *p, const npu_tl_sample_t *s);
/* A burst from the DRAM model's hook (simulator cycles). */
void npu_tl_prog_burst(npu_tl_prog_t *p, int write, uint64_t addr, unsigned beats, uint64_t start,
                       uint64_t end);
/* Closes the slices still open at the last sample. */
void npu_tl_prog_finish(npu_tl_prog_t *p);
void npu_tl_prog_free(npu_tl_prog_t *p);

/* The queue track an instruction belongs to (its opcode's queue), -1 for an unknown opcode. */
int npu_tl_queue_of(const npu_insn_t *in);

/* ---- the timeline of a command: programs streamed into one JSON file ---- */
typedef struct npu_timeline npu_timeline_t;

/* Opens path for writing; meta_json (may be NULL) is a JSON object text kept under
 * "otherData.meta" (the command's metadata). NULL on failure (errno set). */
npu_timeline_t *npu_timeline_open(const char *path, const char *meta_json);
/* Writes the end of the file and closes it: 0, or -1 when writing failed or events were lost. */
int npu_timeline_close(npu_timeline_t *tl);

/* What npu_run_program uses: the installed timeline (NULL: none), a program's start, the
 * sampled run (as npu_sim_run: 1 halted, 0 max_cycles passed, -1 the RTL stopped) and its end
 * with the run's counters (all NPU_NUM_COUNTERS). */
void npu_timeline_install(npu_timeline_t *tl);
npu_timeline_t *npu_timeline_active(void);
void npu_timeline_begin(npu_timeline_t *tl, npu_sim_t *sim, const npu_insn_t *prog, size_t n);
int npu_timeline_run(npu_timeline_t *tl, npu_sim_t *sim, uint64_t max_cycles);
void npu_timeline_end(npu_timeline_t *tl, npu_sim_t *sim, const uint64_t *cnt);

/* The track's name ("LOAD", "array FW", "DRAM read 3") into buf. */
const char *npu_tl_track_name(unsigned track, char *buf, size_t n);

#endif
