/*
 * recorder.h - recording the programs a command runs (npu conv --save-program F): while a
 * recorder is installed, npu_run_program hands it each program before the start (the DRAM
 * window the program touches, as the run will find it) and after the run (the same window, the
 * counters, the cycles). The first program is kept; `runs` counts them all, so a caller that
 * saves one program can refuse a command of several. Written as a kind-2 program file
 * (run/progfile.h), replayed by `npu run F`.
 */
#ifndef NPU_RUN_RECORDER_H
#define NPU_RUN_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "prog/prog.h"
#include "run/progfile.h"
#include "run/runtime.h"

typedef struct npu_recorder {
    int runs;           /* programs started while installed */
    int failed;         /* out of memory while recording the first */
    npu_prog_t prog;    /* the first program */
    npu_progrec_t rec;  /* its window before / after, counters, cycles */
} npu_recorder_t;

void npu_recorder_init(npu_recorder_t *r, const char *label);
void npu_recorder_free(npu_recorder_t *r);
void npu_recorder_install(npu_recorder_t *r); /* NULL: none */
npu_recorder_t *npu_recorder_active(void);
/* npu_run_program's calls: the program written and its CSRs set, before the start; after the
 * run with its result. */
void npu_recorder_before(npu_recorder_t *r, npu_sim_t *sim, uint64_t base, const npu_insn_t *prog,
                         size_t n);
void npu_recorder_after(npu_recorder_t *r, npu_sim_t *sim, const npu_run_result_t *res);

#endif
