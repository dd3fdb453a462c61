/* train_emit.c - fused backward program of a layer; see train_emit.h. */
#include "compile/train/train_emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_emit.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* SPM bytes the emitter needs besides the pin window for tiles Tm x Tn x Tk, the largest over
 * the concrete orders: the planner's stream buffers and the two scratch slots (npu_bwd_emit) */
static long fixed_bytes(int Tm, int Tn, int Tk)
{
    long worst = 0, maxop;
    long off[2][NPU_TT_COUNT];
    npu_tres_cfg_t rc;
    npu_tsched_t s;
    memset(&rc, 0, sizeof rc);
    rc.Mt = rc.Nt = rc.Kt = 1;
    rc.bytes = 1;
    rc.Tm = Tm;
    rc.Tn = Tn;
    rc.Tk = Tk;
    rc.in_bytes = 2;
    rc.acc_bytes = 4;
    maxop = 2L * Tm * Tk;                                /* X */
    maxop = 2L * Tk * Tn > maxop ? 2L * Tk * Tn : maxop; /* W */
    maxop = 2L * Tm * Tn > maxop ? 2L * Tm * Tn : maxop; /* dY */
    for (int o = NPU_TORD_SEQ; o <= NPU_TORD_DWMAJOR; o++) {
        if (npu_train_sched((npu_torder_t)o, 0, &s) != 0)
            continue;
        long b = npu_tres_stream_layout(&s, &rc, off) + 2 * maxop;
        worst = b > worst ? b : worst;
    }
    return worst;
}

void npu_bwd_default_tiles(const npu_cfg_t *cfg, int M, int K, int N, int *Tm, int *Tn, int *Tk)
{
    int F = 2 * cfg->s, T = 2 * F;
    long spm = (long)npu_cfg_spm_words(cfg) * npu_cfg_beat(cfg);
    *Tm = imin(T, cdiv(M, F) * F);
    *Tn = imin(T, cdiv(N, F) * F);
    *Tk = imin(T, cdiv(K, F) * F);
    /* smaller tiles (the largest dimension first, down to 2S) while the stream buffers and the
     * scratch slots would not leave a quarter of the SPM for the pin window */
    while (fixed_bytes(*Tm, *Tn, *Tk) > spm - spm / 4) {
        int *big = *Tm >= *Tn && *Tm >= *Tk ? Tm : *Tn >= *Tk ? Tn : Tk;
        if (*big <= F)
            break;
        *big -= F;
    }
}

/* ---- SPM bookkeeping: where tiles are, and who used each byte range last ------------------ */

typedef struct res_ent { int tensor; long tile; long start, end; } res_ent_t;
typedef struct use_ent { long start, end; long last_exec, last_store; } use_ent_t;

typedef struct book {
    res_ent_t *res;
    int nres, capres;
    use_ent_t *use;
    int nuse, capuse;
} book_t;

static int overlap(long a0, long a1, long b0, long b1) { return a0 < b1 && b0 < a1; }

static long res_find(const book_t *b, int tensor, long tile)
{
    for (int i = 0; i < b->nres; i++)
        if (b->res[i].tensor == tensor && b->res[i].tile == tile)
            return b->res[i].start;
    return -1;
}

