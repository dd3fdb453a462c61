/* train_emit.c - fused backward program of a layer; see train_emit.h. */
#include "compile/train/train_emit.h"

#include <stdlib.h>
#include <string.h>

#include "compile/gemm/flexsa_mode.h"
#include "compile/gemm/gemm_emit.h"
#include "prog/prog_builder.h"

static int imin(int a, int b) { return a < b ? a : b; }
static int cdiv(int a, int b) { return (a + b - 1) / b; }

/* SPM bytes the emitter needs besides the pin window for tiles Tm x Tn x Tk, the largest over
 * the concrete orders: the planner's stream buffers and the two scratch slots (npu_bwd_emit) */
static long fixed_bytes(int Tm, int Tn, int Tk)
{
    long worst = 0, maxop;
    long off[2][NPU_TENSOR_COUNT];
    npu_resid_cfg_t rc;
    npu_order_sched_t s;
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
    for (int o = NPU_ORDER_SEQ; o <= NPU_ORDER_DWMAJOR; o++) {
        if (npu_order_schedule((npu_order_t)o, 0, &s) != 0)
            continue;
        long b = npu_resid_stream_layout(&s, &rc, off) + 2 * maxop;
        worst = b > worst ? b : worst;
    }
    return worst;
}

void npu_bwd_default_tiles(const npu_cfg_t *cfg, int M, int K, int N, int *Tm, int *Tn, int *Tk)
{
    int F = 2 * cfg->s, T = 2 * F;
    long spm = (long)npu_cfg_spm_words(cfg) * npu_cfg_word(cfg);
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

/* ---- the emitter ---------------------------------------------------------------------------- */

/* What op i waits for besides its own loads and DRAINs (pass 1 fills it; bwd_waits turns it into
 * the waits of its step, prog_builder.h). */
typedef struct opwait {
    long load_req;     /* EXEC op whose completion the loads wait for (-1: none) */
    long exec_wait_st; /* STORE op whose completion the DRAINs wait for (-1: none) */
    size_t first_drain;/* index in the op's EXEC list of its first DRAIN */
    int sync_store;    /* the next op loads into the range this op stores (acc_in): a SYNC_E
                          after the DRAINs waits for the STORE, and the loads wait for it */
} opwait_t;

typedef struct em {
    npu_pb_t b;
    const npu_cfg_t *cfg;
    const npu_bwd_args_t *a;
    npu_bwd_stats_t *st;              /* NULL: no stats */
    int S, F, B, Mt, Nt, Kt;
    long maxop, spm_bytes, scratch, stream; /* largest operand tile; SPM layout (bytes) */
    npu_order_sched_t sched;
    npu_resid_cfg_t rc;
    long n;                           /* tile-ops */
    npu_order_op_t *ops;
    npu_resid_action_t *act;
    uint8_t *pstart;                  /* nparts > 1: op i starts a later part's share of its tile */
    uint8_t *spill_ok[2];             /* per dW / dX tile: its spill area is current */
    npu_pb_step_t *s;                 /* one step per op */
    opwait_t *w;
    book_t bk;
    long last_store_op[NPU_BWD_STORE_LAG + 1]; /* the latest ops with a STORE */
    int nls;
} em_t;

/* element extent of tile index i of a dim of size D and tile T */
static int ext(int D, int T, int i) { return imin(T, D - i * T); }

/* elements of a backward op's output tile (real extents) */
static long out_elems(const npu_bwd_args_t *a, const npu_order_op_t *o)
{
    return o->grad == NPU_PHASE_DX ? (long)ext(a->M, a->Tm, o->m) * ext(a->K, a->Tk, o->k)
                                : (long)ext(a->K, a->Tk, o->k) * ext(a->N, a->Tn, o->n);
}

/* SPM bytes of a full tile of tensor t */
static long tile_bytes(const npu_bwd_args_t *a, int t)
{
    switch (t) {
    case NPU_TENSOR_X: return 2L * a->Tm * a->Tk;
    case NPU_TENSOR_W: return 2L * a->Tk * a->Tn;
    case NPU_TENSOR_DY: return 2L * a->Tm * a->Tn;
    case NPU_TENSOR_DX: return 4L * a->Tm * a->Tk;
    case NPU_TENSOR_DW: return 4L * a->Tk * a->Tn;
    default: return 4L * a->Tm * a->Tn; /* Y */
    }
}

/* LOAD of a tile into the SPM word `word` (tensor's layout, see train_emit.h); a partial
 * comes from the spill area, or with `sum` from the gradient tensor itself (acc_in) */
static void emit_load(em_t *e, npu_prog_t *p, int t, const npu_order_op_t *o, unsigned word, int sum)
{
    const npu_bwd_args_t *a = e->a;
    const npu_bwd_io_t *io = &a->io;
    int m_act = ext(a->M, a->Tm, o->m), n_act = ext(a->N, a->Tn, o->n), k_act = ext(a->K, a->Tk, o->k);
    npu_insn_t in;
    int rc;
    uint64_t d;
    switch (t) {
    case NPU_TENSOR_DY:
        d = io->dy + (uint64_t)o->m * a->Tm * io->pitch_dy + 2ull * o->n * a->Tn;
        rc = npu_enc_load(&in, NPU_TAG_DY, 0, (unsigned)m_act, npu_pb_dram(&e->b, d), word,
                          (unsigned)(a->Tn / e->F), 2u * (unsigned)n_act, io->pitch_dy);
        break;
    case NPU_TENSOR_X: /* X^T tile: rows k, words over m */
        d = io->x + (uint64_t)o->m * a->Tm * io->pitch_x + 2ull * o->k * a->Tk;
        rc = npu_enc_load(&in, NPU_TAG_X, 1, (unsigned)m_act, npu_pb_dram(&e->b, d), word,
                          (unsigned)(a->Tm / e->F), 2u * (unsigned)k_act, io->pitch_x);
        break;
    case NPU_TENSOR_W: /* W^T tile: rows n, words over k */
        d = io->w + (uint64_t)o->k * a->Tk * io->pitch_w + 2ull * o->n * a->Tn;
        rc = npu_enc_load(&in, NPU_TAG_W, 1, (unsigned)k_act, npu_pb_dram(&e->b, d), word,
                          (unsigned)(a->Tk / e->F), 2u * (unsigned)n_act, io->pitch_w);
        break;
    case NPU_TENSOR_DX: /* spilled partial */
        d = (sum ? io->dx : io->px) + (uint64_t)o->m * a->Tm * io->pitch_dx + 4ull * o->k * a->Tk;
        rc = npu_enc_load(&in, NPU_TAG_PARTIAL, 0, (unsigned)m_act, npu_pb_dram(&e->b, d), word,
                          (unsigned)(2 * a->Tk / e->F), 4u * (unsigned)k_act, io->pitch_dx);
        break;
    case NPU_TENSOR_DW:
        d = (sum ? io->dw : io->pw) + (uint64_t)o->k * a->Tk * io->pitch_dw + 4ull * o->n * a->Tn;
        rc = npu_enc_load(&in, NPU_TAG_PARTIAL, 0, (unsigned)k_act, npu_pb_dram(&e->b, d), word,
                          (unsigned)(2 * a->Tn / e->F), 4u * (unsigned)n_act, io->pitch_dw);
        break;
    default:
        npu_pb_fail(&e->b, "no load for tensor %d", t);
        return;
    }
    npu_pb_put(&e->b, p, rc, &in, 0);
}

/* STORE of the accumulator of op o from SPM word `word`: final (tag DX/DW) or spill (PARTIAL) */
static void emit_store(em_t *e, npu_prog_t *p, const npu_order_op_t *o, unsigned word, int spill)
{
    const npu_bwd_args_t *a = e->a;
    const npu_bwd_io_t *io = &a->io;
    uint64_t d;
    int m_act = ext(a->M, a->Tm, o->m), n_act = ext(a->N, a->Tn, o->n), k_act = ext(a->K, a->Tk, o->k);
    npu_insn_t in;
    int rc;
    if (o->grad == NPU_PHASE_DX) {
        d = (spill ? io->px : io->dx) + (uint64_t)o->m * a->Tm * io->pitch_dx + 4ull * o->k * a->Tk;
        rc = npu_enc_store(&in, spill ? NPU_TAG_PARTIAL : NPU_TAG_DX, (unsigned)m_act, npu_pb_dram(&e->b, d),
                           word, (unsigned)(2 * a->Tk / e->F), 4u * (unsigned)k_act, io->pitch_dx);
    } else {
        d = (spill ? io->pw : io->dw) + (uint64_t)o->k * a->Tk * io->pitch_dw + 4ull * o->n * a->Tn;
        rc = npu_enc_store(&in, spill ? NPU_TAG_PARTIAL : NPU_TAG_DW, (unsigned)k_act, npu_pb_dram(&e->b, d),
                           word, (unsigned)(2 * a->Tn / e->F), 4u * (unsigned)n_act, io->pitch_dw);
    }
    npu_pb_put(&e->b, p, rc, &in, 0);
}

/* The waves and drains of op i: A (R rows x red) at word a0, B (red rows x C) at b0, the
 * accumulator (R rows x C int32) at c0; OBUF half i % 2. Returns the index of its first DRAIN. */
static int emit_exec(em_t *e, npu_prog_t *p, long i, const npu_order_op_t *o, unsigned a0,
                     unsigned b0, unsigned c0, int acc)
{
    const npu_bwd_args_t *a = e->a;
    int F = e->F, S = e->S, R, C, red, Tred, TC, first_drain;
    int m_act = ext(a->M, a->Tm, o->m), n_act = ext(a->N, a->Tn, o->n), k_act = ext(a->K, a->Tk, o->k);
    unsigned base = npu_pb_obuf_half(&e->b, i);
    npu_insn_t in;
    if (o->grad == NPU_PHASE_DX) { /* dX[m,k] += dY[m,n] W^T[n,k] */
        R = m_act; C = k_act; red = n_act; Tred = a->Tn; TC = a->Tk;
    } else {                    /* dW[k,n] += X^T[k,m] dY[m,n] */
        R = k_act; C = n_act; red = m_act; Tred = a->Tm; TC = a->Tn;
    }
    unsigned wpr_a = (unsigned)(Tred / F), wpr_b = (unsigned)(TC / F), sc = 2u * (unsigned)(TC / F);
    int nrb = cdiv(red, F), ncb = cdiv(C, F);
    if ((long)R * ncb > e->cfg->obuf_rows) {
        npu_pb_fail(&e->b, "an op's output (%d rows x %d blocks) does not fit an OBUF half", R, ncb);
        return 0;
    }
    for (int rb = 0; rb < nrb; rb++) {
        int k = imin(F, red - rb * F);
        for (int cb = 0; cb < ncb; cb++) {
            int n = imin(F, C - cb * F);
            unsigned bank = npu_pb_bank(&e->b);
            unsigned mode = a->policy == NPU_EMIT_FLEXSA ? (unsigned)npu_flexsa_mode(S, n, k) : NPU_MODE_FW;
            npu_pb_put(&e->b, p, npu_gemm_enc_ldw(&in, a->policy, bank, mode, b0 + (unsigned)(rb * F) * wpr_b + (unsigned)cb,
                                                  wpr_b, (unsigned)k, (unsigned)n), &in, 0);
            npu_pb_put(&e->b, p, npu_enc_wave(&in, bank, mode, rb > 0, (unsigned)R, a0 + (unsigned)rb, wpr_a,
                                    (unsigned)k, (unsigned)n, base + (unsigned)(cb * R)), &in, 0);
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
        npu_pb_put(&e->b, p, rc, &in, 0);
    }
    return first_drain;
}

/* nparts > 1: rewrites ops[0..n) as the schedule's nest run part after part over the tile
 * ranges of a->part_dim, with first/last over the whole sequence; *pstart[i] = 1 when op i is
 * a later part's first contribution to an output tile an earlier part started (its DRAIN acc
 * combines the parts). 0, or -1 with the reason in e. */
static int part_sequence(em_t *e, const npu_order_sched_t *sched, npu_order_op_t *ops, long n,
                         uint8_t **pstart)
{
    const npu_bwd_args_t *a = e->a;
    long w = 0, ntile[3], *total = NULL, *seen = NULL;
    int *lastp = NULL, *partof = NULL;
    ntile[NPU_PHASE_FWD] = 0;
    ntile[NPU_PHASE_DX] = (long)e->Mt * e->Kt;
    ntile[NPU_PHASE_DW] = (long)e->Kt * e->Nt;
    if (a->nparts > NPU_PART_MAX || a->part_dim < NPU_DIM_M || a->part_dim > NPU_DIM_K) {
        npu_pb_fail(&e->b, "bad partition");
        return -1;
    }
    total = calloc((size_t)(ntile[1] + ntile[2]), sizeof *total);
    seen = calloc((size_t)(ntile[1] + ntile[2]), sizeof *seen);
    lastp = calloc((size_t)(ntile[1] + ntile[2]), sizeof *lastp);
    partof = malloc((size_t)n * sizeof *partof);
    *pstart = calloc((size_t)n, 1);
    if (!total || !seen || !lastp || !partof || !*pstart) {
        npu_pb_fail(&e->b, "out of memory");
        goto done;
    }
    for (int p = 0; p < a->nparts && !e->b.err; p++) {
        int sub[3] = {e->Mt, e->Nt, e->Kt}, t0 = a->part_t0[p];
        long c;
        sub[a->part_dim] = a->part_t0[p + 1] - t0;
        if (sub[a->part_dim] < 1 || (c = npu_order_build_ex(sched, sub[0], sub[1], sub[2], ops + w,
                                                            (size_t)(n - w))) < 0) {
            npu_pb_fail(&e->b, "part %d: bad tile range", p);
            break;
        }
        for (long j = w; j < w + c; j++) {
            if (a->part_dim == NPU_DIM_M)
                ops[j].m += t0;
            else if (a->part_dim == NPU_DIM_N)
                ops[j].n += t0;
            else
                ops[j].k += t0;
            partof[j] = p;
        }
        w += c;
    }
    if (!e->b.err && w != n)
        npu_pb_fail(&e->b, "the parts cover %ld of %ld tile-ops", w, n);
    for (int pass = 0; pass < 2 && !e->b.err; pass++)
        for (long j = 0; j < n; j++) {
            npu_order_op_t *o = &ops[j];
            long t = o->grad == NPU_PHASE_DX ? (long)o->m * e->Kt + o->k
                                          : ntile[1] + (long)o->k * e->Nt + o->n;
            if (o->grad != NPU_PHASE_DX && o->grad != NPU_PHASE_DW) {
                npu_pb_fail(&e->b, "not a backward op");
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
    return e->b.err ? -1 : 0;
}


/* ---- pass 1: per op, its instructions and what they wait for -------------------------------- */

/* The tensors of op o: [0] A, [1] B (the operands), [2] the output (its accumulator), their
 * tile indices and, once placed, their SPM slots (bytes). */
typedef struct optens {
    int tens[3];
    long tile[3], slot[3];
} optens_t;

static void op_tensors(const em_t *e, const npu_order_op_t *o, optens_t *t)
{
    npu_tensor_t to, ta, tb;
    npu_order_op_tensors((npu_phase_t)o->grad, &to, &ta, &tb);
    t->tens[0] = ta;
    t->tens[1] = tb;
    t->tens[2] = to;
    for (int r = 0; r < 3; r++)
        t->tile[r] = npu_order_tile_index((npu_tensor_t)t->tens[r], o->m, o->n, o->k, e->Mt, e->Nt, e->Kt);
}

/* Op i loads tensor r of t into the slot the plan gives (want). The load waits for the EXEC op
 * that last used the range; a range a STORE read last is reached through EXEC op i-1, which
 * waits for that STORE (or, for an earlier part's sum right after op i-1 stored it, through a
 * SYNC_E behind op i-1's STORE). */
static int place_load(em_t *e, long i, int r, optens_t *t, long want, int sum_in)
{
    const npu_order_op_t *o = &e->ops[i];
    long ex, sv, bytes = tile_bytes(e->a, t->tens[r]);
    t->slot[r] = want;
    use_last(&e->bk, want, want + bytes, &ex, &sv);
    if (sv >= 0 && sv == i - 1 && r == 2 && sum_in) {
        e->w[i - 1].sync_store = 1;
        if (ex < i - 1)
            ex = i - 1;
    } else if (sv >= 0) {
        if (sv >= i - 1) {
            npu_pb_fail(&e->b, "slot %ld is reloaded right after op %ld stores it", want, sv);
            return -1;
        }
        if (e->w[i - 1].exec_wait_st < sv)
            e->w[i - 1].exec_wait_st = sv;
        if (ex < i - 1)
            ex = i - 1;
    }
    if (ex > e->w[i].load_req)
        e->w[i].load_req = ex;
    emit_load(e, &e->s[i].ld[0], t->tens[r], o, (unsigned)(want / e->B), r == 2 && sum_in);
    if (e->st) {
        if (r == 2 && sum_in) {
            e->st->accum_loads++;
            e->st->accum_adds += out_elems(e->a, o);
        } else if (r == 2) {
            e->st->reloads[t->tens[r]]++;
        } else {
            e->st->loads[t->tens[r]]++;
        }
    }
    return 0;
}

/* Tensor r of op i is resident: found where it is. An operand the plan calls resident but that
 * is not (the planner's zipped-stream reuse can point at a tile whose slot was reused) is loaded
 * into scratch slot r instead and counted; a partial must be there. */
static int place_resident(em_t *e, long i, int r, optens_t *t)
{
    const npu_order_op_t *o = &e->ops[i];
    long ex, sv, sl = e->scratch + r * e->maxop, bytes = tile_bytes(e->a, t->tens[r]);
    t->slot[r] = res_find(&e->bk, t->tens[r], t->tile[r]);
    if (t->slot[r] >= 0)
        return 0;
    if (r == 2) {
        npu_pb_fail(&e->b, "the plan says the %s partial %ld is in the SPM, it is not",
                    npu_tensor_name((npu_tensor_t)t->tens[r]), t->tile[r]);
        return -1;
    }
    use_last(&e->bk, sl, sl + bytes, &ex, &sv);
    if (ex > e->w[i].load_req)
        e->w[i].load_req = ex;
    emit_load(e, &e->s[i].ld[0], t->tens[r], o, (unsigned)(sl / e->B), 0);
    t->slot[r] = sl;
    if (e->st) {
        e->st->loads[t->tens[r]]++;
        e->st->plan_misses++;
    }
    return 0;
}

/* Operands and the partial of op i: loaded where the plan says, else found where they are; a new
 * accumulator takes the plan's slot. A reload of a partial whose spill is not current (the
 * plan's scopes do not follow the parts: nparts > 1) takes the partial where it still is. */
static int place_tensors(em_t *e, long i, optens_t *t, int sum_in)
{
    const npu_order_op_t *o = &e->ops[i];
    const npu_resid_action_t *ac = &e->act[i];
    int stale = ac->reload && !sum_in && !e->spill_ok[o->grad == NPU_PHASE_DX][t->tile[2]];
    for (int r = 0; r < 3; r++) {
        int load = r == 0 ? ac->load_a : r == 1 ? ac->load_b : (ac->reload && !stale) || sum_in;
        long want = r == 0 ? ac->slot_a : r == 1 ? ac->slot_b : ac->slot_acc;
        long bytes = tile_bytes(e->a, t->tens[r]);
        int rc = 0;
        if (r == 2 && o->first && !sum_in)
            t->slot[r] = want; /* a new accumulator */
        else if (load)
            rc = place_load(e, i, r, t, want, sum_in);
        else
            rc = place_resident(e, i, r, t);
        if (rc != 0)
            return -1;
        if (t->slot[r] % e->B || t->slot[r] + bytes > e->spm_bytes) {
            npu_pb_fail(&e->b, "slot %ld outside the SPM or not word-aligned", t->slot[r]);
            return -1;
        }
        if (res_put(&e->bk, t->tens[r], t->tile[r], t->slot[r], t->slot[r] + bytes) != 0)
            npu_pb_fail(&e->b, "out of memory");
    }
    return 0;
}

/* What op i's loads and DRAINs wait for besides their own: the LOAD queue at most
 * NPU_BWD_LOAD_LAG ops ahead of EXEC (l2e stays small); the DRAINs write the accumulator
 * range, so they wait for the STORE that read it last, and EXEC runs at most
 * NPU_BWD_STORE_LAG stores ahead of the STOREs. */
static void op_lags(em_t *e, long i, const optens_t *t)
{
    long ex, sv, ta = tile_bytes(e->a, t->tens[0]), tb = tile_bytes(e->a, t->tens[1]);
    long to = tile_bytes(e->a, t->tens[2]);
    opwait_t *w = &e->w[i];
    if (e->s[i].ld[0].n && i - NPU_BWD_LOAD_LAG > w->load_req)
        w->load_req = i - NPU_BWD_LOAD_LAG;
    if (overlap(t->slot[0], t->slot[0] + ta, t->slot[2], t->slot[2] + to) ||
        overlap(t->slot[1], t->slot[1] + tb, t->slot[2], t->slot[2] + to) ||
        overlap(t->slot[0], t->slot[0] + ta, t->slot[1], t->slot[1] + tb))
        npu_pb_fail(&e->b, "operand and accumulator slots overlap");
    use_last(&e->bk, t->slot[2], t->slot[2] + to, &ex, &sv);
    if (sv > w->exec_wait_st)
        w->exec_wait_st = sv;
    if (e->nls == NPU_BWD_STORE_LAG && e->last_store_op[0] > w->exec_wait_st)
        w->exec_wait_st = e->last_store_op[0]; /* bounded lag behind the STOREs */
}

/* The STORE of op i's accumulator when the plan spills or stores it. */
static void op_store(em_t *e, long i, const optens_t *t)
{
    const npu_order_op_t *o = &e->ops[i];
    const npu_resid_action_t *ac = &e->act[i];
    use_ent_t *u = use_get(&e->bk, t->slot[2], t->slot[2] + tile_bytes(e->a, t->tens[2]));
    emit_store(e, &e->s[i].st, o, (unsigned)(t->slot[2] / e->B), ac->spill && !ac->store);
    if (u)
        u->last_store = i;
    if (e->st) {
        if (ac->store)
            e->st->stores[t->tens[2]]++;
        else
            e->st->spills[t->tens[2]]++;
    }
    if (e->nls == NPU_BWD_STORE_LAG) {
        memmove(e->last_store_op, e->last_store_op + 1, (size_t)(e->nls - 1) * sizeof *e->last_store_op);
        e->nls--;
    }
    e->last_store_op[e->nls++] = i;
}

/* Op i: its loads, waves and DRAINs, and STORE, and what they wait for. */
static void bwd_op(em_t *e, long i)
{
    const npu_order_op_t *o = &e->ops[i];
    const npu_resid_action_t *ac = &e->act[i];
    int sum_in = o->first && ((e->a->acc_in >> o->grad) & 1u); /* an earlier part's sum */
    optens_t t;
    npu_pb_context(&e->b, "op %ld (%s m%d n%d k%d)", i, npu_phase_name((npu_phase_t)o->grad), o->m, o->n,
                   o->k);
    op_tensors(e, o, &t);
    e->w[i].load_req = -1;
    e->w[i].exec_wait_st = -1;
    if (place_tensors(e, i, &t, sum_in) != 0)
        return;
    op_lags(e, i, &t);
    e->w[i].first_drain = (size_t)emit_exec(e, &e->s[i].ex, i, o, (unsigned)(t.slot[0] / e->B),
                                            (unsigned)(t.slot[1] / e->B), (unsigned)(t.slot[2] / e->B),
                                            !o->first || sum_in);
    if (e->pstart && e->pstart[i] && e->st)
        e->st->accum_adds += out_elems(e->a, o);
    for (int r = 0; r < 3; r++) {
        use_ent_t *u = use_get(&e->bk, t.slot[r], t.slot[r] + tile_bytes(e->a, t.tens[r]));
        if (!u) {
            npu_pb_fail(&e->b, "out of memory");
            return;
        }
        u->last_exec = i;
    }
    e->spill_ok[o->grad == NPU_PHASE_DX][t.tile[2]] = ac->spill && !ac->store;
    if (ac->spill || ac->store)
        op_store(e, i, &t);
}

/* ---- pass 2: the waits of each op (train_emit.h), then tokens and program order --------------- */

/* Op i's waits: its EXEC waits for its loads (l2e), its loads for EXEC op load_req (e2l; the
 * last EXEC instruction signals), its first DRAIN for STORE op exec_wait_st (s2e), its STORE for
 * its DRAINs (e2s). With sync_store a SYNC_E after the DRAINs pops the op's own STORE and then
 * stands for the op (later ops are behind it: nothing else waits for this STORE). */
static void bwd_waits(em_t *e, long i)
{
    npu_pb_step_t *s = &e->s[i];
    const opwait_t *w = &e->w[i];
    npu_insn_t in;
    s->push_e2s = s->ex.n - 1; /* the last DRAIN */
    if (w->sync_store) {
        if (!s->st.n || w->exec_wait_st >= i) {
            npu_pb_fail(&e->b, "op %ld: a SYNC behind a store it does not have", i);
            return;
        }
        npu_pb_put(&e->b, &s->ex, npu_enc_sync(&in, NPU_OP_SYNC_E), &in, 0);
    }
    s->push_e2l = s->ex.n - 1;
    if (s->ld[0].n) {
        npu_pb_wait(&e->b, s, NPU_PB_L2E, 0, 0, 0);
        if (w->load_req >= 0)
            npu_pb_wait(&e->b, s, NPU_PB_E2L, w->load_req, 0, 0);
    }
    if (w->exec_wait_st >= 0)
        npu_pb_wait(&e->b, s, NPU_PB_S2E, w->exec_wait_st, 0, w->first_drain);
    if (w->sync_store)
        npu_pb_wait(&e->b, s, NPU_PB_S2E, i, 0, s->ex.n - 1);
    if (s->st.n)
        npu_pb_wait(&e->b, s, NPU_PB_E2S, 0, 0, 0);
}

/* ---- the emission --------------------------------------------------------------------------- */

/* The arguments the emitter supports. 0, or -1 with the reason. */
static int bwd_check(em_t *e)
{
    const npu_bwd_args_t *a = e->a;
    if (a->M < 1 || a->N < 1 || a->K < 1 || a->Tm < e->F || a->Tn < e->F || a->Tk < e->F ||
        a->Tm % e->F || a->Tn % e->F || a->Tk % e->F) {
        npu_pb_fail(&e->b, "bad sizes or tiles (tiles must be multiples of 2S = %d)", e->F);
        return -1;
    }
    if (a->policy != NPU_EMIT_FW && a->policy != NPU_EMIT_FLEXSA) {
        npu_pb_fail(&e->b, "the fused backward emitter supports the 1G1C and FlexSA policies");
        return -1;
    }
    if (npu_order_schedule(a->order, 0, &e->sched) != 0) {
        npu_pb_fail(&e->b, "order %s is not a concrete backward order", npu_order_name(a->order));
        return -1;
    }
    return 0;
}

/* The SPM: pin window, then the planner's stream buffers (two per stream and tensor it uses,
 * each one tile of that tensor; whole words: the tile bytes are multiples of 2S elements x 2 B),
 * then two scratch slots at the top for plan misses (place_resident). 0, or -1 with the reason. */
static int bwd_layout(em_t *e)
{
    const npu_bwd_args_t *a = e->a;
    long soff[2][NPU_TENSOR_COUNT];
    npu_resid_cfg_t *rc = &e->rc;
    e->Mt = cdiv(a->M, a->Tm);
    e->Nt = cdiv(a->N, a->Tn);
    e->Kt = cdiv(a->K, a->Tk);
    for (int t = NPU_TENSOR_X; t <= NPU_TENSOR_DY; t++)
        if (tile_bytes(a, t) > e->maxop)
            e->maxop = tile_bytes(a, t);
    e->spm_bytes = (long)npu_cfg_spm_words(e->cfg) * e->B;
    memset(rc, 0, sizeof *rc);
    rc->Mt = e->Mt;
    rc->Nt = e->Nt;
    rc->Kt = e->Kt;
    rc->bytes = 1;
    rc->M = a->M;
    rc->N = a->N;
    rc->K = a->K;
    rc->Tm = a->Tm;
    rc->Tn = a->Tn;
    rc->Tk = a->Tk;
    rc->in_bytes = 2;
    rc->acc_bytes = 4;
    e->stream = npu_resid_stream_layout(&e->sched, rc, soff);
    e->scratch = e->spm_bytes - 2 * e->maxop;
    rc->budget = a->budget > 0 ? a->budget : (e->scratch - e->stream) / e->B * e->B;
    if (rc->budget < 0 || rc->budget % e->B || rc->budget + e->stream > e->scratch || e->stream % e->B) {
        npu_pb_fail(&e->b, "tiles %dx%dx%d: pin window %ld B + stream and scratch slots %ld B exceed the SPM "
                    "(%ld B)", a->Tm, a->Tn, a->Tk, rc->budget, e->stream + 2 * e->maxop, e->spm_bytes);
        return -1;
    }
    return 0;
}

/* The tile-ops (the order's nest, or part after part), the residency plan and its actions, and
 * the emitter's tables. 0, or -1 with the reason. */
static int bwd_schedule(em_t *e)
{
    npu_resid_plan_t plan;
    npu_resid_counts_t cnt;
    e->n = (long)npu_order_schedule_count(&e->sched, e->Mt, e->Nt, e->Kt);
    e->ops = malloc((size_t)e->n * sizeof *e->ops);
    e->act = malloc((size_t)e->n * sizeof *e->act);
    e->w = calloc((size_t)e->n, sizeof *e->w);
    if (!e->ops || !e->act || !e->w ||
        npu_order_build_ex(&e->sched, e->Mt, e->Nt, e->Kt, e->ops, (size_t)e->n) != e->n) {
        npu_pb_fail(&e->b, "ordering failed");
        return -1;
    }
    if (e->a->nparts > 1 && part_sequence(e, &e->sched, e->ops, e->n, &e->pstart) != 0)
        return -1;
    if (npu_resid_plan(&e->sched, &e->rc, &plan) != 0 ||
        npu_resid_run(&plan, e->ops, (size_t)e->n, e->act, &cnt) != 0) {
        npu_pb_fail(&e->b, "residency planning failed");
        return -1;
    }
    for (int t = 0; t < NPU_TENSOR_COUNT; t++)
        if (plan.tile_unit[t] != tile_bytes(e->a, t) || plan.stream_units != e->stream) {
            npu_pb_fail(&e->b, "the plan's tile units differ from the emitter's tiles");
            return -1;
        }
    e->spill_ok[0] = calloc((size_t)e->Kt * (size_t)e->Nt, 1);
    e->spill_ok[1] = calloc((size_t)e->Mt * (size_t)e->Kt, 1);
    e->s = npu_pb_steps(&e->b, e->n);
    if (!e->spill_ok[0] || !e->spill_ok[1] || !e->s) {
        npu_pb_fail(&e->b, "out of memory");
        return -1;
    }
    return 0;
}

static void bwd_free(em_t *e)
{
    npu_pb_steps_free(e->s, e->n);
    free(e->w);
    free(e->pstart);
    free(e->spill_ok[0]);
    free(e->spill_ok[1]);
    free(e->ops);
    free(e->act);
    free(e->bk.res);
    free(e->bk.use);
}

int npu_bwd_emit(const npu_cfg_t *cfg, const npu_bwd_args_t *a, npu_prog_t *out,
                 npu_bwd_stats_t *st, char *msg, size_t msgn)
{
    em_t e;
    memset(&e, 0, sizeof e);
    npu_pb_init(&e.b, cfg);
    e.cfg = cfg;
    e.a = a;
    e.st = st;
    e.S = cfg->s;
    e.F = 2 * cfg->s;
    e.B = npu_cfg_word(cfg);
    if (st)
        memset(st, 0, sizeof *st);
    if (bwd_check(&e) == 0 && bwd_layout(&e) == 0 && bwd_schedule(&e) == 0) {
        for (long i = 0; i < e.n && !e.b.err; i++)
            bwd_op(&e, i);
        npu_pb_context(&e.b, "");
        for (long i = 0; i < e.n && !e.b.err; i++)
            bwd_waits(&e, i);
        npu_pb_stitch(&e.b, e.s, e.n);
        if (!e.b.err) /* loads one op ahead */
            npu_pb_order(&e.b, e.s, e.n, 1, 0, out);
    }
    if (st && !e.b.err) {
        st->ops = e.n;
        st->dy_compulsory = (long)e.Mt * e.Nt;
        st->budget = e.rc.budget;
        st->macs = 2ull * (uint64_t)a->M * (uint64_t)a->N * (uint64_t)a->K;
    }
    bwd_free(&e);
    return npu_pb_finish(&e.b, msg, msgn);
}
