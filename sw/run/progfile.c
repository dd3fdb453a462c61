/* progfile.c - saved GEMM programs with their DRAM image: write, parse, replay; see progfile.h. */
#include "run/progfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/file.h"
#include "prog/prog_expect.h"

static const char k_magic[8] = {'N', 'P', 'U', 'P', 'R', 'O', 'G', '\0'};
enum { KIND_GEMM = 1, EST_BYTES_FIELD = 18, PLAN_FIELDS = 20 + NPU_GEMM_RES_MAX, ARGS_FIELDS = 12, LEN_OFFSET = 16 };
#define MAX_DIM (1 << 30)
#define MAX_INSNS (1u << 24)


static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t npu_cfg_hash(const npu_cfg_t *c)
{
    char t[512];
    /* the hardware only: a run's DRAM timing (--dram-bw, --dram-latency) is saved beside it */
    int n = snprintf(t, sizeof t, "s=%d spm_banks=%d spm_bank_words=%d obuf_rows=%d lbuf_h=%d "
                     "lbuf_v=%d queue_depth=%d token_max=%d dram_addr_bits=%d max_burst=%d "
                     "max_outstanding=%d watchdog=%d dtype=%d",
                     c->s, c->spm_banks, c->spm_bank_words, c->obuf_rows, c->lbuf_h_depth,
                     c->lbuf_v_depth, c->queue_depth, c->token_max, c->dram_addr_bits,
                     c->max_burst_beats, c->max_outstanding, c->watchdog_cycles, c->dtype);
    return fnv1a((const uint8_t *)t, (size_t)n);
}

/* The plan's and the layout's fields in file order. */
static void gemm_fields(const npu_gemm_report_t *r, int64_t *p, int64_t *a)
{
    const npu_gemm_plan_t *q = &r->plan;
    const npu_gemm_args_t *g = &r->args;
    int64_t pv[PLAN_FIELDS] = {q->M, q->N, q->K, q->F, q->Mt, q->nb, q->Nt, q->Kc, q->m_tiles,
                               q->n_tiles, q->k_chunks, q->order, q->spm_a[0], q->spm_a[1],
                               q->spm_b[0], q->spm_b[1], q->spm_c[0], q->spm_c[1],
                               (int64_t)q->est_dram_bytes, q->res | q->cband << 4 | q->split_last << 5};
    int64_t av[ARGS_FIELDS] = {g->transA, g->transB, g->a, g->b, g->c, g->pitch_a, g->pitch_b,
                               g->pitch_c, g->modes, g->tag_a, g->tag_b, g->tag_c};
    for (int i = 0; i < NPU_GEMM_RES_MAX; i++) /* the resident band's chunk buffers */
        pv[20 + i] = q->spm_res[i];
    memcpy(p, pv, sizeof pv);
    memcpy(a, av, sizeof av);
}

static void set_fields(npu_gemm_report_t *r, const int64_t *p, const int64_t *a)
{
    npu_gemm_plan_t *q = &r->plan;
    npu_gemm_args_t *g = &r->args;
    q->M = (int)p[0], q->N = (int)p[1], q->K = (int)p[2], q->F = (int)p[3], q->Mt = (int)p[4];
    q->nb = (int)p[5], q->Nt = (int)p[6], q->Kc = (int)p[7], q->m_tiles = (int)p[8];
    q->n_tiles = (int)p[9], q->k_chunks = (int)p[10], q->order = (int)p[11];
    for (int i = 0; i < 2; i++) {
        q->spm_a[i] = (unsigned)p[12 + i];
        q->spm_b[i] = (unsigned)p[14 + i];
        q->spm_c[i] = (unsigned)p[16 + i];
    }
    q->est_dram_bytes = (uint64_t)p[EST_BYTES_FIELD];
    q->res = (int)(p[19] & 15); /* bit 4: the C band, bit 5: the split last m-tile (gemm_tiling.h) */
    q->cband = (int)(p[19] >> 4 & 1);
    q->split_last = (int)(p[19] >> 5 & 1);
    for (int i = 0; i < NPU_GEMM_RES_MAX; i++)
        q->spm_res[i] = (unsigned)p[20 + i];
    g->transA = (int)a[0], g->transB = (int)a[1], g->a = (uint32_t)a[2], g->b = (uint32_t)a[3];
    g->c = (uint32_t)a[4], g->pitch_a = (unsigned)a[5], g->pitch_b = (unsigned)a[6];
    g->pitch_c = (unsigned)a[7], g->modes = (int)a[8], g->tag_a = (unsigned)a[9];
    g->tag_b = (unsigned)a[10], g->tag_c = (unsigned)a[11];
}

