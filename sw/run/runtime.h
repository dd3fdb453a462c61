/*
 * runtime.h - driving the NPU through the simulator C API (tb/npu_sim.h): DRAM allocation,
 * tensor layout, program launch, counters, and the GEMM driver with golden compare.
 */
#ifndef NPU_RUNTIME_H
#define NPU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "compile/gemm/gemm_emit.h"
#include "compile/gemm/gemm_tiling.h"
#include "hw/isa.h"
#include "prog/prog.h"
#include "hw/npu_cfg.h"
#include "hw/npu_defs.h"
#include "npu_sim.h"
#include "prog/prog_expect.h"

/* ---- names from the X-macros ---- */
const char *npu_error_name(unsigned code); /* "DEADLOCK"; NULL if unknown */
const char *npu_error_text(unsigned code); /* "deadlock: no progress ..."; NULL if unknown */
const char *npu_state_name(unsigned state);
const char *npu_csr_name(unsigned addr);
/* "lq=1 eq=2 sq=0 l2e=0 e2l=1 e2s=0 s2e=0 fetch_done=1 busy=-E-" style decoding of QSTATE. */
int npu_qstate_str(uint32_t qstate, char *buf, size_t n);
/* Decoding of NOCSTATE, the head flit of each NoC channel (V, H channel L = cores 0/2, H channel
 * R = cores 1/3): "NoC idle", or per waiting channel "H-L flit gid 5 blocked on core 2". */
int npu_nocstate_str(uint32_t nocstate, char *buf, size_t n);

/* ---- DRAM bump allocator: from 0 (program first), every block beat-aligned ---- */
typedef struct npu_alloc {
    uint64_t next, limit, align;
} npu_alloc_t;
void npu_alloc_init(npu_alloc_t *a, uint64_t dram_bytes, unsigned beat_bytes);

/* The DRAM model's timing from cfg (bandwidth, latency, burst cost), no stalls, seed 0. */
npu_dram_timing_t npu_dram_timing_of(const npu_cfg_t *cfg);
int npu_alloc(npu_alloc_t *a, uint64_t bytes, uint64_t *addr); /* 0, or -1 if it does not fit */

/* ---- tensors in DRAM: row-major, row pitch in bytes (dense: 2 * cols, resp. 4 * cols; a
 * larger pitch is zero-padded past cols) ---- */
void npu_write_i16(uint8_t *dram, uint64_t addr, size_t pitch, int rows, int cols,
                   const int16_t *src, size_t ld);
void npu_read_i32(const uint8_t *dram, uint64_t addr, size_t pitch, int rows, int cols,
                  int32_t *dst, size_t ld);
void npu_write_prog(uint8_t *dram, uint64_t addr, const npu_insn_t *prog, size_t n);

/* ---- launching a program ---- */
enum {
    NPU_RUN_DONE = 0,         /* STATUS = DONE */
    NPU_RUN_ERROR = 1,        /* STATUS = ERROR (err, err_pc, err_info) */
    NPU_RUN_TIMEOUT = 2,      /* max_cycles elapsed without halting */
    NPU_RUN_SIM_STOPPED = 3,  /* npu_sim_run returned -1 ($finish in the RTL) */
    NPU_RUN_HOST_ERROR = -1   /* the program does not fit the DRAM */
};

typedef struct npu_run_result {
    int halted;                       /* npu_sim_run returned 1 */
    int interrupted;                  /* SIGINT stopped it (run/progress.h): reported as a timeout */
    unsigned state, err;              /* STATUS[1:0], STATUS[15:8] */
    uint32_t status, err_pc, err_info, qstate, pc_l, pc_e, pc_s, fetch_pc;
    uint32_t nocstate;  /* NOCSTATE at the end (frozen at an error) */
    uint64_t start_cycle, end_cycle;  /* npu_sim_cycle around the run */
    double wall_s;                    /* wall-clock time of npu_sim_run */
    uint64_t cnt[NPU_NUM_COUNTERS];   /* performance counters (lo 0x100+i, hi 0x200+i) */
} npu_run_result_t;

/* The name of the programs a command runs next ("conv0 dx ecoflow", "L1 dW"), set by the command
 * before it runs them (printf-style; NULL: "program"), read by the recorder and the timeline
 * for each program npu_run_program starts. */
