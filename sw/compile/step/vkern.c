/* vkern.c - the vector kernel emitter (vkern.h). */
#include "compile/step/vkern.h"

#include <stdio.h>
#include <string.h>

#include "hw/isa.h"
#include "prog/prog_builder.h"
#include "prog/prog_expect.h"

/* chunks for overlap; VEC's rows field has 12 bits */
enum { NPU_VK_PIPE = 4, NPU_VK_MIN_ROWS = 4, NPU_VK_MAX_ROWS = 4095 };

int npu_vk_tensor(npu_vkern_t *k, const char *name, uint32_t dram, unsigned width, unsigned tag,
                  int one_row, int load, int store)
{
    npu_vk_tensor_t t = {name, dram, width, tag, 0, one_row, load, store, 0, 0, 0};
    if (k->nt < NPU_VK_MAX_T)
        k->t[k->nt] = t;
    return k->nt++;
}

void npu_vk_resident(npu_vkern_t *k, int t, unsigned spm, unsigned stride)
{
    if (t >= 0 && t < k->nt && t < NPU_VK_MAX_T) {
        k->t[t].resident = 1;
        k->t[t].load = k->t[t].store = 0;
        k->t[t].spm = spm;
        k->t[t].spm_stride = stride;
    }
}

void npu_vk_op(npu_vkern_t *k, unsigned vop, unsigned wide, int a, int b, int d, uint32_t alpha,
               uint32_t beta, unsigned shift)
{
    npu_vk_op_t o = {vop, wide, a, b, d, alpha, beta, shift};
    if (k->nop < NPU_VK_MAX_OPS)
        k->op[k->nop] = o;
    k->nop++;
}

unsigned npu_vk_row_bytes(const npu_vkern_t *k, int t) { return (unsigned)k->len * k->t[t].width / 8; }

void npu_vk_pitch(npu_vkern_t *k, int t, unsigned pitch)
{
    if (t >= 0 && t < k->nt && t < NPU_VK_MAX_T)
        k->t[t].pitch = pitch;
}

unsigned npu_vk_row_pitch(const npu_vkern_t *k, int t)
{
    return k->t[t].pitch ? k->t[t].pitch : npu_vk_row_bytes(k, t);
}

unsigned npu_vk_row_words(const npu_cfg_t *cfg, const npu_vkern_t *k, int t)
{
    unsigned B = (unsigned)npu_cfg_word(cfg);
    return (npu_vk_row_bytes(k, t) + B - 1) / B;
}

/* The element widths the ISA gives an op's a (and b) and d. */
static void op_widths(const npu_vk_op_t *o, unsigned *wa, unsigned *wd)
{
    *wa = o->vop == NPU_VOP_WIDEN ? 16 : o->vop == NPU_VOP_NARROW ? 32 : o->wide ? 32 : 16;
    *wd = o->vop == NPU_VOP_NARROW ? 16 : o->vop == NPU_VOP_WIDEN ? 32 : *wa;
}

static int reads_b(unsigned vop)
{
    return NPU_VOP_READS_B(vop);
}

static int bad(char *why, size_t n, const char *fmt, int i, const char *s)
{
    snprintf(why, n, fmt, i, s);
    return -1;
}

static int check_op(const npu_vkern_t *k, int i, char *why, size_t n)
{
    const npu_vk_op_t *o = &k->op[i];
    unsigned wa, wd;
    int nb = reads_b(o->vop);
    if (o->vop >= NPU_NUM_VOPS)
        return bad(why, n, "op %d: unknown vop%s", i, "");
    if (o->wide && !NPU_VOP_HAS_WIDE(o->vop))
        return bad(why, n, "op %d (%s): the op has no 32-bit form", i, npu_vop_name(o->vop));
    if (o->a < 0 || o->a >= k->nt || o->d < 0 || o->d >= k->nt || (nb && (o->b < 0 || o->b >= k->nt)))
        return bad(why, n, "op %d (%s): a tensor index out of range", i, npu_vop_name(o->vop));
    op_widths(o, &wa, &wd);
    if (k->t[o->a].width != wa || (nb && k->t[o->b].width != wa) || k->t[o->d].width != wd)
        return bad(why, n, "op %d (%s): operand widths differ from the op's", i, npu_vop_name(o->vop));
    int d1 = k->t[o->d].one_row, a1 = k->t[o->a].one_row, b1 = nb ? k->t[o->b].one_row : 1;
    if (o->vop == NPU_VOP_SUM ? !d1 || a1 : d1 && !(a1 && b1))
        return bad(why, n, "op %d (%s): a one-row result needs SUM over rows or one-row operands",
                   i, npu_vop_name(o->vop));
    if (o->vop == NPU_VOP_SUM && o->b >= 0 &&
        (o->b >= k->nt || o->b == o->d || !k->t[o->b].one_row || k->t[o->b].width != wd))
        return bad(why, n, "op %d (%s): the partial sums' scratch must be another one-row tensor "
                   "of d's width", i, npu_vop_name(o->vop));
    return 0;
}