/* ---- writing: a growing byte buffer ---- */
typedef struct wbuf {
    uint8_t *p;
    size_t n, cap;
    int oom;
} wbuf_t;

static void put(wbuf_t *b, const void *v, size_t n)
{
    if (b->oom || n == 0)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, v, n);
    b->n += n;
}

static void put_le(wbuf_t *b, uint64_t v, int bytes)
{
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    put(b, t, (size_t)bytes);
}

/* The DRAM image the run wrote before starting: [lo, hi) over A, B and C. */
static uint8_t *image_of(const npu_gemm_report_t *r, const int16_t *A, const int16_t *B,
                         uint64_t *lo, uint64_t *hi)
{
    const npu_gemm_args_t *g = &r->args;
    uint64_t ea = g->a + (uint64_t)(r->transA ? r->K : r->M) * g->pitch_a;
    uint64_t eb = g->b + (uint64_t)(r->transB ? r->N : r->K) * g->pitch_b;
    uint64_t ec = g->c + (uint64_t)r->M * g->pitch_c;
    uint8_t *dram;
    *lo = g->a < g->b ? g->a : g->b;
    *lo = g->c < *lo ? g->c : *lo;
    *hi = ea > eb ? ea : eb;
    *hi = ec > *hi ? ec : *hi;
    if (!(dram = calloc(1, (size_t)*hi)))
        return NULL;
    npu_gemm_layout(dram, r, A, B);
    return dram;
}