/* tile (tensor, tile) now occupies [start, end): anything overlapping is gone */
static int res_put(book_t *b, int tensor, long tile, long start, long end)
{
    int j = 0;
    for (int i = 0; i < b->nres; i++)
        if (!overlap(b->res[i].start, b->res[i].end, start, end) &&
            !(b->res[i].tensor == tensor && b->res[i].tile == tile))
            b->res[j++] = b->res[i];
    b->nres = j;
    if (b->nres == b->capres) {
        int cap = b->capres ? 2 * b->capres : 64;
        res_ent_t *p = realloc(b->res, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        b->res = p;
        b->capres = cap;
    }
    b->res[b->nres].tensor = tensor;
    b->res[b->nres].tile = tile;
    b->res[b->nres].start = start;
    b->res[b->nres].end = end;
    b->nres++;
    return 0;
}

static use_ent_t *use_get(book_t *b, long start, long end)
{
    for (int i = 0; i < b->nuse; i++)
        if (b->use[i].start == start && b->use[i].end == end)
            return &b->use[i];
    if (b->nuse == b->capuse) {
        int cap = b->capuse ? 2 * b->capuse : 64;
        use_ent_t *p = realloc(b->use, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        b->use = p;
        b->capuse = cap;
    }
    b->use[b->nuse].start = start;
    b->use[b->nuse].end = end;
    b->use[b->nuse].last_exec = -1;
    b->use[b->nuse].last_store = -1;
    return &b->use[b->nuse++];
}

/* latest EXEC op / STORE op that used any byte of [start, end) */
static void use_last(const book_t *b, long start, long end, long *ex, long *stv)
{
    *ex = -1;
    *stv = -1;
    for (int i = 0; i < b->nuse; i++)
        if (overlap(b->use[i].start, b->use[i].end, start, end)) {
            if (b->use[i].last_exec > *ex)
                *ex = b->use[i].last_exec;
            if (b->use[i].last_store > *stv)
                *stv = b->use[i].last_store;
        }
}

/* ---- per-op instruction lists ------------------------------------------------------------- */

typedef struct opcode {
    npu_prog_t ld, ex, sto;
    long load_req;     /* EXEC op whose completion the loads wait for (-1: none) */
    long exec_wait_st; /* STORE op whose completion the DRAINs wait for (-1: none) */
    int has_store;
    int first_drain;   /* index in ex of the first DRAIN */
    int sync_store;    /* the next op loads into the range this op stores (acc_in): a SYNC_E
                          after the DRAINs waits for the STORE, and the loads wait for it */
} opcode_t;

typedef struct em {
    const npu_cfg_t *cfg;
    const npu_bwd_args_t *a;
    int S, F, B, Mt, Nt, Kt;
    unsigned wave;
    char *msg;
    size_t msgn;
    int err;
} em_t;

void npu_bwd_emit_vfail(char *msg, size_t msgn, int *err, const char *fmt, va_list ap)
{
    if (*err)
        return;
    *err = 1;
    vsnprintf(msg, msgn, fmt, ap);
}

static void fail(em_t *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    npu_bwd_emit_vfail(e->msg, e->msgn, &e->err, fmt, ap);
    va_end(ap);
}

static void push(em_t *e, npu_prog_t *p, int rc, const npu_insn_t *in, const char *what)
{
    if (rc != 0)
        fail(e, "%s: a field does not fit its encoding", what);
    else if (npu_prog_push(p, in) != 0)
        fail(e, "out of memory");
}

/* element extent of tile index i of a dim of size D and tile T */
static int ext(int D, int T, int i) { return imin(T, D - i * T); }

/* elements of a backward op's output tile (real extents) */
static long out_elems(const npu_bwd_args_t *a, const npu_tileop_t *o)
{
    return o->grad == NPU_TG_DX ? (long)ext(a->M, a->Tm, o->m) * ext(a->K, a->Tk, o->k)
                                : (long)ext(a->K, a->Tk, o->k) * ext(a->N, a->Tn, o->n);
}

/* SPM bytes of a full tile of tensor t */
static long tile_bytes(const npu_bwd_args_t *a, int t)
{
    switch (t) {
    case NPU_TT_X: return 2L * a->Tm * a->Tk;
    case NPU_TT_W: return 2L * a->Tk * a->Tn;
    case NPU_TT_DY: return 2L * a->Tm * a->Tn;
    case NPU_TT_DX: return 4L * a->Tm * a->Tk;
    case NPU_TT_DW: return 4L * a->Tk * a->Tn;
    default: return 4L * a->Tm * a->Tn; /* Y */
    }
}

/* LOAD of a tile into the SPM word `word` (tensor's layout, see train_emit.h); a partial
 * comes from the spill area, or with `sum` from the gradient tensor itself (acc_in) */
static void emit_load(em_t *e, npu_prog_t *p, int t, const npu_tileop_t *o, unsigned word, int sum)
{
    const npu_bwd_args_t *a = e->a;
    const npu_bwd_io_t *io = &a->io;
    uint64_t B = (uint64_t)e->B;
    int m_act = ext(a->M, a->Tm, o->m), n_act = ext(a->N, a->Tn, o->n), k_act = ext(a->K, a->Tk, o->k);
    npu_insn_t in;
    int rc;
    uint64_t d;
    switch (t) {
    case NPU_TT_DY:
        d = io->dy + (uint64_t)o->m * a->Tm * io->pitch_dy * B + 2ull * o->n * a->Tn;
        rc = npu_enc_load(&in, NPU_TAG_DY, 0, (unsigned)m_act, (uint32_t)d, word,
                          (unsigned)(a->Tn / e->F), 2u * (unsigned)n_act, io->pitch_dy);
        break;
    case NPU_TT_X: /* X^T tile: rows k, words over m */
        d = io->x + (uint64_t)o->m * a->Tm * io->pitch_x * B + 2ull * o->k * a->Tk;
        rc = npu_enc_load(&in, NPU_TAG_X, 1, (unsigned)m_act, (uint32_t)d, word,
                          (unsigned)(a->Tm / e->F), 2u * (unsigned)k_act, io->pitch_x);
        break;
    case NPU_TT_W: /* W^T tile: rows n, words over k */
        d = io->w + (uint64_t)o->k * a->Tk * io->pitch_w * B + 2ull * o->n * a->Tn;
        rc = npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)k_act, (uint32_t)d, word,
                          (unsigned)(a->Tk / e->F), 2u * (unsigned)n_act, io->pitch_w);
        break;
    case NPU_TT_DX: /* spilled partial */
        d = (sum ? io->dx : io->px) + (uint64_t)o->m * a->Tm * io->pitch_dx * B + 4ull * o->k * a->Tk;
        rc = npu_enc_load(&in, NPU_TAG_PARTIAL, 0, (unsigned)m_act, (uint32_t)d, word,
                          (unsigned)(2 * a->Tk / e->F), 4u * (unsigned)k_act, io->pitch_dx);
        break;
    case NPU_TT_DW:
        d = (sum ? io->dw : io->pw) + (uint64_t)o->k * a->Tk * io->pitch_dw * B + 4ull * o->n * a->Tn;
        rc = npu_enc_load(&in, NPU_TAG_PARTIAL, 0, (unsigned)k_act, (uint32_t)d, word,
                          (unsigned)(2 * a->Tn / e->F), 4u * (unsigned)n_act, io->pitch_dw);
        break;
    default:
        fail(e, "no load for tensor %d", t);
        return;
    }
    if (d > 0xFFFFFFFFull)
        fail(e, "DRAM address beyond 32 bits");
    push(e, p, rc, &in, "LOAD");
}

