/*
 * dram_model.c - see dram_model.h. O(1) work per cycle: two small ring buffers of accepted
 * bursts, a shared byte-credit bucket and one PRNG draw per cycle when stalls are enabled.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE under -std=c99 */
#include "dram_model.h"

#include <stdlib.h>
#include <string.h>
#if defined(__unix__)
#include <sys/mman.h>
#endif

enum { ST_AR = 1, ST_R = 2, ST_AW = 4, ST_W = 8, ST_B = 16 };
enum { OF_AR = 1, OF_R = 2, OF_AW = 4, OF_W = 8, OF_B = 16 };

typedef struct rd_burst {
    uint64_t addr;
    uint64_t ready; /* cycle from which the burst may start (accept + latency) */
    uint64_t accepted; /* cycle of its AR (the burst hook) */
    uint32_t beats, done;
    uint8_t id, err;
} rd_burst_t;

typedef struct wr_burst {
    uint64_t addr;
    uint64_t accepted; /* cycle of its AW (the burst hook) */
    uint32_t beats, done;
    uint8_t err;
} wr_burst_t;

struct dram {
    uint8_t *mem;
    uint64_t size;
    unsigned beat;

    /* timing */
    int unlimited;
    double bpc, cap, credit;
    unsigned latency, burst_cost;
    uint32_t stall_thr; /* per 4096 */
    uint64_t rng;

    uint64_t now;

    rd_burst_t rq[DRAM_MAX_RD_BURSTS];
    unsigned rq_head, rq_count;
    int rd_active;     /* head burst has started (paid its burst cost) */
    uint64_t rd_first; /* first cycle its beats may move */

    wr_burst_t wq[DRAM_MAX_WR_BURSTS];
    unsigned wq_head, wq_count;
    int wr_active;
    uint64_t wr_first;

    uint8_t bq[DRAM_MAX_WR_BURSTS];
    unsigned bq_head, bq_count;
    /* dram_set_write_delay: a B response's burst (its bytes, not readable before the response is
     * taken) and the first cycle it may be offered */
    uint64_t bq_addr[DRAM_MAX_WR_BURSTS], bq_bytes[DRAM_MAX_WR_BURSTS], bq_ready[DRAM_MAX_WR_BURSTS];
    unsigned wr_delay;

    unsigned stall; /* ST_* bits withheld in the current cycle */
    int r_hold, b_hold;
    int prio_w;  /* contested credit goes to the write port next */
    int contest; /* this cycle: 0 no contest, 1 read won, 2 write won */
    int withheld;
    int driven;
    unsigned offered; /* OF_* bits driven this cycle */

    dram_stats_t st;
    unsigned faults; /* DRAM_FAULT_* */
    uint64_t err_lo, err_hi; /* dram_set_error_range: beats in [err_lo, err_hi) answer resp = 1 */
    uint8_t zero[DRAM_MAX_BEAT_BYTES];
    uint8_t poison[DRAM_MAX_BEAT_BYTES]; /* a read of a write not yet answered (wr_delay) */
    dram_burst_fn hook; /* dram_set_burst_hook */
    void *hook_ctx;
};

void dram_set_burst_hook(dram_t *d, dram_burst_fn fn, void *ctx)
{
    d->hook = fn;
    d->hook_ctx = ctx;
}

void dram_set_faults(dram_t *d, unsigned faults) { d->faults = faults; }

void dram_set_write_delay(dram_t *d, unsigned cycles)
{
    d->wr_delay = cycles;
    memset(d->poison, 0xA5, sizeof d->poison);
}

/* wr_delay: does [a, a + n) touch a write burst whose B response has not been taken (its beats
 * still arriving, or answered later)? O(bursts in flight), only with a delay set. */
static int unanswered(const dram_t *d, uint64_t a, uint64_t n)
{
    unsigned i;
    for (i = 0; i < d->wq_count; i++) {
        const wr_burst_t *w = &d->wq[(d->wq_head + i) % DRAM_MAX_WR_BURSTS];
        if (a < w->addr + (uint64_t)w->beats * d->beat && a + n > w->addr)
            return 1;
    }
    for (i = 0; i < d->bq_count; i++) {
        unsigned k = (d->bq_head + i) % DRAM_MAX_WR_BURSTS;
        if (a < d->bq_addr[k] + d->bq_bytes[k] && a + n > d->bq_addr[k])
            return 1;
    }
    return 0;
}

void dram_set_error_range(dram_t *d, uint64_t lo, uint64_t hi)
{
    d->err_lo = lo;
    d->err_hi = hi;
}