static void set_le(wbuf_t *b, size_t at, uint64_t v)
{
    for (int i = 0; i < 8 && !b->oom; i++)
        b->p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

static void put_timing(wbuf_t *b, const npu_dram_timing_t *t)
{
    uint64_t bw;
    memcpy(&bw, &t->bytes_per_cycle, 8);
    put_le(b, bw, 8);
    put_le(b, t->latency, 8);
    put_le(b, t->burst_cost, 8);
    put_le(b, t->stall_pct, 8);
    put_le(b, t->seed, 8);
}

/* The length and the checksum, then the file written; b freed. 0 or -1. */
static int finish_write(wbuf_t *b, const char *path, char *err, size_t errn)
{
    FILE *f;
    int ok;
    set_le(b, LEN_OFFSET, b->n + 8); /* the length, the checksum's 8 bytes included */
    put_le(b, b->oom ? 0 : fnv1a(b->p, b->n), 8);
    if (b->oom) {
        free(b->p);
        return npu_io_fail(err, errn, "%s: out of memory", path);
    }
    if (!(f = fopen(path, "wb"))) {
        free(b->p);
        return npu_io_fail(err, errn, "%s: %s", path, strerror(errno));
    }
    ok = fwrite(b->p, 1, b->n, f) == b->n;
    ok &= fclose(f) == 0;
    free(b->p);
    return ok ? 0 : npu_io_fail(err, errn, "%s: error writing the file", path);
}

static void put_prog(wbuf_t *b, uint64_t base, const npu_insn_t *prog, size_t n)
{
    put_le(b, base, 8);
    put_le(b, n, 8);
    for (size_t i = 0; i < n; i++)
        for (int w = 0; w < 4; w++)
            put_le(b, prog[i].w[w], 4);
}

/* Kind 2's body: the label, the program, the window before and after, counters, cycles. */
static void put_rec(wbuf_t *b, const npu_progfile_t *p)
{
    const npu_progrec_t *rec = &p->rec;
    size_t label_len = strlen(rec->label);
    put_le(b, label_len, 4);
    put(b, rec->label, label_len);
    put_prog(b, rec->base, p->gemm.prog.insn, p->gemm.prog.n);
    put_le(b, rec->lo, 8);
    put_le(b, rec->len, 8);
    put(b, rec->before, rec->len);
    put(b, rec->after, rec->len);
    put_le(b, rec->ncnt, 8);
    for (unsigned i = 0; i < rec->ncnt; i++)
        put_le(b, rec->cnt[i], 8);
    put_le(b, rec->cycles, 8);
}

/* Kind 1's body: sizes, plan, layout, the program, the image, the expected results. */
static void put_gemm(wbuf_t *b, const npu_progfile_t *p)
{
    const npu_gemm_report_t *rep = &p->gemm;
    int64_t pf[PLAN_FIELDS], af[ARGS_FIELDS], dims[5] = {rep->M, rep->N, rep->K, rep->transA,
                                                          rep->transB};
    uint64_t cnt = p->expect ? (uint64_t)rep->M * (uint64_t)rep->N : 0;
    gemm_fields(rep, pf, af);
    for (int i = 0; i < 5; i++)
        put_le(b, (uint64_t)dims[i], 8);
    for (int i = 0; i < PLAN_FIELDS; i++)
        put_le(b, (uint64_t)pf[i], 8);
    for (int i = 0; i < ARGS_FIELDS; i++)
        put_le(b, (uint64_t)af[i], 8);
    put_prog(b, rep->prog_base, rep->prog.insn, rep->prog.n);
    put_le(b, p->image_addr, 8);
    put_le(b, p->image_len, 8);
    put(b, p->image, p->image_len);
    put_le(b, cnt, 8);
    for (uint64_t i = 0; i < cnt; i++)
        put_le(b, (uint32_t)p->expect[i], 4);
}

int npu_progset_save(const char *path, const npu_cfg_t *cfg, const npu_progfile_t *p, size_t n,
                     char *err, size_t errn)
{
    wbuf_t b = {0};
    size_t name_len = strlen(cfg->name);
    if (n == 0 || n > NPU_PROGFILE_MAX_PROGS)
        return npu_io_fail(err, errn, "%s: %zu programs (1..%d can be saved)", path, n,
                           NPU_PROGFILE_MAX_PROGS);
    put(&b, k_magic, 8);
    put_le(&b, NPU_PROGFILE_VERSION, 4);
    put_le(&b, n, 4);
    put_le(&b, 0, 8); /* the file's length, set by finish_write */
    put_le(&b, name_len, 4);
    put(&b, cfg->name, name_len);
    put_le(&b, npu_cfg_hash(cfg), 8);
    for (size_t i = 0; i < n; i++) {
        size_t at;
        put_le(&b, (uint64_t)p[i].kind, 4);
        at = b.n;
        put_le(&b, 0, 8); /* the record's length, set below */
        put_timing(&b, &p[i].timing);
        put_le(&b, p[i].fresh ? 1 : 0, 8);
        put_le(&b, p[i].start_cycle, 8);
        if (p[i].kind == NPU_PROGFILE_REC)
            put_rec(&b, &p[i]);
        else
            put_gemm(&b, &p[i]);
        set_le(&b, at, b.n - at - 8);
    }
    return finish_write(&b, path, err, errn);
}

int npu_progfile_save(const char *path, const npu_cfg_t *cfg, const npu_dram_timing_t *t,
                      const npu_gemm_report_t *rep, const int16_t *A, const int16_t *B,
                      const int32_t *expect, char *err, size_t errn)
{
    npu_progfile_t p;
    uint64_t lo, hi;
    uint8_t *img = image_of(rep, A, B, &lo, &hi);
    int rc;
    if (!img)
        return npu_io_fail(err, errn, "%s: out of memory for the DRAM image", path);
    memset(&p, 0, sizeof p);
    p.kind = KIND_GEMM;
    p.timing = *t;
    p.gemm = *rep; /* read only: the program stays the caller's */
    p.image_addr = lo;
    p.image = img + lo;
    p.image_len = (size_t)(hi - lo);
    p.expect = (int32_t *)expect;
    p.fresh = 1;
    p.start_cycle = rep->run.start_cycle;
    rc = npu_progset_save(path, cfg, &p, 1, err, errn);
    free(img);
    return rc;
}

/* ---- reading: a bounds-checked cursor ---- */
typedef struct rbuf {
    const uint8_t *p;
    size_t n, off;
    int short_read;
} rbuf_t;

static uint64_t get_le(rbuf_t *r, int bytes)
{
    uint64_t v = 0;
    if (r->short_read || r->n - r->off < (size_t)bytes) {
        r->short_read = 1;
        return 0;
    }
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | r->p[r->off + (size_t)i];
    r->off += (size_t)bytes;
    return v;
}

static const uint8_t *get_bytes(rbuf_t *r, uint64_t n)
{
    const uint8_t *q = r->p + r->off;
    if (r->short_read || r->n - r->off < n) {
        r->short_read = 1;
        return NULL;
    }
    r->off += (size_t)n;
    return q;
}

/* Magic, version, length and checksum: the file as a whole; *ver and *word (version 1: the
 * kind, 2: the program count). 0 or -1. */
static int check_envelope(const uint8_t *buf, size_t n, uint64_t *ver, uint64_t *word, char *err,
                          size_t errn)
{
    rbuf_t r = {buf, n, 8, 0};
    uint64_t len;
    if (n < 8 || memcmp(buf, k_magic, 8) != 0)
        return npu_io_fail(err, errn, "not a saved program (no NPUPROG magic)");
    *ver = get_le(&r, 4);
    *word = get_le(&r, 4);
    len = get_le(&r, 8);
    if (r.short_read)
        return npu_io_fail(err, errn, "truncated: %zu bytes, not even the header", n);
    if (*ver != 1 && *ver != NPU_PROGFILE_VERSION)
        return npu_io_fail(err, errn, "format version %llu, this npu reads versions 1 and %d",
                    (unsigned long long)*ver, NPU_PROGFILE_VERSION);
    if (n < len)
        return npu_io_fail(err, errn, "truncated: %zu bytes, the header says %llu", n,
                    (unsigned long long)len);
    if (n > len)
        return npu_io_fail(err, errn, "%llu bytes past the end the header gives",
                    (unsigned long long)(n - len));
    r.off = n - 8;
    if (get_le(&r, 8) != fnv1a(buf, n - 8))
        return npu_io_fail(err, errn, "corrupt: the checksum does not match the contents");
    return 0;
}

/* The GEMM's sizes, plan and layout. 0 or -1. */
static int read_gemm(rbuf_t *r, npu_gemm_report_t *g, char *err, size_t errn)
{
    int64_t dims[5], pf[PLAN_FIELDS], af[ARGS_FIELDS];
    for (int i = 0; i < 5; i++)
        dims[i] = (int64_t)get_le(r, 8);
    for (int i = 0; i < PLAN_FIELDS; i++)
        pf[i] = (int64_t)get_le(r, 8);
    for (int i = 0; i < ARGS_FIELDS; i++)
        af[i] = (int64_t)get_le(r, 8);
    for (int i = 0; i < 3; i++)
        if (dims[i] < 1 || dims[i] > MAX_DIM)
            return npu_io_fail(err, errn, "bad GEMM size %lld", (long long)dims[i]);
    if ((uint64_t)dims[3] > 1 || (uint64_t)dims[4] > 1)
        return npu_io_fail(err, errn, "bad transpose flags");
    for (int i = 2; i < ARGS_FIELDS; i++)
        if (af[i] < 0 || af[i] > UINT32_MAX)
            return npu_io_fail(err, errn, "bad DRAM layout field %d", i);
    for (int i = 0; i < PLAN_FIELDS; i++)
        if (pf[i] < 0 || pf[i] > (i == EST_BYTES_FIELD ? INT64_MAX : (int64_t)UINT32_MAX))
            return npu_io_fail(err, errn, "bad plan field %d", i);
    if (af[7] < 4 * dims[1])
        return npu_io_fail(err, errn, "C's pitch %lld is below its row of %lld bytes", (long long)af[7],
                    (long long)(4 * dims[1]));
    g->M = (int)dims[0], g->N = (int)dims[1], g->K = (int)dims[2];
    g->transA = (int)dims[3], g->transB = (int)dims[4];
    set_fields(g, pf, af);
    return 0;
}

/* The program: base, count, words. 0 or -1. */
static int read_prog(rbuf_t *r, npu_gemm_report_t *g, char *err, size_t errn)
{
    uint64_t n;
    g->prog_base = get_le(r, 8);
    n = get_le(r, 8);
    if (n == 0 || n > MAX_INSNS || n * 16 > r->n - r->off)
        return npu_io_fail(err, errn, "bad program length %llu", (unsigned long long)n);
    for (uint64_t i = 0; i < n; i++) {
        npu_insn_t in;
        for (int w = 0; w < 4; w++)
            in.w[w] = (uint32_t)get_le(r, 4);
        if (npu_prog_push(&g->prog, &in) != 0)
            return npu_io_fail(err, errn, "out of memory");
    }
    return 0;
}

/* Kind 2: the label, the program, the DRAM window before and after, the counters, cycles. */
static int read_rec(rbuf_t *r, npu_progfile_t *p, char *err, size_t errn)
{
    npu_progrec_t *c = &p->rec;
    uint64_t len = get_le(r, 4), n;
    const uint8_t *q;
    if (len >= sizeof c->label || !(q = get_bytes(r, len)))
        return npu_io_fail(err, errn, "bad label");
    memcpy(c->label, q, (size_t)len);
    if (read_prog(r, &p->gemm, err, errn) != 0)
        return -1;
    c->base = p->gemm.prog_base;
    c->lo = get_le(r, 8);
    n = get_le(r, 8);
    if (n > (r->n - r->off) / 2 || !(q = get_bytes(r, 2 * n)) ||
        !(c->before = malloc(n ? (size_t)n : 1)) || !(c->after = malloc(n ? (size_t)n : 1)))
        return npu_io_fail(err, errn, "bad DRAM window length %llu", (unsigned long long)n);
    c->len = (size_t)n;
    memcpy(c->before, q, c->len);
    memcpy(c->after, q + c->len, c->len);
    n = get_le(r, 8);
    if (n == 0 || n > 4096 || n * 8 > r->n - r->off)
        return npu_io_fail(err, errn, "bad counter count %llu", (unsigned long long)n);
    c->ncnt = (unsigned)(n < NPU_NUM_COUNTERS ? n : NPU_NUM_COUNTERS);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = get_le(r, 8);
        if (i < NPU_NUM_COUNTERS)
            c->cnt[i] = v; /* counters this build does not know are skipped */
    }
    c->cycles = get_le(r, 8);
    return 0;
}

