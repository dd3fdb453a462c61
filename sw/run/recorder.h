/*
 * recorder.h - recording every program a command runs (npu conv / train / gemm --topology ...
 * --save-program F): while a recorder is installed, npu_run_program hands it each program before
 * the start (the DRAM window the program touches, as the run will find it, the simulator's
 * cycle) and after the run (the same window, the counters, the cycles). The CLI tells it each
 * simulator it opens and that simulator's DRAM timing (npu_recorder_sim_opened), so a program
 * is known to start a new simulator or to follow the previous one on the same simulator. The
 * programs, named by npu_run_label, are written as one program file of kind-2 records
 * (run/progfile.h), replayed in order by `npu run F`.
 */
#ifndef NPU_RUN_RECORDER_H
#define NPU_RUN_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "prog/prog.h"
#include "run/progfile.h"
#include "run/runtime.h"

typedef struct npu_recorder {
    const char *failed;      /* why the recording is unusable (NULL: it is) */
    npu_progfile_t *p;       /* the programs in run order (kind 2) */
    size_t n, cap;
    const npu_sim_t *sim;    /* the simulator of the last program */
    const npu_sim_t *opened; /* the simulator opened last, its timing, no program run on it yet */
    npu_dram_timing_t opened_timing;
} npu_recorder_t;

void npu_recorder_init(npu_recorder_t *r);
void npu_recorder_free(npu_recorder_t *r);
void npu_recorder_install(npu_recorder_t *r); /* NULL: none */
npu_recorder_t *npu_recorder_active(void);
/* The CLI opened sim with timing t (NULL: the configuration's defaults, not recordable). */
void npu_recorder_sim_opened(npu_recorder_t *r, const npu_sim_t *sim, const npu_dram_timing_t *t);
/* npu_run_program's calls: the program written and its CSRs set, before the start; after the
 * run with its result. */
void npu_recorder_before(npu_recorder_t *r, npu_sim_t *sim, uint64_t base, const npu_insn_t *prog,
                         size_t n);
void npu_recorder_after(npu_recorder_t *r, npu_sim_t *sim, const npu_run_result_t *res);
/* Writes the programs recorded (npu_progset_save). 0, or -1 with the reason in err. */
int npu_recorder_save(const npu_recorder_t *r, const char *path, const npu_cfg_t *cfg, char *err,
                      size_t errn);

#endif