int npu_vk_check(const npu_vkern_t *k, char *why, size_t n)
{
    if (k->nt > NPU_VK_MAX_T || k->nop > NPU_VK_MAX_OPS || k->nop < 1)
        return bad(why, n, "%d ops or too many tensors%s", k->nop, "");
    if (k->rows < 1 || k->len < 1)
        return bad(why, n, "rows and len must be positive (rows %d)%s", k->rows, "");
    for (int t = 0; t < k->nt; t++)
        if ((k->t[t].width != 16 && k->t[t].width != 32) || k->t[t].dram % 2 || k->t[t].pitch % 2 ||
            (k->t[t].pitch && k->t[t].pitch < npu_vk_row_bytes(k, t)))
            return bad(why, n, "tensor %d (%s): width 16 or 32, an even address and an even pitch "
                       "of at least the row bytes", t, k->t[t].name);
    for (int i = 0; i < k->nop; i++)
        if (check_op(k, i, why, n))
            return -1;
    return 0;
}

/* SPM words of the one-row tensors (kept for the whole kernel) and of one row of the others. */
static void spm_need(const npu_cfg_t *cfg, const npu_vkern_t *k, unsigned *shared, unsigned *per_row)
{
    *shared = *per_row = 0;
    for (int t = 0; t < k->nt; t++)
        if (!k->t[t].resident)
            *(k->t[t].one_row ? shared : per_row) += npu_vk_row_words(cfg, k, t);
}

/* The words the kernel's own buffers may use. */
static unsigned own_words(const npu_cfg_t *cfg, const npu_vkern_t *k)
{
    return k->spm_limit ? k->spm_limit : (unsigned)npu_cfg_spm_words(cfg);
}

/* 1 when some tensor is loaded or stored (then chunks overlap transfers with the ops). */
static int moves(const npu_vkern_t *k)
{
    for (int t = 0; t < k->nt; t++)
        if (k->t[t].load || k->t[t].store)
            return 1;
    return 0;
}

/* 0, or -1 with the reason when a resident tensor's rows leave [spm_limit, the SPM's end). */
static int resident_fits(const npu_cfg_t *cfg, const npu_vkern_t *k, char *why, size_t n)
{
    for (int t = 0; t < k->nt; t++) {
        const npu_vk_tensor_t *T = &k->t[t];
        uint64_t end = T->spm + (uint64_t)(T->one_row ? 1 : k->rows) * T->spm_stride;
        if (T->resident && (T->spm < own_words(cfg, k) || end > (uint64_t)npu_cfg_spm_words(cfg) ||
                            (!T->one_row && T->spm_stride < npu_vk_row_words(cfg, k, t))))
            return bad(why, n, "tensor %d (%s): resident rows outside the resident area or narrower "
                       "than a row", t, T->name);
    }
    return 0;
}

int npu_vk_chunk_rows(const npu_cfg_t *cfg, const npu_vkern_t *k)
{
    unsigned shared, per_row, words = own_words(cfg, k);
    spm_need(cfg, k, &shared, &per_row);
    if (shared >= words)
        return 0;
    if (per_row == 0)
        return k->rows < NPU_VK_MAX_ROWS ? k->rows : NPU_VK_MAX_ROWS;
    long r = (long)((words - shared) / (2 * per_row));
    r = r < NPU_VK_MAX_ROWS ? r : NPU_VK_MAX_ROWS;
    return r < k->rows ? (int)r : k->rows;
}

/* Where each tensor lives in the SPM: one-row tensors from word 0, then per buffer half the
 * chunk's rows of every other tensor. */