/* The program, the image and the expected results. 0 or -1. */
static int read_data(rbuf_t *r, npu_progfile_t *p, char *err, size_t errn)
{
    npu_gemm_report_t *g = &p->gemm;
    uint64_t n, cnt;
    const uint8_t *q;
    if (read_prog(r, g, err, errn) != 0)
        return -1;
    p->image_addr = get_le(r, 8);
    n = get_le(r, 8);
    if (!(q = get_bytes(r, n)) || !(p->image = malloc(n ? (size_t)n : 1)))
        return npu_io_fail(err, errn, "bad DRAM image length %llu", (unsigned long long)n);
    memcpy(p->image, q, (size_t)n);
    p->image_len = (size_t)n;
    cnt = get_le(r, 8);
    if (cnt && cnt != (uint64_t)g->M * (uint64_t)g->N)
        return npu_io_fail(err, errn, "%llu expected results for a %dx%d C", (unsigned long long)cnt,
                    g->M, g->N);
    if (cnt * 4 > r->n - r->off || (cnt && !(p->expect = malloc((size_t)cnt * 4))))
        return npu_io_fail(err, errn, "bad expected results");
    for (uint64_t i = 0; i < cnt; i++)
        p->expect[i] = (int32_t)(uint32_t)get_le(r, 4);
    return 0;
}

