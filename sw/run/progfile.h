/*
 * progfile.h - compiled programs saved with their DRAM state (`npu gemm --save-program F`: one
 * GEMM; `npu conv / train / gemm --topology ... --save-program F`: every program the command
 * ran, in order), replayed on the RTL without the compiler (`npu run F`) and disassembled
 * (`npu disasm F`).
 *
 * The file, version 2 (all integers little-endian):
 *   "NPUPROG\0", u32 format version (NPU_PROGFILE_VERSION), u32 program count, u64 file bytes
 *   config: u32 length + name, u64 npu_cfg_hash (the hardware parameters, not the name)
 *   per program, in run order, a record: u32 kind, u64 record bytes (what follows, to the next
 *     record), then
 *     DRAM timing of the run: bandwidth (IEEE double bits), latency, burst cost, stall %, seed
 *     u64 flags (bit 0: the program started a new simulator; else it ran on the previous
 *       program's, right after it: its DRAM stall generator and clock go on), u64 the
 *       simulator's cycle at the start (the replay must start there too)
 *     the body of its kind:
 *     kind 1 (a saved GEMM, the file's only program): M, N, K, transA, transB, the plan
 *       (npu_gemm_plan_t's fields) and the DRAM layout (npu_gemm_args_t's: tensor map A, B, C
 *       with addresses, pitches, tags), u64 each; the program (u64 base, u64 count, count x 4
 *       u32 words); the DRAM image (u64 address, u64 length, the bytes: A, B and C's poisoned
 *       rows, as written before the run); the expected results (u64 count: M x N, or 0 when
 *       absent; count x i32, the golden C)
 *     kind 2 (a recorded program, any emitter): u32 length + a label ("conv0 dx ecoflow"), the
 *       program (as kind 1), the DRAM window the program touches (u64 address, u64 length, the
 *       bytes before the run, the bytes after it: its expected results), the run's counters
 *       (u64 count, u64 each) and cycles. Its replay must leave the same window and give the
 *       same counters (npu_progfile_run_rec).
 *   u64 FNV-1a of every byte before it
 * Version 1 files (one program: the header's second word its kind, the timing after the
 * configuration, then the body) still load as a file of one program that starts a simulator.
 * A file is refused when its magic, version, length or checksum is wrong, a record's length or
 * a field is out of range (the message names the program), or (npu_progfile_check_cfg) it was
 * built for another configuration.
 */
#ifndef NPU_PROGFILE_H
#define NPU_PROGFILE_H

#include <stddef.h>
#include <stdint.h>

#include "hw/npu_cfg.h"
#include "npu_sim.h"
#include "run/runtime.h"

#define NPU_PROGFILE_VERSION 2
#define NPU_PROGFILE_MAX_PROGS 65536 /* programs in one file */

enum { NPU_PROGFILE_GEMM = 1, NPU_PROGFILE_REC = 2 };

/* A recorded run (kind 2): the program, the DRAM window around every address it touches before
 * and after the run, the run's counters. */
typedef struct npu_progrec {
    char label[128];
    uint64_t base;                /* the program's DRAM address */
    uint64_t lo;                  /* the window [lo, lo + len) */
    size_t len;
    uint8_t *before, *after;
    uint64_t cnt[NPU_NUM_COUNTERS];
    unsigned ncnt;                /* counters in the file (a later build may have more) */
    uint64_t cycles;              /* end_cycle - start_cycle of the run */
} npu_progrec_t;

typedef struct npu_progfile {
    int kind;                 /* NPU_PROGFILE_* */
    npu_progrec_t rec;        /* kind 2 (its program in gemm.prog, base in gemm.prog_base) */
    char config[64];
    uint64_t config_hash;
    npu_dram_timing_t timing;
    npu_gemm_report_t gemm;   /* M, N, K, transA/B, plan, args, prog_base, prog filled */
    uint64_t image_addr;
    uint8_t *image;
    size_t image_len;
    int32_t *expect;          /* M x N, NULL when the file has none */
    int fresh;                /* 1: the program started a new simulator (opened with timing) */
    uint64_t start_cycle;     /* the simulator's cycle at its start (0: not saved, version 1) */
} npu_progfile_t;

/* A whole file: the programs in run order, each with the file's config and hash copied. */
typedef struct npu_progset {
    int version;              /* the file's format version */
    char config[64];
    uint64_t config_hash;
    size_t n;
    npu_progfile_t *p;
} npu_progset_t;

/* FNV-1a 64 of the configuration's hardware parameters (everything but the name and the
 * slicing stage's calibration, which change programs, not the hardware). */
uint64_t npu_cfg_hash(const npu_cfg_t *cfg);

/* The file of a compiled GEMM (rep after npu_gemm_run_modes or npu_gemm_compile_modes) with
 * operands A, B laid out as the run did (npu_gemm_layout) and expect (the golden C, may be NULL).
 * 0, or -1 with the reason in err. */
int npu_progfile_save(const char *path, const npu_cfg_t *cfg, const npu_dram_timing_t *t,
                      const npu_gemm_report_t *rep, const int16_t *A, const int16_t *B,
                      const int32_t *expect, char *err, size_t errn);
/* Writes the programs p[0..n) in order (kind 1 or 2 each: a saved GEMM only alone), with the
 * configuration cfg. 0, or -1 with the reason in err. */
int npu_progset_save(const char *path, const npu_cfg_t *cfg, const npu_progfile_t *p, size_t n,
                     char *err, size_t errn);
/* Parses a whole file held in buf[0..n). 0, or -1 with the reason in err. */
int npu_progset_parse(const uint8_t *buf, size_t n, npu_progset_t *s, char *err, size_t errn);
int npu_progset_load(const char *path, npu_progset_t *s, char *err, size_t errn);
void npu_progset_free(npu_progset_t *s);
/* 0 when p was built for cfg (same name and hash), else -1 naming both. */
int npu_progfile_check_cfg(const npu_progfile_t *p, const npu_cfg_t *cfg, char *err, size_t errn);
/* Replays p on sim: the image into DRAM, the program run, C compared with the expected results
 * (when present), every counter checked against the program; p->gemm holds the report. Returns
 * NPU_GEMM_*. */
int npu_progfile_run(const npu_cfg_t *cfg, npu_sim_t *sim, npu_progfile_t *p, int32_t *C_out,
                     uint64_t max_cycles);
void npu_progfile_free(npu_progfile_t *p);

/* Kind 2 replay: the window's "before" bytes into DRAM, the program run (npu_run_program), then
 * the window compared with "after" byte for byte, every counter, the cycles and the start cycle
 * with the saved ones and with the program's expectation (npu_check_counters). Returns NPU_GEMM_PASS,
 * _MISMATCH (the window differs: *bad_bytes, the first at *first), _COUNTERS (msg says which),
 * _NPU_ERROR, _TIMEOUT or _HOST_ERROR (msg). r holds the run. */
int npu_progfile_run_rec(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_progfile_t *p,
                         uint64_t max_cycles, npu_run_result_t *r, size_t *bad_bytes,
                         uint64_t *first, char *msg, size_t n);

/* The DRAM window a program touches: its own words and every LOAD / STORE descriptor's rows
 * (an over-estimate is harmless: more bytes compared). [*lo, *hi). */
void npu_prog_dram_window(const npu_insn_t *prog, size_t n, uint64_t base, uint64_t *lo,
                          uint64_t *hi);

#endif