typedef struct vk_layout {
    unsigned at[2][NPU_VK_MAX_T], words[NPU_VK_MAX_T];
    int R;
} vk_layout_t;

static void layout(const npu_cfg_t *cfg, const npu_vkern_t *k, int R, vk_layout_t *L)
{
    unsigned shared, per_row, next = 0;
    spm_need(cfg, k, &shared, &per_row);
    L->R = R;
    for (int t = 0; t < k->nt; t++) {
        L->words[t] = npu_vk_row_words(cfg, k, t);
        if (k->t[t].resident) {
            L->at[0][t] = L->at[1][t] = k->t[t].spm;
            L->words[t] = k->t[t].spm_stride;
        } else if (k->t[t].one_row) {
            L->at[0][t] = L->at[1][t] = next;
            next += L->words[t];
        }
    }
    for (int h = 0; h < 2; h++)
        for (int t = 0; t < k->nt; t++)
            if (!k->t[t].one_row && !k->t[t].resident) {
                L->at[h][t] = next;
                next += (unsigned)R * L->words[t];
            }
}

/* LOADs (store = 0) or STOREs of chunk i's rows [r0, r0 + n) of the tensors of one kind
 * (one_row) into the step's group. */
static void transfers(npu_pb_t *b, const npu_vkern_t *k, const vk_layout_t *L, int i, int r0, int n,
                      int one_row, int store, npu_prog_t *g)
{
    npu_insn_t in;
    for (int t = 0; t < k->nt; t++) {
        const npu_vk_tensor_t *T = &k->t[t];
        if (T->one_row != one_row || !(store ? T->store : T->load))
            continue;
        unsigned rb = npu_vk_row_bytes(k, t), pitch = npu_vk_row_pitch(k, t);
        unsigned rows = one_row ? 1u : (unsigned)n;
        /* rows padded to the words they fill anyway: move whole pitches, one DRAM run instead of
         * a run per row (the padding lanes: zeros the VECs write past len, or what was loaded) */
        if (!one_row && pitch > rb && pitch % b->B == 0 && pitch / b->B == L->words[t])
            rb = pitch;
        uint32_t a = npu_pb_dram(b, (uint64_t)T->dram + (one_row ? 0 : (uint64_t)r0 * pitch));
        unsigned spm = L->at[i % 2][t];
        npu_pb_put(b, g, store ? npu_enc_store(&in, T->tag, rows, a, spm, L->words[t], rb, pitch)
                               : npu_enc_load(&in, T->tag, 0, rows, a, spm, L->words[t], rb, pitch),
                   &in, 0);
    }
}

/* SPM words between rows of tensor t: 0 for a one-row tensor (broadcast). */
static unsigned stride(const npu_vkern_t *k, const vk_layout_t *L, int t)
{
    return k->t[t].one_row ? 0u : L->words[t];
}

/* Chunk i's first row of tensor t: its buffer half, or a resident tensor's row i * R. */
static unsigned at(const npu_vkern_t *k, const vk_layout_t *L, int i, int t)
{
    return L->at[i % 2][t] + (k->t[t].resident ? (unsigned)(i * L->R) * stride(k, L, t) : 0u);
}

/* Op o over chunk i (n rows) as a VSET/VEC pair's fields. */
static npu_vec_op_t vec_op(const npu_vkern_t *k, const vk_layout_t *L, int i, int n, const npu_vk_op_t *o)
{
    int bi = reads_b(o->vop) ? o->b : o->a;
    int single = k->t[o->d].one_row && o->vop != NPU_VOP_SUM;
    npu_vec_op_t v = {o->vop, o->wide, single ? 1u : (unsigned)n, (unsigned)k->len, o->shift,
                      o->alpha, o->beta, at(k, L, i, o->a), stride(k, L, o->a),
                      at(k, L, i, bi), stride(k, L, bi), at(k, L, i, o->d), stride(k, L, o->d)};
    return v;
}

/* An op with a one-row result other than SUM: it runs once, after the last chunk's rows. */
static int post_op(const npu_vkern_t *k, const npu_vk_op_t *o)
{
    return k->t[o->d].one_row && o->vop != NPU_VOP_SUM;
}

/* The VECs of chunk i of `chunks` (n rows) into v[]; their number. A SUM past chunk 0 goes to its
 * scratch and is added to d; post ops only in the last chunk. */
