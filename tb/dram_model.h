/*
 * dram_model.h - functional + timing model of the DRAM behind the NPU's AXI-like master port.
 *
 * One read port (AR/R) and one write port (AW/W/B); a beat is `beat_bytes` (= 4*S) bytes.
 * The model is a Moore machine. Every clock cycle the harness calls
 *   1. dram_drive(d, &out)   outputs of this cycle, a function of the state only;
 *   2. (the RTL evaluates with those inputs)
 *   3. dram_sample(d, &in)   the NPU's outputs of this cycle: commits every handshake
 *                            (valid && ready) and advances the model one cycle.
 *
 * Timing (npu_dram_timing_t):
 *   bytes_per_cycle  bandwidth shared by reads and writes (token bucket: a beat moves only when
 *                    >= beat_bytes of credit exist; credit grows bytes_per_cycle per cycle and
 *                    is capped at a few beats). <= 0 means unlimited (one beat per cycle per port).
 *   latency          cycles from AR accepted to its first beat (minimum 1).
 *   burst_cost       each burst (read or write) occupies the data bus this many cycles before its
 *                    first beat (charged against the shared credit, so long bursts pay less).
 *   stall_pct        0..100: per-cycle probability of withholding each of ar_ready, aw_ready,
 *                    w_ready, r_valid, b_valid (seeded xorshift, reproducible). An r_valid/b_valid
 *                    that was offered and not taken stays up until taken (AXI stability).
 *   seed             PRNG seed (0 is replaced by a fixed constant).
 * Reads return in order (up to DRAM_MAX_RD_BURSTS accepted bursts in flight); a write burst's
 * beats are taken after its AW (up to DRAM_MAX_WR_BURSTS AW + pending B). A burst that runs past
 * the end of memory gets resp = 1 on every beat (reads return zeros) and does not touch memory;
 * so do the beats of dram_set_error_range's window (below).
 * W beats honour w_strb. C99; also compiles as C++.
 */
#ifndef DRAM_MODEL_H
#define DRAM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef NPU_DRAM_TIMING_DEFINED
#define NPU_DRAM_TIMING_DEFINED
typedef struct npu_dram_timing {
    double bytes_per_cycle; /* shared read+write bandwidth; <= 0: unlimited */
    unsigned latency;       /* AR accepted -> first beat, cycles */
    unsigned burst_cost;    /* extra data-bus cycles per burst */
    unsigned stall_pct;     /* 0..100 random withholding of ready/valid */
    uint64_t seed;          /* PRNG seed for the stalls */
} npu_dram_timing_t;
#endif

#define DRAM_MAX_RD_BURSTS 32 /* accepted read bursts in flight */
#define DRAM_MAX_WR_BURSTS 16 /* accepted AW whose data or B response is pending */
#define DRAM_MAX_BEAT_BYTES 256

/* Model -> NPU (the NPU's m_*_ready / m_r_* / m_b_* inputs). */
typedef struct dram_out {
    uint8_t ar_ready;
    uint8_t r_valid, r_last, r_id, r_resp;
    const uint8_t *r_data; /* beat_bytes bytes; valid while r_valid (until the next dram_sample) */
    uint8_t aw_ready, w_ready;
    uint8_t b_valid, b_resp;
} dram_out_t;

/* NPU -> model (the NPU's m_* outputs). */
typedef struct dram_in {
    uint8_t ar_valid;
    uint32_t ar_addr;
    uint8_t ar_len; /* beats - 1 */
    uint8_t ar_id;
    uint8_t r_ready;
    uint8_t aw_valid;
    uint32_t aw_addr;
    uint8_t aw_len; /* beats - 1 */
    uint8_t w_valid;
    const uint8_t *w_data; /* beat_bytes bytes, byte 0 = bits [7:0] */
    const uint8_t *w_strb; /* beat_bytes bits, LSB first: bit i of byte i/8 enables byte i */
    uint8_t w_last;
    uint8_t b_ready;
} dram_in_t;

