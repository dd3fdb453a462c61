/*
 * npu_cfg.h - the hardware configuration as a runtime value.
 *
 * The same typedef is emitted by sw/tools/gencfg.c into build/<cfg>/npu_params.h (with
 * NPU_CFG_INIT); both are guarded by NPU_CFG_T_DEFINED so either header may come first.
 * Compiler stages take a const npu_cfg_t * so they are pure and testable for any config;
 * only the CLI (sw/cli/) includes the generated header to get the build's default.
 */
#ifndef NPU_CFG_H
#define NPU_CFG_H

#include <stdint.h>

#include "npu_defs.h"

#ifndef NPU_CFG_T_DEFINED
#define NPU_CFG_T_DEFINED
/* The slicing stage's cost constants fitted on the RTL by `npu calibrate` (configs/<cfg>.calib,
 * Q16 cycles, the members of npu_slice_cost_t); valid = 0: none, the stage derives them from the
 * config (npu_slice_cost_default). */
typedef struct npu_cfg_calib {
    int valid;
    unsigned xfer_fixed, burst, byte, wave, drain_fixed, drain_row, lat_fixed, window, xfer_idle;
} npu_cfg_calib_t;
typedef struct npu_cfg {
    const char *name;
    int s, spm_banks, spm_bank_words, obuf_rows, lbuf_h_depth, lbuf_v_depth, queue_depth,
        token_max, dram_addr_bits, max_burst_beats, max_outstanding, watchdog_cycles, dram_bw,
        dram_latency, dram_burst_cost, dtype, /* dtype: NPU_DTYPE_* */
        beat_words,                           /* SPM words per DRAM beat */
        load_pipeline,                        /* 1: the LOAD engine takes the next descriptor
                                                 while the last one's data arrives */
        store_pipeline;                       /* 1: the STORE engine takes the next descriptor
                                                 while the last one's B responses are due */
    npu_cfg_calib_t calib;
} npu_cfg_t;
#endif

/* Derived sizes (docs/isa.md §1). */
static inline int npu_cfg_f(const npu_cfg_t *c) { return 2 * c->s; }          /* fused array side, lanes per word */
static inline unsigned npu_cfg_pes(const npu_cfg_t *c) { return 4u * (unsigned)c->s * (unsigned)c->s; } /* PEs */
/* An SPM word (the unit of SPM addresses, LBUF and OBUF rows, the DMA's rows) is 2S elements =
 * 4S bytes; a DRAM beat (the unit of AXI bursts, the 4 KiB rule's granule and the DRAM model's
 * transfers) is beat_words SPM words. Sizes inside the NPU use the word, DRAM traffic the beat. */
static inline int npu_cfg_word(const npu_cfg_t *c) { return 4 * c->s; }       /* bytes per SPM word */
static inline int npu_cfg_beat(const npu_cfg_t *c) { return 4 * c->s * (c->beat_words > 0 ? c->beat_words : 1); } /* bytes per DRAM beat */
static inline int npu_cfg_bf16(const npu_cfg_t *c) { return c->dtype == NPU_DTYPE_BF16; }
static inline int npu_cfg_spm_words(const npu_cfg_t *c) { return c->spm_banks * c->spm_bank_words; }

/* The SPM sub-bank code of an in-bank word address (rtl/npu_spm.v sub_code): the XOR over its set
 * bits i of the codes 01, 10, 11 (i mod 3). By parities: bit 0 of the code flips with every set bit
 * i = 0 or 2 (mod 3), bit 1 with every set bit i = 1 or 2 (mod 3). */
static inline unsigned npu_spm_sub_code(uint64_t v)
{
    const uint64_t m0 = 0x9249249249249249ull, m1 = m0 << 1, m2 = m0 << 2; /* bits i = 0, 1, 2 mod 3 */
    return (unsigned)__builtin_parityll(v & (m0 | m2)) | (unsigned)__builtin_parityll(v & (m1 | m2)) << 1;
}

/* The SPM unit {bank, sub-bank} of word a (rtl/npu_spm.v): bank a / SPM_BANK_WORDS, then the
 * sub-bank code of the in-bank address; bank * 4 + sub-bank. */
static inline unsigned npu_spm_unit(const npu_cfg_t *c, uint64_t a)
{
    uint64_t bw = c->spm_bank_words > 0 ? (uint64_t)c->spm_bank_words : 1;
    if ((bw & (bw - 1)) == 0) { /* every generated config: no division (the slicing search asks often) */
        unsigned sh = (unsigned)__builtin_ctzll(bw);
        return (unsigned)(a >> sh) * 4u + npu_spm_sub_code(a & (bw - 1));
    }
    return (unsigned)(a / bw) * 4u + npu_spm_sub_code(a % bw);
}

#endif