static int read_timing(rbuf_t *r, npu_dram_timing_t *t, char *err, size_t errn)
{
    uint64_t bw = get_le(r, 8);
    memcpy(&t->bytes_per_cycle, &bw, 8);
    t->latency = (unsigned)get_le(r, 8);
    t->burst_cost = (unsigned)get_le(r, 8);
    t->stall_pct = (unsigned)get_le(r, 8);
    t->seed = get_le(r, 8);
    if (t->stall_pct > 100 || !(t->bytes_per_cycle <= 1e9))
        return npu_io_fail(err, errn, "bad DRAM timing");
    return 0;
}

/* One program's body of its kind; the cursor r ends where the body must end. 0 or -1. */
static int read_body(rbuf_t *r, npu_progfile_t *p, char *err, size_t errn)
{
    if (p->kind != KIND_GEMM && p->kind != NPU_PROGFILE_REC)
        return npu_io_fail(err, errn, "program kind %d is unknown (1: a GEMM, 2: a recorded "
                           "program)", p->kind);
    if (p->kind == NPU_PROGFILE_REC ? read_rec(r, p, err, errn) != 0
                                    : read_gemm(r, &p->gemm, err, errn) != 0 ||
                                          read_data(r, p, err, errn) != 0)
        return -1;
    if (r->short_read)
        return npu_io_fail(err, errn, "truncated");
    if (r->off != r->n)
        return npu_io_fail(err, errn, "%zu unread bytes after its fields", r->n - r->off);
    return 0;
}