/* STORE of the accumulator of op o from SPM word `word`: final (tag DX/DW) or spill (PARTIAL) */
static void emit_store(em_t *e, npu_prog_t *p, const npu_tileop_t *o, unsigned word, int spill)
{
    const npu_bwd_args_t *a = e->a;
    const npu_bwd_io_t *io = &a->io;
    uint64_t B = (uint64_t)e->B, d;
    int m_act = ext(a->M, a->Tm, o->m), n_act = ext(a->N, a->Tn, o->n), k_act = ext(a->K, a->Tk, o->k);
    npu_insn_t in;
    int rc;
    if (o->grad == NPU_TG_DX) {
        d = (spill ? io->px : io->dx) + (uint64_t)o->m * a->Tm * io->pitch_dx * B + 4ull * o->k * a->Tk;
        rc = npu_enc_store(&in, spill ? NPU_TAG_PARTIAL : NPU_TAG_DX, (unsigned)m_act, (uint32_t)d,
                           word, (unsigned)(2 * a->Tk / e->F), 4u * (unsigned)k_act, io->pitch_dx);
    } else {
        d = (spill ? io->pw : io->dw) + (uint64_t)o->k * a->Tk * io->pitch_dw * B + 4ull * o->n * a->Tn;
        rc = npu_enc_store(&in, spill ? NPU_TAG_PARTIAL : NPU_TAG_DW, (unsigned)k_act, (uint32_t)d,
                           word, (unsigned)(2 * a->Tn / e->F), 4u * (unsigned)n_act, io->pitch_dw);
    }
    push(e, p, rc, &in, "STORE");
}

/* The waves and drains of op i: A (R rows x red) at word a0, B (red rows x C) at b0, the
 * accumulator (R rows x C int32) at c0; OBUF half i % 2. Returns the index of its first DRAIN. */