void npu_run_set_label(const char *fmt, ...);
const char *npu_run_label(void);

/* Writes the program at prog_base, sets PROG_BASE, PROG_LEN, WATCHDOG (cfg), clears the
 * counters (CTRL=2), starts (CTRL=1) and runs for at most max_cycles, or until SIGINT when the
 * CLI caught it (run/progress.h: then NPU_RUN_TIMEOUT with r->interrupted; after SIGINT no
 * program starts at all, so a command of many programs stops at once). Returns NPU_RUN_*. */
int npu_run_program(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base,
                    const npu_insn_t *prog, size_t n, uint64_t max_cycles, npu_run_result_t *r);

/* First divergence, in time: starts the program as npu_run_program and steps the simulator until
 * the EXEC queue works on instruction `pc` (PC_E = pc, exec busy); *cycle = that cycle
 * (npu_sim_cycle; timing does not depend on the data, so a re-run of the same program with the
 * same DRAM timing seed can trace a window around it with npu_sim_trace). Returns 0, or -1 if
 * the program halts first, max_cycles pass or it does not fit the DRAM. */
/* Starts the program as npu_run_program and steps the simulator one cycle at a time until
 * pred(sim, ctx) holds (it may read CSRs, e.g. the counters); *start (if not NULL) = the
 * simulator cycle of the start, *cycle = the cycle pred held (npu_sim_cycle). Returns 0, or -1 if the program halts first, max_cycles pass, SIGINT arrived (checked every 8192 cycles, as npu_run_program does) or it does not fit the DRAM. */
int npu_run_until(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base, const npu_insn_t *prog,
                  size_t n, uint64_t max_cycles, int (*pred)(npu_sim_t *, void *), void *ctx,
                  uint64_t *start, uint64_t *cycle);
int npu_run_find_exec_pc(const npu_cfg_t *cfg, npu_sim_t *sim, uint64_t prog_base,
                         const npu_insn_t *prog, size_t n, uint32_t pc, uint64_t max_cycles,
                         uint64_t *cycle);

/* Reads HW_S, HW_SPM, HW_OBUF and compares them with cfg. 0 if they match; otherwise -1 and a
 * message in msg. */
int npu_check_hw(const npu_cfg_t *cfg, npu_sim_t *sim, char *msg, size_t n);

/* ---- GEMM driver ---- */
enum {
    NPU_GEMM_PASS = 0,      /* bit-exact and the counters add up */
    NPU_GEMM_MISMATCH = 1,  /* result differs from the golden model */
    NPU_GEMM_COUNTERS = 2,  /* result right, counters disagree with the program */
    NPU_GEMM_NPU_ERROR = 3, /* STATUS = ERROR */
    NPU_GEMM_TIMEOUT = 4,   /* max_cycles reached */
    NPU_GEMM_NO_FIT = 5,    /* program and tensors need more DRAM than the config has
                               (host_msg: the bytes needed and the limit) */
    NPU_GEMM_HOST_ERROR = -1 /* no plan, does not fit DRAM, out of memory */
};
const char *npu_gemm_rc_name(int rc); /* "PASS", "FAIL", ... */

typedef struct npu_gemm_report {
    int M, N, K, transA, transB;
    int rc;
    char host_msg[160];       /* reason for NPU_GEMM_HOST_ERROR */
    npu_gemm_plan_t plan;
    npu_gemm_args_t args;
    uint64_t prog_base, dram_used;
    uint64_t dram_need;       /* bytes of program and tensors (NPU_GEMM_NO_FIT: over the DRAM) */
    npu_prog_t prog;          /* owned; freed by npu_gemm_report_free */
    npu_prog_expect_t expect;
    npu_run_result_t run;
    size_t mismatches;        /* first mismatch (row-major) below */
    int bad_row, bad_col;
    int32_t bad_got, bad_exp;
    char counters_msg[256];   /* first counter that disagrees, "" if none */
    uint64_t rd_beats, wr_beats, rd_bursts, wr_bursts, stall_cycles; /* npu_sim_dram_stats */
} npu_gemm_report_t;