/* Version 2's record i of s->n at r: kind, length, timing, flags, start cycle, body. 0 or -1. */
static int read_record(rbuf_t *r, npu_progset_t *s, size_t i, char *err, size_t errn)
{
    npu_progfile_t *p = &s->p[i];
    uint64_t len, flags;
    rbuf_t body;
    p->kind = (int)get_le(r, 4);
    len = get_le(r, 8);
    if (r->short_read || len > r->n - r->off)
        return npu_io_fail(err, errn, "truncated: its record of %llu bytes passes the end",
                           (unsigned long long)len);
    body = (rbuf_t){r->p, r->off + (size_t)len, r->off, 0};
    r->off += (size_t)len;
    if (read_timing(&body, &p->timing, err, errn) != 0)
        return -1;
    flags = get_le(&body, 8);
    p->start_cycle = get_le(&body, 8);
    p->fresh = (int)(flags & 1u);
    if (flags > 1)
        return npu_io_fail(err, errn, "bad flags %llu", (unsigned long long)flags);
    if (i == 0 && !p->fresh)
        return npu_io_fail(err, errn, "the first program does not start a simulator");
    if (p->kind == KIND_GEMM && s->n > 1)
        return npu_io_fail(err, errn, "a saved GEMM must be the file's only program");
    return read_body(&body, p, err, errn);
}

/* Version 1: the kind in the header, one program. 0 or -1. */
static int read_v1(rbuf_t *r, npu_progset_t *s, int kind, char *err, size_t errn)
{
    npu_progfile_t *p = &s->p[0];
    p->kind = kind;
    p->fresh = 1;
    if (read_timing(r, &p->timing, err, errn) != 0)
        return -1;
    return read_body(r, p, err, errn);
}

static int read_programs(rbuf_t *r, npu_progset_t *s, uint64_t word, char *err, size_t errn)
{
    char why[400];
    s->n = s->version == 1 ? 1 : (size_t)word;
    if (s->n == 0 || s->n > NPU_PROGFILE_MAX_PROGS || !(s->p = calloc(s->n, sizeof *s->p)))
        return npu_io_fail(err, errn, "bad program count %llu (1..%d)", (unsigned long long)word,
                           NPU_PROGFILE_MAX_PROGS);
    for (size_t i = 0; i < s->n; i++) {
        npu_prog_init(&s->p[i].gemm.prog);
        memcpy(s->p[i].config, s->config, sizeof s->config);
        s->p[i].config_hash = s->config_hash;
    }
    if (s->version == 1)
        return read_v1(r, s, (int)word, err, errn);
    for (size_t i = 0; i < s->n; i++)
        if (read_record(r, s, i, why, sizeof why) != 0)
            return npu_io_fail(err, errn, "program %zu of %zu: %s", i + 1, s->n, why);
    if (r->off != r->n)
        return npu_io_fail(err, errn, "%zu unread bytes before the checksum", r->n - r->off);
    return 0;
}