static int emit_exec(em_t *e, npu_prog_t *p, long i, const npu_tileop_t *o, unsigned a0,
                     unsigned b0, unsigned c0, int acc)
{
    const npu_bwd_args_t *a = e->a;
    int F = e->F, S = e->S, R, C, red, Tred, TC, first_drain;
    int m_act = ext(a->M, a->Tm, o->m), n_act = ext(a->N, a->Tn, o->n), k_act = ext(a->K, a->Tk, o->k);
    unsigned base = (unsigned)(i % 2) * (unsigned)e->cfg->obuf_rows;
    npu_insn_t in;
    if (o->grad == NPU_TG_DX) { /* dX[m,k] += dY[m,n] W^T[n,k] */
        R = m_act; C = k_act; red = n_act; Tred = a->Tn; TC = a->Tk;
    } else {                    /* dW[k,n] += X^T[k,m] dY[m,n] */
        R = k_act; C = n_act; red = m_act; Tred = a->Tm; TC = a->Tn;
    }
    unsigned wpr_a = (unsigned)(Tred / F), wpr_b = (unsigned)(TC / F), sc = 2u * (unsigned)(TC / F);
    int nrb = cdiv(red, F), ncb = cdiv(C, F);
    if ((long)R * ncb > e->cfg->obuf_rows) {
        fail(e, "an op's output (%d rows x %d blocks) does not fit an OBUF half", R, ncb);
        return 0;
    }
    for (int rb = 0; rb < nrb; rb++) {
        int k = imin(F, red - rb * F);
        for (int cb = 0; cb < ncb; cb++) {
            int n = imin(F, C - cb * F);
            unsigned bank = e->wave % 2u;
            unsigned mode = a->policy == NPU_EMIT_FLEXSA ? (unsigned)npu_flexsa_mode(S, n, k) : NPU_MODE_FW;
            push(e, p, npu_enc_ldw(&in, bank, mode, b0 + (unsigned)(rb * F) * wpr_b + (unsigned)cb, wpr_b,
                                   (unsigned)k, (unsigned)n), &in, "LDW");
            push(e, p, npu_enc_wave(&in, bank, mode, rb > 0, (unsigned)R, a0 + (unsigned)rb, wpr_a,
                                    (unsigned)k, (unsigned)n, base + (unsigned)(cb * R)), &in, "WAVE");
            e->wave++;
        }
    }
    first_drain = (int)p->n;
    for (int cb = 0; cb < ncb; cb++) {
        int n = imin(F, C - cb * F);
        unsigned ob = base + (unsigned)(cb * R), ha = ((unsigned)R + 1) / 2;
        int rc;
        if (a->policy == NPU_EMIT_FLEXSA && n <= S) /* skinny n-block (VSW/ISW waves) */
            rc = npu_enc_drain_split(&in, ha, ob, c0 + 2u * (unsigned)cb, sc, ha, (unsigned)R - ha);
        else
            rc = npu_enc_drain(&in, (unsigned)R, ob, c0 + 2u * (unsigned)cb, sc);
        if (rc == 0 && acc)
            rc = npu_insn_drain_acc(&in);
        push(e, p, rc, &in, "DRAIN");
    }
    return first_drain;
}

static void tok(npu_prog_t *p, size_t idx, unsigned flag)
{
    if (idx < p->n)
        npu_insn_tok(&p->insn[idx], flag);
}

/* nparts > 1: rewrites ops[0..n) as the schedule's nest run part after part over the tile
 * ranges of a->part_dim, with first/last over the whole sequence; *pstart[i] = 1 when op i is
 * a later part's first contribution to an output tile an earlier part started (its DRAIN acc
 * combines the parts). 0, or -1 with the reason in e. */
static int part_sequence(em_t *e, const npu_tsched_t *sched, npu_tileop_t *ops, long n,
                         uint8_t **pstart)
{
    const npu_bwd_args_t *a = e->a;
    long w = 0, ntile[3], *total = NULL, *seen = NULL;
    int *lastp = NULL, *partof = NULL;
    ntile[NPU_TG_FWD] = 0;
    ntile[NPU_TG_DX] = (long)e->Mt * e->Kt;
    ntile[NPU_TG_DW] = (long)e->Kt * e->Nt;
    if (a->nparts > NPU_TPART_MAX || a->part_dim < NPU_TD_M || a->part_dim > NPU_TD_K) {
        fail(e, "bad partition");
        return -1;
    }
    total = calloc((size_t)(ntile[1] + ntile[2]), sizeof *total);
    seen = calloc((size_t)(ntile[1] + ntile[2]), sizeof *seen);
    lastp = calloc((size_t)(ntile[1] + ntile[2]), sizeof *lastp);
    partof = malloc((size_t)n * sizeof *partof);
    *pstart = calloc((size_t)n, 1);
    if (!total || !seen || !lastp || !partof || !*pstart) {
        fail(e, "out of memory");
        goto done;
    }
    for (int p = 0; p < a->nparts && !e->err; p++) {
        int sub[3] = {e->Mt, e->Nt, e->Kt}, t0 = a->part_t0[p];
        long c;
        sub[a->part_dim] = a->part_t0[p + 1] - t0;
        if (sub[a->part_dim] < 1 || (c = npu_train_order_ex(sched, sub[0], sub[1], sub[2], ops + w,
                                                            (size_t)(n - w))) < 0) {
            fail(e, "part %d: bad tile range", p);
            break;
        }
        for (long j = w; j < w + c; j++) {
            if (a->part_dim == NPU_TD_M)
                ops[j].m += t0;
            else if (a->part_dim == NPU_TD_N)
                ops[j].n += t0;
            else
                ops[j].k += t0;
            partof[j] = p;
        }
        w += c;
    }
    if (!e->err && w != n)
        fail(e, "the parts cover %ld of %ld tile-ops", w, n);
    for (int pass = 0; pass < 2 && !e->err; pass++)
        for (long j = 0; j < n; j++) {
            npu_tileop_t *o = &ops[j];
            long t = o->grad == NPU_TG_DX ? (long)o->m * e->Kt + o->k
                                          : ntile[1] + (long)o->k * e->Nt + o->n;
            if (o->grad != NPU_TG_DX && o->grad != NPU_TG_DW) {
                fail(e, "not a backward op");
                break;
            }
            if (pass == 0) {
                total[t]++;
                continue;
            }
            o->first = seen[t] == 0;
            (*pstart)[j] = seen[t] > 0 && partof[j] != lastp[t];
            lastp[t] = partof[j];
            o->last = ++seen[t] == total[t];
        }
done:
    free(total);
    free(seen);
    free(lastp);
    free(partof);
    return e->err ? -1 : 0;
}