/* Does [a, a + n) touch the error range? */
static int in_err_range(const dram_t *d, uint64_t a, uint64_t n)
{
    return a < d->err_hi && a + n > d->err_lo;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void draw_stalls(dram_t *d)
{
    uint64_t r;
    unsigned s = 0, i;
    if (!d->stall_thr) {
        d->stall = 0;
        return;
    }
    r = xorshift(&d->rng);
    for (i = 0; i < 5; i++, r >>= 12)
        if ((uint32_t)(r & 4095u) < d->stall_thr)
            s |= 1u << i;
    d->stall = s;
}

void dram_set_timing(dram_t *d, const npu_dram_timing_t *t)
{
    unsigned pct = t ? t->stall_pct : 0;
    d->unlimited = !t || !(t->bytes_per_cycle > 0);
    d->bpc = d->unlimited ? 0 : t->bytes_per_cycle;
    d->cap = 4.0 * d->beat;
    if (d->cap < 2.0 * d->beat + d->bpc)
        d->cap = 2.0 * d->beat + d->bpc;
    d->credit = d->cap;
    d->latency = (t && t->latency > 1) ? t->latency : 1;
    d->burst_cost = t ? t->burst_cost : 0;
    if (pct > 99)
        pct = 99; /* 100 % would withhold every handshake forever */
    d->stall_thr = (uint32_t)((pct * 4096u + 50u) / 100u);
    d->rng = (t && t->seed) ? t->seed : 0x9E3779B97F4A7C15ULL;
    draw_stalls(d);
    d->driven = 0;
}

/* A private anonymous mapping: the kernel gives a page on its first write (reads of untouched
 * pages see the shared zero page), so a 4 GiB DRAM costs what a run touches. MAP_NORESERVE: no
 * swap is reserved for the untouched part (under the default overcommit heuristic a 4 GiB
 * reservation could be refused on a small machine). */
void *dram_mem_alloc(uint64_t bytes)
{
    if (bytes == 0 || bytes > (uint64_t)(size_t)-1)
        return NULL;
#if defined(__unix__)
    void *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
#else
    return calloc((size_t)bytes, 1);
#endif
}

void dram_mem_free(void *mem, uint64_t bytes)
{
    if (!mem)
        return;
#if defined(__unix__)
    munmap(mem, (size_t)bytes);
#else
    (void)bytes;
    free(mem);
#endif
}

dram_t *dram_create(unsigned addr_bits, unsigned beat_bytes, const npu_dram_timing_t *t)
{
    dram_t *d;
    if (addr_bits < 8 || addr_bits > 40 || beat_bytes < 4 || beat_bytes > DRAM_MAX_BEAT_BYTES ||
        (beat_bytes & (beat_bytes - 1)))
        return NULL;
    if (sizeof(size_t) < 8 && addr_bits > 31)
        return NULL;
    d = (dram_t *)calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->size = (uint64_t)1 << addr_bits;
    d->beat = beat_bytes;
    d->mem = (uint8_t *)dram_mem_alloc(d->size);
    if (!d->mem) {
        free(d);
        return NULL;
    }
    dram_set_timing(d, t);
    return d;
}

void dram_free(dram_t *d)
{
    if (!d)
        return;
    dram_mem_free(d->mem, d->size);
    free(d);
}

uint8_t *dram_mem(dram_t *d, size_t *bytes)
{
    if (bytes)
        *bytes = (size_t)d->size;
    return d->mem;
}

void dram_reset(dram_t *d)
{
    d->rq_head = d->rq_count = 0;
    d->wq_head = d->wq_count = 0;
    d->bq_head = d->bq_count = 0;
    d->rd_active = d->wr_active = 0;
    d->r_hold = d->b_hold = 0;
    d->prio_w = 0;
    d->credit = d->cap;
    d->driven = 0;
}

void dram_get_stats(const dram_t *d, dram_stats_t *st) { *st = d->st; }

void dram_drive(dram_t *d, dram_out_t *o)
{
    const unsigned stall = d->stall;
    const double beat = (double)d->beat;
    int r_can, w_can, r_ok, w_ok, b_ok, withheld = 0;
    int ar_free = d->rq_count < DRAM_MAX_RD_BURSTS;
    int aw_free = d->wq_count + d->bq_count < DRAM_MAX_WR_BURSTS;

    d->contest = 0;
    r_can = d->rd_active && d->now >= d->rd_first; /* rd_active implies rq_count > 0 */
    w_can = d->wr_active && d->now >= d->wr_first;
    if (stall) {
        withheld = ((stall & ST_AR) && ar_free) || ((stall & ST_AW) && aw_free) ||
                   ((stall & ST_R) && r_can && !d->r_hold) || ((stall & ST_W) && w_can) ||
                   ((stall & ST_B) && d->bq_count && d->now >= d->bq_ready[d->bq_head] && !d->b_hold);
        if (stall & ST_AR)
            ar_free = 0;
        if (stall & ST_AW)
            aw_free = 0;
        if ((stall & ST_R) && !d->r_hold)
            r_can = 0;
        if (stall & ST_W)
            w_can = 0;
    }
    if (d->r_hold) {
        r_ok = 1; /* offered last cycle and not taken: keep it up */
        w_ok = w_can && (d->unlimited || d->credit >= 2.0 * beat);
    } else if (d->unlimited) {
        r_ok = r_can;
        w_ok = w_can;
    } else if (r_can && w_can) {
        double c = d->credit;
        if (c >= 2.0 * beat) {
            r_ok = w_ok = 1;
        } else if (c >= beat) {
            w_ok = d->prio_w;
            r_ok = !w_ok;
            d->contest = w_ok ? 2 : 1;
        } else {
            r_ok = w_ok = 0;
        }
    } else {
        r_ok = r_can && d->credit >= beat;
        w_ok = w_can && d->credit >= beat;
    }

    o->ar_ready = (uint8_t)ar_free;
    o->aw_ready = (uint8_t)aw_free;
    o->w_ready = (uint8_t)w_ok;
    o->r_valid = (uint8_t)r_ok;
    if (r_ok) {
        const rd_burst_t *h = &d->rq[d->rq_head];
        uint64_t a = h->addr + (uint64_t)h->done * d->beat;
        /* past the end: every beat of the burst; error range: the beats inside it */
        int err = h->err || in_err_range(d, a, d->beat);
        o->r_data = err ? d->zero : (d->wr_delay && unanswered(d, a, d->beat)) ? d->poison : d->mem + a;
        o->r_last = (uint8_t)(h->done + 1 == h->beats);
        o->r_id = h->id;
        o->r_resp = (uint8_t)err;
    } else {
        o->r_data = d->zero;
        o->r_last = 0;
        o->r_id = 0;
        o->r_resp = 0;
    }
    b_ok = d->bq_count && d->now >= d->bq_ready[d->bq_head] && (d->b_hold || !(stall & ST_B));
    o->b_valid = (uint8_t)b_ok;
    o->b_resp = b_ok ? d->bq[d->bq_head] : 0;
    d->withheld = withheld;
    /* what sample() needs, kept as one word (no read-back of the byte fields of *o) */
    d->offered = (ar_free ? OF_AR : 0) | (r_ok ? OF_R : 0) | (aw_free ? OF_AW : 0) | (w_ok ? OF_W : 0) |
                 (b_ok ? OF_B : 0);
    d->driven = 1;
}

static void write_beat(dram_t *d, uint64_t a, const uint8_t *data, const uint8_t *strb)
{
    unsigned n = d->beat, nb = n / 8, i;
    uint8_t *m = d->mem + a;
    for (i = 0; i < nb; i++)
        if (strb[i] != 0xFF)
            break;
    if (i == nb && (n % 8 == 0 || (strb[nb] & ((1u << (n % 8)) - 1)) == ((1u << (n % 8)) - 1))) {
        memcpy(m, data, n);
        return;
    }
    for (i = 0; i < n; i++)
        if ((strb[i >> 3] >> (i & 7)) & 1)
            m[i] = data[i];
}

/* AR accepted: queue the read burst (with the test-only faults applied). */
static void accept_ar(dram_t *d, const dram_in_t *in)
{
    rd_burst_t *b = &d->rq[(d->rq_head + d->rq_count) % DRAM_MAX_RD_BURSTS];
    b->addr = in->ar_addr;
    b->beats = (uint32_t)in->ar_len + 1;
    if (d->faults & DRAM_FAULT_R_EXTRA_BEAT)
        b->beats++;
    else if ((d->faults & DRAM_FAULT_R_EARLY_LAST) && b->beats > 1)
        b->beats--;
    b->done = 0;
    b->id = in->ar_id;
    if (d->faults & DRAM_FAULT_R_BAD_ID)
        b->id ^= 1u;
    b->err = (uint8_t)(b->addr + (uint64_t)b->beats * d->beat > d->size);
    b->ready = d->now + d->latency;
    b->accepted = d->now;
    d->rq_count++;
    d->st.rd_bursts++;
    d->st.err_bursts += b->err || in_err_range(d, b->addr, (uint64_t)b->beats * d->beat);
}

/* R offered: a beat moves when taken, else it is held up (AXI stability). */
static void sample_r(dram_t *d, const dram_in_t *in)
{
    rd_burst_t *h = &d->rq[d->rq_head];
    if (!in->r_ready) {
        d->r_hold = 1;
        return;
    }
    d->r_hold = 0;
    d->credit -= d->beat;
    d->st.rd_beats++;
    if (++h->done == h->beats) {
        if (d->hook)
            d->hook(d->hook_ctx, 0, h->addr, h->beats, h->accepted, d->now + 1);
        d->rq_head = (d->rq_head + 1) % DRAM_MAX_RD_BURSTS;
        d->rq_count--;
        d->rd_active = 0;
    }
}

/* AW accepted: queue the write burst. */
static void accept_aw(dram_t *d, const dram_in_t *in)
{
    wr_burst_t *b = &d->wq[(d->wq_head + d->wq_count) % DRAM_MAX_WR_BURSTS];
    b->addr = in->aw_addr;
    b->beats = (uint32_t)in->aw_len + 1;
    b->accepted = d->now;
    b->done = 0;
    /* one B response per burst: an error if any beat is past the end or in the error range */
    b->err = (uint8_t)(b->addr + (uint64_t)b->beats * d->beat > d->size ||
                       in_err_range(d, b->addr, (uint64_t)b->beats * d->beat));
    d->wq_count++;
    d->st.wr_bursts++;
    d->st.err_bursts += b->err;
}

/* Queues burst h's B response, offered from the next cycle (wr_delay: that many cycles later). */
static void queue_b(dram_t *d, const wr_burst_t *h)
{
    unsigned k = (d->bq_head + d->bq_count) % DRAM_MAX_WR_BURSTS;
    d->bq[k] = h->err;
    d->bq_addr[k] = h->addr;
    d->bq_bytes[k] = (uint64_t)h->beats * d->beat;
    d->bq_ready[k] = d->now + 1 + d->wr_delay;
    d->bq_count++;
}

/* W beat taken: write it; the burst's last beat queues its B response(s). */
static void accept_w(dram_t *d, const dram_in_t *in)
{
    wr_burst_t *h = &d->wq[d->wq_head];
    int last;
    if (!h->err)
        write_beat(d, h->addr + (uint64_t)h->done * d->beat, in->w_data, in->w_strb);
    d->credit -= d->beat;
    d->st.wr_beats++;
    last = ++h->done == h->beats;
    if (last != !!in->w_last)
        d->st.proto_errors++;
    if (!last)
        return;
    if (d->hook)
        d->hook(d->hook_ctx, 1, h->addr, h->beats, h->accepted, d->now + 1);
    queue_b(d, h);
    if ((d->faults & DRAM_FAULT_B_EXTRA) && d->bq_count < DRAM_MAX_WR_BURSTS)
        queue_b(d, h);
    d->wq_head = (d->wq_head + 1) % DRAM_MAX_WR_BURSTS;
    d->wq_count--;
    d->wr_active = 0;
}

/* B offered: retired when taken, else held up. */
static void sample_b(dram_t *d, const dram_in_t *in)
{
    if (!in->b_ready) {
        d->b_hold = 1;
        return;
    }
    d->bq_head = (d->bq_head + 1) % DRAM_MAX_WR_BURSTS;
    d->bq_count--;
    d->b_hold = 0;
}

/* Advance one cycle: refill the credit, start the head bursts (paying their burst cost), draw
 * the next cycle's stalls. */
static void next_cycle(dram_t *d)
{
    d->now++;
    d->st.cycles++;
    if (!d->unlimited) {
        d->credit += d->bpc;
        if (d->credit > d->cap)
            d->credit = d->cap;
    }
    if (!d->rd_active && d->rq_count && d->now >= d->rq[d->rq_head].ready) {
        d->rd_active = 1;
        d->rd_first = d->now + d->burst_cost;
        if (!d->unlimited)
            d->credit -= d->burst_cost * d->bpc;
    }
    if (!d->wr_active && d->wq_count) {
        d->wr_active = 1;
        d->wr_first = d->now + d->burst_cost;
        if (!d->unlimited)
            d->credit -= d->burst_cost * d->bpc;
    }
    draw_stalls(d);
    d->driven = 0;
}

void dram_sample(dram_t *d, const dram_in_t *in)
{
    unsigned of;
    if (!d->driven) {
        dram_out_t o;
        dram_drive(d, &o);
    }
    of = d->offered;
    if ((of & OF_AR) && in->ar_valid)
        accept_ar(d, in);
    if (of & OF_R)
        sample_r(d, in);
    if ((of & OF_AW) && in->aw_valid)
        accept_aw(d, in);
    if ((of & OF_W) && in->w_valid)
        accept_w(d, in);
    if (of & OF_B)
        sample_b(d, in);
    if (d->contest)
        d->prio_w = d->contest == 1;
    d->st.stall_cycles += (uint64_t)d->withheld;
    next_cycle(d);
}