int npu_progset_parse(const uint8_t *buf, size_t n, npu_progset_t *s, char *err, size_t errn)
{
    rbuf_t r = {buf, n >= 8 ? n - 8 : 0, 24, 0}; /* the checksum is not a field */
    uint64_t len, ver = 0, word = 0;
    const uint8_t *name;
    memset(s, 0, sizeof *s);
    if (check_envelope(buf, n, &ver, &word, err, errn) != 0)
        return -1;
    s->version = (int)ver;
    len = get_le(&r, 4);
    if (len >= sizeof s->config || !(name = get_bytes(&r, len)))
        return npu_io_fail(err, errn, "bad configuration name");
    memcpy(s->config, name, (size_t)len);
    s->config_hash = get_le(&r, 8);
    if (read_programs(&r, s, word, err, errn) != 0) {
        npu_progset_free(s);
        return -1;
    }
    if (r.short_read) {
        npu_progset_free(s);
        return npu_io_fail(err, errn, "truncated");
    }
    return 0;
}

static int parse_any(const unsigned char *buf, size_t n, void *s, char *err, size_t errn)
{
    return npu_progset_parse(buf, n, s, err, errn);
}

int npu_progset_load(const char *path, npu_progset_t *s, char *err, size_t errn)
{
    memset(s, 0, sizeof *s);
    return npu_load_file(path, parse_any, s, err, errn);
}

void npu_progset_free(npu_progset_t *s)
{
    for (size_t i = 0; s->p && i < s->n; i++)
        npu_progfile_free(&s->p[i]);
    free(s->p);
    s->p = NULL;
    s->n = 0;
}

int npu_progfile_check_cfg(const npu_progfile_t *p, const npu_cfg_t *cfg, char *err, size_t errn)
{
    if (!strcmp(p->config, cfg->name) && p->config_hash == npu_cfg_hash(cfg))
        return 0;
    if (strcmp(p->config, cfg->name))
        return npu_io_fail(err, errn, "built for configuration '%s', this binary simulates '%s': run "
                               "build/%s/npu", p->config, cfg->name, p->config);
    return npu_io_fail(err, errn, "built for a configuration '%s' whose parameters differ from this "
                           "build's (hash %016llx, here %016llx): recompile the program",
                p->config, (unsigned long long)p->config_hash,
                (unsigned long long)npu_cfg_hash(cfg));
}

int npu_progfile_run(const npu_cfg_t *cfg, npu_sim_t *sim, npu_progfile_t *p, int32_t *C_out,
                     uint64_t max_cycles)
{
    npu_gemm_report_t *g = &p->gemm;
    size_t dbytes = 0;
    uint8_t *dram = npu_sim_dram(sim, &dbytes);
    uint64_t c_end = (uint64_t)g->args.c + (uint64_t)g->M * g->args.pitch_c;
    if (!dram || p->image_addr > dbytes || p->image_len > dbytes - p->image_addr ||
        c_end > dbytes || g->prog_base + 16 * (uint64_t)g->prog.n > dbytes) {
        g->rc = NPU_GEMM_HOST_ERROR;
        snprintf(g->host_msg, sizeof g->host_msg, "the saved image, program or C lies outside "
                 "the %zu-byte DRAM", dbytes);
        return g->rc;
    }
    memcpy(dram + p->image_addr, p->image, p->image_len);
    npu_prog_expect(cfg, g->prog.insn, g->prog.n, &g->expect);
    npu_gemm_execute(cfg, sim, p->expect, C_out, max_cycles, g);
    if (g->rc == NPU_GEMM_PASS && p->start_cycle && g->run.start_cycle != p->start_cycle) {
        g->rc = NPU_GEMM_COUNTERS;
        snprintf(g->counters_msg, sizeof g->counters_msg, "started at simulator cycle %llu, the saved "
                 "run at %llu", (unsigned long long)g->run.start_cycle,
                 (unsigned long long)p->start_cycle);
    }
    return g->rc;
}

void npu_progfile_free(npu_progfile_t *p)
{
    npu_prog_free(&p->gemm.prog);
    free(p->image);
    free(p->expect);
    free(p->rec.before);
    free(p->rec.after);
    p->image = NULL;
    p->expect = NULL;
    p->rec.before = p->rec.after = NULL;
}