int npu_bwd_emit(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                 npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    em_t e;
    book_t bk;
    npu_tsched_t sched;
    npu_tres_plan_t plan;
    npu_tres_cfg_t rc;
    npu_tileop_t *ops = NULL;
    npu_tres_action_t *act = NULL;
    npu_tres_counts_t cnt;
    opcode_t *oc = NULL;
    uint8_t *pstart = NULL; /* nparts > 1: op i starts a later part's share of its tile */
    uint8_t *spill_ok[2] = {NULL, NULL}; /* per dW / dX tile: its spill area is current */
    long n = 0, maxop = 0, spm_bytes, scratch, stream;
    long soff[2][NPU_TT_COUNT];
    char dummy[8];

    memset(&e, 0, sizeof e);
    memset(&bk, 0, sizeof bk);
    e.cfg = cfg;
    e.a = a;
    e.S = cfg->s;
    e.F = 2 * cfg->s;
    e.B = npu_cfg_beat(cfg);
    e.msg = msg ? msg : dummy;
    e.msgn = msg ? msgn : sizeof dummy;
    if (msg && msgn)
        msg[0] = '\0';
    if (st)
        memset(st, 0, sizeof *st);
    if (a->M < 1 || a->N < 1 || a->K < 1 || a->Tm < e.F || a->Tn < e.F || a->Tk < e.F ||
        a->Tm % e.F || a->Tn % e.F || a->Tk % e.F) {
        fail(&e, "bad sizes or tiles (tiles must be multiples of 2S = %d)", e.F);
        return -1;
    }
    if (a->policy != NPU_EMIT_FW && a->policy != NPU_EMIT_FLEXSA) {
        fail(&e, "the fused backward emitter supports the 1G1C and FlexSA policies");
        return -1;
    }
    if (npu_train_sched(a->order, 0, &sched) != 0) {
        fail(&e, "order %s is not a concrete backward order", npu_torder_name(a->order));
        return -1;
    }
    e.Mt = cdiv(a->M, a->Tm);
    e.Nt = cdiv(a->N, a->Tn);
    e.Kt = cdiv(a->K, a->Tk);
    for (int t = NPU_TT_X; t <= NPU_TT_DY; t++)
        if (tile_bytes(a, t) > maxop)
            maxop = tile_bytes(a, t);
    spm_bytes = (long)npu_cfg_spm_words(cfg) * e.B;
    memset(&rc, 0, sizeof rc);
    rc.Mt = e.Mt;
    rc.Nt = e.Nt;
    rc.Kt = e.Kt;
    rc.bytes = 1;
    rc.M = a->M;
    rc.N = a->N;
    rc.K = a->K;
    rc.Tm = a->Tm;
    rc.Tn = a->Tn;
    rc.Tk = a->Tk;
    rc.in_bytes = 2;
    rc.acc_bytes = 4;
    /* SPM: pin window, then the planner's stream buffers (two per stream and tensor it uses,
     * each one tile of that tensor; whole words: the tile bytes are multiples of 2S elements
     * x 2 B), then two scratch slots at the top: an operand the plan calls resident but that
     * is not (the planner's zipped-stream reuse can point at a tile whose slot was reused) is
     * loaded there instead, and counted (st->plan_misses) */
    stream = npu_tres_stream_layout(&sched, &rc, soff);
    scratch = spm_bytes - 2 * maxop;
    rc.budget = a->budget > 0 ? a->budget : (scratch - stream) / e.B * e.B;
    if (rc.budget < 0 || rc.budget % e.B || rc.budget + stream > scratch || stream % e.B) {
        fail(&e, "tiles %dx%dx%d: pin window %ld B + stream and scratch slots %ld B exceed the SPM "
             "(%ld B)", a->Tm, a->Tn, a->Tk, rc.budget, stream + 2 * maxop, spm_bytes);
        return -1;
    }
    n = (long)npu_train_sched_count(&sched, e.Mt, e.Nt, e.Kt);
    ops = malloc((size_t)n * sizeof *ops);
    act = malloc((size_t)n * sizeof *act);
    oc = calloc((size_t)n, sizeof *oc);
    if (!ops || !act || !oc || npu_train_order_ex(&sched, e.Mt, e.Nt, e.Kt, ops, (size_t)n) != n) {
        fail(&e, "ordering failed");
        goto out;
    }
    if (a->nparts > 1 && part_sequence(&e, &sched, ops, n, &pstart) != 0)
        goto out;
    if (npu_tres_plan(&sched, &rc, &plan) != 0 || npu_tres_run(&plan, ops, (size_t)n, act, &cnt) != 0) {
        fail(&e, "residency planning failed");
        goto out;
    }
    for (int t = 0; t < NPU_TT_COUNT; t++)
        if (plan.tile_unit[t] != tile_bytes(a, t) || plan.stream_units != stream) {
            fail(&e, "the plan's tile units differ from the emitter's tiles");
            goto out;
        }

    /* pass 1: per op, its instructions and what they wait for (in op order) */
    spill_ok[0] = calloc((size_t)e.Kt * (size_t)e.Nt, 1);
    spill_ok[1] = calloc((size_t)e.Mt * (size_t)e.Kt, 1);
    if (!spill_ok[0] || !spill_ok[1]) {
        fail(&e, "out of memory");
        goto out;
    }
    {
        long last_store_op[NPU_TEMIT_STORE_LAG + 1];
        int nls = 0;
        for (long i = 0; i < n && !e.err; i++) {
            const npu_tileop_t *o = &ops[i];
            const npu_tres_action_t *ac = &act[i];
            npu_ttensor_t to, ta, tb;
            long slot[3];
            int tens[3];
            long tile[3];
            npu_train_op_tensors((npu_tgrad_t)o->grad, &to, &ta, &tb);
            tens[0] = ta;
            tens[1] = tb;
            tens[2] = to;
            for (int r = 0; r < 3; r++)
                tile[r] = npu_train_tile_index((npu_ttensor_t)tens[r], o->m, o->n, o->k, e.Mt, e.Nt, e.Kt);
            npu_prog_init(&oc[i].ld);
            npu_prog_init(&oc[i].ex);
            npu_prog_init(&oc[i].sto);
            oc[i].load_req = -1;
            oc[i].exec_wait_st = -1;
            /* operands and the partial: loaded where the plan says, else found where they are */
            int sum_in = o->first && ((a->acc_in >> o->grad) & 1u); /* an earlier part's sum */
            /* a reload of a partial whose spill is not current (the plan's scopes do not
             * follow the parts: nparts > 1) takes the partial where it still is, else fails */
            int stale = ac->reload && !sum_in && !spill_ok[o->grad == NPU_TG_DX][tile[2]];
            for (int r = 0; r < 3; r++) {
                int load = r == 0 ? ac->load_a : r == 1 ? ac->load_b : (ac->reload && !stale) || sum_in;
                long want = r == 0 ? ac->slot_a : r == 1 ? ac->slot_b : ac->slot_acc;
                long bytes = tile_bytes(a, tens[r]);
                if (r == 2 && o->first && !sum_in) {
                    slot[r] = want; /* a new accumulator */
                } else if (load) {
                    long ex, sv;
                    slot[r] = want;
                    use_last(&bk, want, want + bytes, &ex, &sv);
                    if (sv >= 0 && sv == i - 1 && r == 2 && sum_in) {
                        oc[i - 1].sync_store = 1; /* through a SYNC_E behind op i-1's STORE */
                        if (ex < i - 1)
                            ex = i - 1;
                    } else if (sv >= 0) { /* a STORE read this range last: go through EXEC op i-1 */
                        if (sv >= i - 1) {
                            fail(&e, "op %ld: slot %ld is reloaded right after op %ld stores it", i, want, sv);
                            break;
                        }
                        if (oc[i - 1].exec_wait_st < sv)
                            oc[i - 1].exec_wait_st = sv;
                        if (ex < i - 1)
                            ex = i - 1;
                    }
                    if (ex > oc[i].load_req)
                        oc[i].load_req = ex;
                    emit_load(&e, &oc[i].ld, tens[r], o, (unsigned)(want / e.B), r == 2 && sum_in);
                    if (st) {
                        if (r == 2 && sum_in) {
                            st->accum_loads++;
                            st->accum_adds += out_elems(a, o);
                        } else if (r == 2)
                            st->reloads[tens[r]]++;
                        else
                            st->loads[tens[r]]++;
                    }
                } else {
                    slot[r] = res_find(&bk, tens[r], tile[r]);
                    if (slot[r] < 0 && r < 2) { /* plan miss: load into a scratch slot */
                        long ex, sv, sl = scratch + r * maxop;
                        use_last(&bk, sl, sl + bytes, &ex, &sv);
                        if (ex > oc[i].load_req)
                            oc[i].load_req = ex;
                        emit_load(&e, &oc[i].ld, tens[r], o, (unsigned)(sl / e.B), 0);
                        slot[r] = sl;
                        if (st) {
                            st->loads[tens[r]]++;
                            st->plan_misses++;
                        }
                    } else if (slot[r] < 0) {
                        fail(&e, "op %ld (%s m%d n%d k%d): the plan says the %s partial %ld is in "
                                 "the SPM, it is not", i, npu_train_grad_name((npu_tgrad_t)o->grad),
                             o->m, o->n, o->k, npu_train_tensor_name((npu_ttensor_t)tens[r]), tile[r]);
                        break;
                    }
                }
                if (slot[r] % e.B || slot[r] + bytes > spm_bytes) {
                    fail(&e, "op %ld: slot %ld outside the SPM or not word-aligned", i, slot[r]);
                    break;
                }
                if (res_put(&bk, tens[r], tile[r], slot[r], slot[r] + bytes) != 0)
                    fail(&e, "out of memory");
            }
            if (e.err)
                break;
            /* the LOAD queue runs at most NPU_TEMIT_LOAD_LAG ops ahead of EXEC (l2e stays small) */
            if (oc[i].ld.n && i - NPU_TEMIT_LOAD_LAG > oc[i].load_req)
                oc[i].load_req = i - NPU_TEMIT_LOAD_LAG;
            for (int r = 0; r < 2; r++)
                if (overlap(slot[r], slot[r] + tile_bytes(a, tens[r]), slot[2], slot[2] + tile_bytes(a, to)) ||
                    (r == 0 && overlap(slot[0], slot[0] + tile_bytes(a, ta), slot[1], slot[1] + tile_bytes(a, tb))))
                    fail(&e, "op %ld: operand and accumulator slots overlap", i);
            /* the DRAINs write the accumulator range: wait for the STORE that read it last */
            {
                long ex, sv;
                use_last(&bk, slot[2], slot[2] + tile_bytes(a, to), &ex, &sv);
                if (sv > oc[i].exec_wait_st)
                    oc[i].exec_wait_st = sv;
                if (nls == NPU_TEMIT_STORE_LAG && last_store_op[0] > oc[i].exec_wait_st)
                    oc[i].exec_wait_st = last_store_op[0]; /* bounded lag behind the STOREs */
            }
            oc[i].first_drain = emit_exec(&e, &oc[i].ex, i, o, (unsigned)(slot[0] / e.B),
                                          (unsigned)(slot[1] / e.B), (unsigned)(slot[2] / e.B),
                                          !o->first || sum_in);
            if (pstart && pstart[i] && st)
                st->accum_adds += out_elems(a, o);
            for (int r = 0; r < 3; r++) {
                use_ent_t *u = use_get(&bk, slot[r], slot[r] + tile_bytes(a, tens[r]));
                if (!u) {
                    fail(&e, "out of memory");
                    break;
                }
                u->last_exec = i;
            }
            spill_ok[o->grad == NPU_TG_DX][tile[2]] = ac->spill && !ac->store;
            if (ac->spill || ac->store) {
                use_ent_t *u = use_get(&bk, slot[2], slot[2] + tile_bytes(a, to));
                emit_store(&e, &oc[i].sto, o, (unsigned)(slot[2] / e.B), ac->spill && !ac->store);
                oc[i].has_store = 1;
                if (u)
                    u->last_store = i;
                if (st) {
                    if (ac->store)
                        st->stores[to]++;
                    else
                        st->spills[to]++;
                }
                if (nls == NPU_TEMIT_STORE_LAG) {
                    memmove(last_store_op, last_store_op + 1, (size_t)(nls - 1) * sizeof *last_store_op);
                    nls--;
                }
                last_store_op[nls++] = i;
            }
        }
    }
    if (e.err)
        goto out;

    /* pass 2: tokens (each producer pushes exactly what a consumer pops) */
    {
        long waited_l = -1, waited_s = -1;
        for (long i = 0; i < n && !e.err; i++) {
            opcode_t *c = &oc[i];
            size_t last_drain = c->ex.n - 1;
            if (c->sync_store) { /* SYNC_E: pops the op's STORE token, then stands for the op */
                npu_insn_t in;
                if (!c->has_store || c->exec_wait_st >= i) {
                    fail(&e, "op %ld: a SYNC behind a store it does not have", i);
                    break;
                }
                push(&e, &c->ex, npu_enc_sync(&in, NPU_OP_SYNC_E), &in, "SYNC_E");
                tok(&c->ex, c->ex.n - 1, NPU_TOK_POP_NEXT);
                tok(&c->sto, 0, NPU_TOK_PUSH_PREV);
            }
            if (c->ld.n) { /* l2e: the op's last load -> its first EXEC instruction */
                tok(&c->ld, c->ld.n - 1, NPU_TOK_PUSH_NEXT);
                tok(&c->ex, 0, NPU_TOK_POP_PREV);
            }
            if (c->ld.n && c->load_req > waited_l) { /* e2l: loads wait for EXEC op load_req */
                tok(&c->ld, 0, NPU_TOK_POP_NEXT);
                tok(&oc[c->load_req].ex, oc[c->load_req].ex.n - 1, NPU_TOK_PUSH_PREV);
                waited_l = c->load_req;
            }
            if (c->exec_wait_st > waited_s) { /* s2e: the op's DRAINs wait for a STORE */
                tok(&c->ex, (size_t)c->first_drain, NPU_TOK_POP_NEXT);
                tok(&oc[c->exec_wait_st].sto, 0, NPU_TOK_PUSH_PREV);
                waited_s = c->exec_wait_st;
            }
            if (c->sync_store) /* later ops are behind the SYNC_E: nothing else pops this STORE */
                waited_s = i;
            if (c->has_store) { /* e2s: the op's last DRAIN -> its STORE */
                tok(&c->ex, last_drain, NPU_TOK_PUSH_NEXT);
                tok(&c->sto, 0, NPU_TOK_POP_PREV);
            }
        }
    }
    /* pass 3: program order, loads one op ahead */
    for (long i = 0; i <= n && !e.err; i++) {
        const npu_prog_t *parts[3];
        parts[0] = i + 1 < n ? &oc[i + 1].ld : NULL;
        parts[1] = i < n ? &oc[i].ex : NULL;
        parts[2] = i < n ? &oc[i].sto : NULL;
        if (i == 0 && n > 0)
            for (size_t j = 0; j < oc[0].ld.n && !e.err; j++)
                push(&e, out, 0, &oc[0].ld.insn[j], "copy");
        for (int q = 0; q < 3; q++)
            for (size_t j = 0; parts[q] && j < parts[q]->n && !e.err; j++)
                push(&e, out, 0, &parts[q]->insn[j], "copy");
    }
    if (st && !e.err) {
        st->ops = n;
        st->dy_compulsory = (long)e.Mt * e.Nt;
        st->budget = rc.budget;
        st->macs = 2ull * (uint64_t)a->M * (uint64_t)a->N * (uint64_t)a->K;
    }
out:
    if (oc)
        for (long i = 0; i < n; i++) {
            npu_prog_free(&oc[i].ld);
            npu_prog_free(&oc[i].ex);
            npu_prog_free(&oc[i].sto);
        }
    free(oc);
    free(pstart);
    free(spill_ok[0]);
    free(spill_ok[1]);
    free(ops);
    free(act);
    free(bk.res);
    free(bk.use);
    return e.err ? -1 : 0;
}