static int chunk_vecs(const npu_vkern_t *k, const vk_layout_t *L, int i, int chunks, int n,
                      npu_vec_op_t *v)
{
    int nv = 0;
    for (int j = 0; j < k->nop; j++) {
        npu_vk_op_t o = k->op[j];
        if (post_op(k, &o) && i != chunks - 1)
            continue;
        if (o.vop == NPU_VOP_SUM && i > 0 && o.b >= 0) {
            npu_vk_op_t add = {NPU_VOP_ADD, 1, o.d, o.b, o.d, 0, 0, 0};
            o.d = o.b;
            v[nv++] = vec_op(k, L, i, n, &o);
            v[nv++] = vec_op(k, L, i, n, &add);
            continue;
        }
        v[nv++] = vec_op(k, L, i, n, &o);
    }
    return nv;
}

/* Chunk i's VSET/VEC pairs; returns the index of the last VEC. */
static size_t ops(npu_pb_t *b, const npu_vkern_t *k, const vk_layout_t *L, int i, int chunks, int n,
                  npu_prog_t *ex)
{
    npu_vec_op_t v[2 * NPU_VK_MAX_OPS];
    size_t last = 0;
    int nv = chunk_vecs(k, L, i, chunks, n, v);
    for (int j = 0; j < nv; j++)
        last = npu_pb_vec(b, ex, &v[j], 0, 0);
    return last;
}

/* Step i (rows [r0, r0 + n)): its loads, ops, stores and waits. The loads of chunk i + 1 may
 * run while chunk i computes: they wait (E2L) for chunk i's first EXEC instruction, which
 * itself waits (S2E) for chunk i - 1's stores, the last readers of the buffer half i + 1 reuses. */
static void chunk_step(npu_pb_t *b, const npu_vkern_t *k, const vk_layout_t *L,
                       int i, int chunks, npu_pb_step_t *s)
{
    int r0 = i * L->R, n = k->rows - r0 < L->R ? k->rows - r0 : L->R;
    npu_pb_context(b, "vector kernel %s, chunk %d (rows %d..%d)", k->name, i, r0, r0 + n - 1);
    if (i == 0)
        transfers(b, k, L, i, r0, n, 1, 0, &s->ld[0]);
    transfers(b, k, L, i, r0, n, 0, 0, &s->ld[0]);
    npu_pb_or_sync(b, &s->ld[0], NPU_OP_SYNC_L);
    s->push_e2s = ops(b, k, L, i, chunks, n, &s->ex);
    s->push_e2l = 0;
    transfers(b, k, L, i, r0, n, 0, 1, &s->st);
    if (i == chunks - 1)
        transfers(b, k, L, i, r0, n, 1, 1, &s->st);
    npu_pb_or_sync(b, &s->st, NPU_OP_SYNC_S);
    npu_pb_wait_chunk(b, s, i);
}

/* A SUM without a scratch: all rows in one chunk (the plain row order). */
static int one_chunk_needed(const npu_vkern_t *k)
{
    for (int j = 0; j < k->nop; j++)
        if (k->op[j].vop == NPU_VOP_SUM && (k->op[j].b < 0 || !k->sum_chunk))
            return 1;
    return 0;
}

static int has_sum(const npu_vkern_t *k)
{
    for (int j = 0; j < k->nop; j++)
        if (k->op[j].vop == NPU_VOP_SUM)
            return 1;
    return 0;
}

/* Over several chunks a row op must not read a one-row tensor an op writes (those are final
 * only after the last chunk), nor a post op come before a SUM. */
static int post_read(const npu_vkern_t *k)
{
    for (int j = 0; j < k->nop; j++) { /* and a post op before a SUM would read a partial sum */
        for (int w = j + 1; post_op(k, &k->op[j]) && w < k->nop; w++)
            if (k->op[w].vop == NPU_VOP_SUM)
                return 1;
        const npu_vk_op_t *o = &k->op[j];
        int src[2] = {o->a, reads_b(o->vop) ? o->b : -1};
        for (int s = 0; s < 2 && !k->t[o->d].one_row; s++)
            for (int w = 0; src[s] >= 0 && k->t[src[s]].one_row && w < k->nop; w++)
                if (k->op[w].d == src[s])
                    return 1;
    }
    return 0;
}