/* Runs C[MxN] = A * B on the NPU. A is dense M x K (K x M if transA), B dense K x N (N x K if
 * transB); C_out (may be NULL) receives the NPU result, dense M x N. Compares against the golden
 * model and checks the counters against npu_prog_expect. Returns NPU_GEMM_*; rep is always
 * filled (call npu_gemm_report_free afterwards). */
int npu_gemm_run(const npu_cfg_t *cfg, npu_sim_t *sim, int M, int N, int K, const int16_t *A,
                 const int16_t *B, int transA, int transB, int32_t *C_out, uint64_t max_cycles,
                 npu_gemm_report_t *rep);
void npu_gemm_report_free(npu_gemm_report_t *rep);
/* The two halves of a GEMM run after its compilation (rep: M, N, K, transA/B, args, prog,
 * prog_base, expect filled), used by npu_gemm_run and by the replay of a saved program
 * (progfile.h). npu_gemm_layout writes A and B into dram (the DRAM image, from address 0) and
 * poisons C's rows. npu_gemm_execute runs the program, reads C (into C_out when not NULL),
 * compares it with expect (M x N, dense; NULL: no compare) and checks every counter against
 * the program. Returns NPU_GEMM_*. */
void npu_gemm_layout(uint8_t *dram, const npu_gemm_report_t *rep, const int16_t *A,
                     const int16_t *B);
int npu_gemm_execute(const npu_cfg_t *cfg, npu_sim_t *sim, const int32_t *expect, int32_t *C_out,
                     uint64_t max_cycles, npu_gemm_report_t *rep);
/* The golden C of a compiled GEMM (rep: M, N, K, transA/B, plan, args.modes): int16, or bf16
 * summed in the order of the plan's waves (ref/golden_bf16.h with compile/gemm's
 * npu_gemm_kwaves). C dense M x N (fp32 bit patterns in bf16). Returns 0, -1 out of memory. */
int npu_gemm_golden(const npu_cfg_t *cfg, const npu_gemm_report_t *rep, const int16_t *A,
                    const int16_t *B, int32_t *C);
/* The same for a GEMM program of plan (M, N, K from it) under policy modes (NPU_EMIT_*), operands
 * as npu_golden_gemm (golden.h) lays them out, C with pitch ldc: the training step's GEMMs. */
int npu_gemm_golden_plan(const npu_cfg_t *cfg, const npu_gemm_plan_t *plan, int modes,
                         const int16_t *A, size_t lda, int transA, const int16_t *B, size_t ldb,
                         int transB, int32_t *C, size_t ldc);
/* ORed into a modes argument, the tiles (npu gemm --slicing):
 *   none          auto: the slicing stage's burst-aware pick (npu_gemm_tile_sliced), with the
 *                 resident band it costed if its pick has one (a split-A pick only when the
 *                 program-time model times it faster than the best pick without the split,
 *                 gemm_tiling.h); gemm_tiling's tiles
 *                 with a band for transposed operands, a search space over
 *                 NPU_GEMM_AUTO_MAX_CANDS, or when the search fails
 *   _HEURISTIC    gemm_tiling's tiles with a band (npu_gemm_tile_res)
 *   _BURST        the slicing stage's pick under its burst-aware cost, as it planned it (its
 *                 band, if it picked one: the same as auto where auto searches)
 *   _NOBURST      the same under its bytes-only cost (the band costed by bytes alone too)
 *   NPU_GEMM_NO_BAND  gemm_tiling's tiles without a band (npu_gemm_tile_ex): every K chunk
 *                 loads both operands, the plain double-buffered pipeline `npu overlap` measures */
#define NPU_GEMM_SLICING_BURST 0x100
#define NPU_GEMM_SLICING_NOBURST 0x200
#define NPU_GEMM_SLICING_HEURISTIC 0x800
#define NPU_GEMM_SLICING_MASK (NPU_GEMM_SLICING_BURST | NPU_GEMM_SLICING_NOBURST | NPU_GEMM_SLICING_HEURISTIC)
#define NPU_GEMM_NO_BAND 0x400
/* The swapped form C^T = B^T A^T (compile/gemm/gemm_swap.h, transposed STOREs): by default taken
 * for a tiny-M GEMM (M < 2S < N) when the program-time model predicts it faster; _ON takes it for
 * any shape, _OFF never (bf16: never, the golden's order is the plain plan's). */