void npu_prog_dram_window(const npu_insn_t *prog, size_t n, uint64_t base, uint64_t *lo,
                          uint64_t *hi)
{
    *lo = base;
    *hi = base + 16 * (uint64_t)n;
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        uint64_t step, end;
        if (npu_decode(&prog[i], &f) != 0 || (f.op != NPU_OP_LOAD && f.op != NPU_OP_STORE))
            continue;
        /* rows of row_bytes every dram_stride bytes (a transposed LOAD's rows are as wide): the
         * widest reading of the fields, so the window holds whatever the descriptor touches */
        step = f.dram_stride > f.row_bytes ? f.dram_stride : f.row_bytes;
        end = (uint64_t)f.dram_addr + ((uint64_t)f.rows + 1) * (step + f.row_bytes);
        *lo = f.dram_addr < *lo ? f.dram_addr : *lo;
        *hi = end > *hi ? end : *hi;
    }
}

/* The run's start cycle, counters and cycles against the saved ones; 0, or -1 naming the first
 * that differs. */
static int same_counters(const npu_progfile_t *p, const npu_run_result_t *r, char *msg, size_t n)
{
    const npu_progrec_t *c = &p->rec;
#define NPU_PF_X_NAME(nm, t) #nm,
    static const char *const names[NPU_NUM_COUNTERS] = {NPU_COUNTERS(NPU_PF_X_NAME)};
    if (p->start_cycle && r->start_cycle != p->start_cycle) {
        snprintf(msg, n, "started at simulator cycle %llu, the recorded run at %llu (the "
                 "recorded command clocked the simulator between programs)",
                 (unsigned long long)r->start_cycle, (unsigned long long)p->start_cycle);
        return -1;
    }
    for (unsigned i = 0; i < c->ncnt; i++)
        if (r->cnt[i] != c->cnt[i]) {
            snprintf(msg, n, "counter %s: %llu, the recorded run %llu", names[i],
                     (unsigned long long)r->cnt[i], (unsigned long long)c->cnt[i]);
            return -1;
        }
    if (r->end_cycle - r->start_cycle != c->cycles) {
        snprintf(msg, n, "%llu cycles, the recorded run %llu",
                 (unsigned long long)(r->end_cycle - r->start_cycle), (unsigned long long)c->cycles);
        return -1;
    }
    return 0;
}

int npu_progfile_run_rec(const npu_cfg_t *cfg, npu_sim_t *sim, const npu_progfile_t *p,
                         uint64_t max_cycles, npu_run_result_t *r, size_t *bad_bytes,
                         uint64_t *first, char *msg, size_t n)
{
    const npu_progrec_t *c = &p->rec;
    const npu_prog_t *prog = &p->gemm.prog;
    size_t dbytes = 0;
    uint8_t *dram = npu_sim_dram(sim, &dbytes);
    npu_prog_expect_t ex;
    int rc;
    *bad_bytes = 0;
    msg[0] = '\0';
    memset(r, 0, sizeof *r);
    if (!dram || c->lo > dbytes || c->len > dbytes - c->lo) {
        snprintf(msg, n, "the saved DRAM window lies outside the %zu-byte DRAM", dbytes);
        return NPU_GEMM_HOST_ERROR;
    }
    memcpy(dram + c->lo, c->before, c->len);
    rc = npu_run_program(cfg, sim, c->base, prog->insn, prog->n, max_cycles, r);
    if (rc == NPU_RUN_TIMEOUT)
        return NPU_GEMM_TIMEOUT;
    if (rc != NPU_RUN_DONE)
        return rc == NPU_RUN_ERROR ? NPU_GEMM_NPU_ERROR : NPU_GEMM_HOST_ERROR;
    for (size_t i = c->len; i-- > 0;)
        if (dram[c->lo + i] != c->after[i]) {
            ++*bad_bytes;
            *first = c->lo + i;
        }
    if (*bad_bytes)
        return NPU_GEMM_MISMATCH;
    npu_prog_expect(cfg, prog->insn, prog->n, &ex);
    if (same_counters(p, r, msg, n) != 0 || npu_check_counters(r->cnt, &ex, msg, n) != 0)
        return NPU_GEMM_COUNTERS;
    return NPU_GEMM_PASS;
}