/* The emitted rows per chunk and the layout: 0, or -1 with the reason (npu_vk_check, the SPM, a
 * SUM that needs more than one chunk). */
static int plan_chunks(const npu_cfg_t *cfg, const npu_vkern_t *k, vk_layout_t *L, char *why, size_t n)
{
    int R;
    if (npu_vk_check(k, why, n) || resident_fits(cfg, k, why, n))
        return -1;
    if ((R = npu_vk_chunk_rows(cfg, k)) < 1) {
        snprintf(why, n, "vector kernel %s: one row of its tensors does not fit the SPM (%u words)",
                 k->name, own_words(cfg, k));
        return -1;
    }
    if (k->sum_chunk > 0) { /* blocks of sum_chunk rows: the golden model's partial sums */
        if (R < k->sum_chunk) {
            snprintf(why, n, "vector kernel %s: sum_chunk %d rows, %d fit the SPM", k->name,
                     k->sum_chunk, R);
            return -1;
        }
        R = k->sum_chunk;
    }
    if (R < k->rows && one_chunk_needed(k)) {
        snprintf(why, n, "vector kernel %s: its one-row result (a SUM) needs all %d rows in the "
                 "SPM at once; %d fit", k->name, k->rows, R);
        return -1;
    }
    if (R < k->rows && post_read(k)) {
        snprintf(why, n, "vector kernel %s: over several chunks a row op reads a one-row result",
                 k->name);
        return -1;
    }
    if (!has_sum(k) && moves(k)) { /* at least NPU_VK_PIPE chunks: loads and stores overlap the ops */
        int want = (k->rows + NPU_VK_PIPE - 1) / NPU_VK_PIPE;
        want = want > NPU_VK_MIN_ROWS ? want : NPU_VK_MIN_ROWS;
        R = R < want ? R : want;
    }
    layout(cfg, k, R, L);
    return 0;
}

void npu_vk_sum_chunk(const npu_cfg_t *cfg, npu_vkern_t *k)
{
    int R;
    k->sum_chunk = 0;
    R = npu_vk_chunk_rows(cfg, k);
    k->sum_chunk = R >= 1 && R < k->rows ? R : 0;
}

int npu_vk_vec_busy(const npu_cfg_t *cfg, const npu_vkern_t *k, uint64_t *busy, char *why, size_t n)
{
    vk_layout_t L;
    npu_vec_op_t v[2 * NPU_VK_MAX_OPS];
    *busy = 0;
    if (plan_chunks(cfg, k, &L, why, n))
        return -1;
    int chunks = (k->rows + L.R - 1) / L.R;
    for (int i = 0, r0 = 0; r0 < k->rows; i++, r0 += L.R) {
        int nv = chunk_vecs(k, &L, i, chunks, k->rows - r0 < L.R ? k->rows - r0 : L.R, v);
        for (int j = 0; j < nv; j++) {
            npu_fields_t f;
            memset(&f, 0, sizeof f);
            f.op = NPU_OP_VEC;
            f.vop = v[j].vop;
            f.wide = v[j].wide;
            f.rows = v[j].rows;
            f.a_addr = v[j].a_addr;
            f.a_stride = v[j].a_stride;
            f.b_addr = v[j].b_addr;
            f.b_stride = v[j].b_stride;
            f.d_addr = v[j].d_addr;
            f.d_stride = v[j].d_stride;
            *busy += npu_vec_busy(&f, v[j].len, (unsigned)cfg->s);
        }
    }
    return 0;
}

int npu_vk_emit(const npu_cfg_t *cfg, const npu_vkern_t *k, npu_prog_t *out, char *why, size_t n)
{
    vk_layout_t L;
    npu_pb_t b;
    int chunks;
    if (plan_chunks(cfg, k, &L, why, n))
        return -1;
    chunks = (k->rows + L.R - 1) / L.R;
    npu_pb_init(&b, cfg);
    npu_pb_step_t *s = npu_pb_steps(&b, chunks);
    for (int i = 0; s && i < chunks && !b.err; i++)
        chunk_step(&b, k, &L, i, chunks, &s[i]);
    if (s) {
        npu_pb_stitch(&b, s, chunks);
        npu_pb_order(&b, s, chunks, 1, 0, out);
        npu_pb_steps_free(s, chunks);
    }
    return npu_pb_finish(&b, why, n);
}