#define NPU_GEMM_SWAP_ON 0x1000
#define NPU_GEMM_SWAP_OFF 0x2000
/* auto searches GEMMs of at most this many slicing candidates (npu_slice_count, the three band
 * options included: 1.5 x the 131,072 of two, so the same shapes are searched); 512^3 has 23,958
 * at S = 8, 12544 x 64 x 147 about 30,000. */
#define NPU_GEMM_AUTO_MAX_CANDS 196608

/* npu_gemm_run with the emitter's mapping policy args.modes (NPU_EMIT_*, gemm_emit.h:
 * NPU_EMIT_FW = FW only as npu_gemm_run, NPU_EMIT_FLEXSA = Algorithm 1 per wave, NPU_EMIT_1G4C =
 * four independent cores). */
int npu_gemm_run_modes(const npu_cfg_t *cfg, npu_sim_t *sim, int M, int N, int K,
                       const int16_t *A, const int16_t *B, int transA, int transB, int modes,
                       int32_t *C_out, uint64_t max_cycles, npu_gemm_report_t *rep);

/* npu_gemm_run_modes with a given tiling (checked by npu_gemm_plan_check; M, N, K from it,
 * operands not transposed): a compiler's candidate measured on the RTL (the slicing stage's
 * fidelity, tests/slice/slice_fidelity.c). */
int npu_gemm_run_plan(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_gemm_plan_t *plan, const int16_t *A,
                      const int16_t *B, int modes, int32_t *C_out, uint64_t max_cycles, npu_gemm_report_t *rep);

/* The compile half of npu_gemm_run (no simulator): tiling, DRAM layout for a DRAM of dram_bytes
 * (program at 0, then A, B, C), emission and expected counters into rep. Returns NPU_GEMM_PASS
 * or NPU_GEMM_HOST_ERROR (reason in rep->host_msg). Free rep with npu_gemm_report_free. */
int npu_gemm_compile(const npu_cfg_t *cfg, uint64_t dram_bytes, int M, int N, int K, int transA,
                     int transB, npu_gemm_report_t *rep);

/* DRAM bytes of a GEMM's A, B and C as npu_gemm_compile lays them out (beat-rounded), 0 when
 * no plan exists. Cheap: the program is not emitted (npu_gemm_compile does that once, and
 * returns NPU_GEMM_NO_FIT when program and tensors together exceed the DRAM). The CLI checks it
 * against the config's DRAM before it builds any operand. */
uint64_t npu_gemm_tensor_bytes(const npu_cfg_t *cfg, int M, int N, int K, int transA, int transB,
                               int modes);

/* The compile half for tensors the caller placed (a training step's, run/step_run.h): the
 * tiling of M x N x K under args->modes (policy | tiling choice, as npu_gemm_run_modes), the
 * program for the addresses, pitches, transposes and tags of *args, to be loaded at prog_base.
 * Nothing is allocated or checked against a DRAM size. NPU_GEMM_PASS or NPU_GEMM_HOST_ERROR. */
int npu_gemm_compile_args(const npu_cfg_t *cfg, int M, int N, int K, const npu_gemm_args_t *args,
                          uint64_t prog_base, npu_gemm_report_t *rep);

/* npu_gemm_compile with the emitter's policy args.modes (NPU_EMIT_*, gemm_emit.h). */
int npu_gemm_compile_modes(const npu_cfg_t *cfg, uint64_t dram_bytes, int M, int N, int K,
                           int transA, int transB, int modes, npu_gemm_report_t *rep);

/* Compares counters with the expectation of a program; 0 if they add up, else -1 and the first
 * difference in msg. Checked: DMA bytes per tag (PROG excluded: fetch may over-read), MACs (total
 * and per core), waves and rows per mode, completed instructions per queue, drained rows, FILL
 * words, DMA write bursts, the vector unit's busy cycles and words. */
int npu_check_counters(const uint64_t *cnt, const npu_prog_expect_t *e, char *msg, size_t n);

/* 0 if busy_<mode>, idle_pe_shape and the NoC counters match x, else -1 and the first
 * difference in msg. */
int npu_check_array_counters(const uint64_t *c, const npu_array_expect_t *x, char *msg, size_t n);

#endif