typedef struct dram_stats {
    uint64_t rd_beats, wr_beats;   /* data beats transferred */
    uint64_t rd_bursts, wr_bursts; /* AR / AW accepted */
    uint64_t stall_cycles;         /* cycles in which a random stall withheld a signal */
    uint64_t err_bursts;           /* bursts answered with resp = 1 */
    uint64_t proto_errors;         /* w_last on a wrong beat, ... */
    uint64_t cycles;               /* dram_sample calls */
} dram_stats_t;

typedef struct dram dram_t;

/* Zeroed memory of `bytes` bytes whose pages are allocated on first write (mmap on Unix; calloc
 * elsewhere): the model's and the functional model's DRAM. NULL on failure. */
void *dram_mem_alloc(uint64_t bytes);
void dram_mem_free(void *mem, uint64_t bytes);

/* addr_bits: memory is 2^addr_bits bytes (zeroed, allocated on touch: dram_mem_alloc). beat_bytes: 4..256, power of two.
 * t may be NULL (unlimited bandwidth, latency 1, no burst cost, no stalls). NULL on failure. */
dram_t *dram_create(unsigned addr_bits, unsigned beat_bytes, const npu_dram_timing_t *t);
void dram_free(dram_t *d);
uint8_t *dram_mem(dram_t *d, size_t *bytes);
void dram_set_timing(dram_t *d, const npu_dram_timing_t *t); /* also reseeds the PRNG */
void dram_reset(dram_t *d);                                   /* drop in-flight bursts, keep memory */
void dram_drive(dram_t *d, dram_out_t *out);
void dram_sample(dram_t *d, const dram_in_t *in);
void dram_get_stats(const dram_t *d, dram_stats_t *st);

/* Observer of every burst (npu --timeline): called when a read burst's last beat is taken or a
 * write burst's last W beat is written, with the cycle (dram_sample count) its AR / AW was
 * accepted and the cycle after its last beat. fn = NULL (the default) turns it off. */
typedef void (*dram_burst_fn)(void *ctx, int write, uint64_t addr, unsigned beats, uint64_t start,
                              uint64_t end);
void dram_set_burst_hook(dram_t *d, dram_burst_fn fn, void *ctx);

/* Test-only fault injection: protocol violations the NPU's DRAM-port assertions (rtl/npu_dma_*.v,
 * rtl/npu_axi_rd_arb.v, +define+NPU_ASSERTS) must catch. OR of DRAM_FAULT_*, applied to every
 * burst accepted (AR / AW) after the call; 0 (the default, also after dram_create) = none. */
enum {
    DRAM_FAULT_R_EXTRA_BEAT = 1, /* a read burst returns one beat more than AR asked for */
    DRAM_FAULT_R_EARLY_LAST = 2, /* a read burst of >= 2 beats ends (r_last) one beat early */
    DRAM_FAULT_R_BAD_ID = 4,     /* R beats carry r_id ^ 1 (an id that was not requested) */
    DRAM_FAULT_B_EXTRA = 8       /* each write burst is answered with two B responses */
};
void dram_set_faults(dram_t *d, unsigned faults);

/* Test-only error responses (a poisoned / uncorrectable region, a slave error): read beats whose
 * bytes touch [lo, hi) return zeros with r_resp = 1; a write burst touching it writes nothing and
 * gets b_resp = 1. lo = hi (the default) = none. The NPU must stop with STATUS ERROR DRAM_RESP. */
void dram_set_error_range(dram_t *d, uint64_t lo, uint64_t hi);

/* Test-only write latency (a DRAM that answers a write once it is committed): a write burst's B
 * response is offered `cycles` cycles after its last W beat (0, the default: the next cycle),
 * and until the NPU takes it, read beats touching the burst's bytes return 0xA5 bytes (r_resp
 * 0), as they do while its W beats still arrive: a LOAD that reads a STORE's bytes before the
 * STORE's last B response gets wrong data (tests/rtl/test_store_pipe.c). */
void dram_set_write_delay(dram_t *d, unsigned cycles);

#ifdef __cplusplus
}
#endif

#endif /* DRAM_MODEL_H */
