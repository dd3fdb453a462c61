/*
 * progress.h - long runs: a progress line on stderr while a program runs, and SIGINT stopping
 * the run at the next check. The CLI turns both on (npu_progress_install); a library user who
 * does not gets neither, and npu_run_program runs exactly as before.
 */
#ifndef NPU_RUN_PROGRESS_H
#define NPU_RUN_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "npu_sim.h"

/* Catches SIGINT (a second one kills as usual) and shows the progress line when stderr is a
 * terminal. */
void npu_progress_install(void);
/* 1 once SIGINT arrived after npu_progress_install. */
int npu_progress_interrupted(void);

/* One run's progress line: cycles, cycles/s, each queue's PC against the program length and the
 * estimated time left, redrawn about once a second; erased at the end. */
typedef struct npu_progress {
    double t0, last; /* wall clock at the start and at the last line */
    uint64_t c0;     /* simulator cycle at the start */
    size_t n;        /* program length */
    int shown;       /* a line is on the terminal */
} npu_progress_t;

void npu_progress_start(npu_progress_t *p, npu_sim_t *sim, size_t n);
void npu_progress_update(npu_progress_t *p, npu_sim_t *sim);
void npu_progress_end(npu_progress_t *p);

#endif
