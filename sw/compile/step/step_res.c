/* step_res.c - SPM residency across a step's kernels (step_res.h). */
#include "compile/step/step_res.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"
#include "compile/gemm/gemm_emit.h"
#include "prog/prog_expect.h"

enum { SLOTS = NPU_VK_MAX_T, MAX_TRIES = 64 };

int npu_step_res_step(const npu_step_plan_t *p, int i) { return i < p->n_fwd ? i : i + 1; }

int npu_step_res_kernel(const npu_step_plan_t *p, int j)
{
    return j < p->n_fwd ? j : j == p->n_fwd ? -1 : j - 1;
}

static int tensor_at(const npu_step_plan_t *p, uint32_t dram)
{
    for (int t = 0; t < p->nt; t++)
        if (p->t[t].dram == dram)
            return t;
    return -1;
}

uint64_t npu_step_res_xfer_bytes(const npu_cfg_t *cfg, const npu_step_plan_t *p, int t)
{
    uint64_t B = (uint64_t)npu_cfg_beat(cfg);
    return npu_dma_run(p->t[t].dram, p->t[t].bytes, B, (uint64_t)cfg->max_burst_beats).beats * B;
}

int npu_step_res_xfer_insn(const npu_step_plan_t *p, const npu_step_res_t *res, int store, int t,
                           unsigned spm, uint64_t dram, unsigned tag, npu_insn_t *in)
{
    const npu_step_tensor_t *T = &p->t[t];
    unsigned rb = (unsigned)(T->bytes / (uint64_t)T->rows);
    if (dram > UINT32_MAX)
        return -1;
    return store ? npu_enc_store(in, tag ? tag : NPU_TAG_Y, (unsigned)T->rows, (uint32_t)dram, spm, res->stride[t], rb, rb)
                 : npu_enc_load(in, tag ? tag : NPU_TAG_X, 0, (unsigned)T->rows, (uint32_t)dram, spm, res->stride[t], rb, rb);
}

/* Access slot i of kernel ki (GEMM: 0 A, 1 B, 2 C; vector kernel: its tensor i): the step
 * tensor, whether it is read / written, and whether it may use the SPM copy at all. -1: none. */
static int slot(const npu_step_plan_t *p, const npu_step_res_t *res, int ki, int i, int *rd, int *wr, int *spm_ok)
{
    const npu_step_kernel_t *k = &p->k[ki];
    if (k->kind == NPU_SK_CONV_FWD || k->kind == NPU_SK_CONV_BWD || k->kind == NPU_SK_XPOSE) {
        /* DRAM side but a forward's Y and a fused backward's dX where its plan can drain into
         * resident rows (res->y_ok: the convolution's output), a forward's X where it can copy
         * from them and a fused backward's dY where it can read them in place (res->x_ok: the
         * convolution's input) and its X where its X^T can be made from them (res->xt_ok): the
         * conv and transpose emitters read and write DRAM */
        const npu_step_conv_t *c = &k->cv;
        int fwd = k->kind == NPU_SK_CONV_FWD, xp = k->kind == NPU_SK_XPOSE, n = xp ? 2 : fwd ? 3 : 5;
        uint32_t at[5] = {c->x, c->w, fwd ? c->y : c->dy, c->dx, c->dwt};
        if (xp)
            at[0] = k->xp.src, at[1] = k->xp.dst;
        if (i >= n || (!fwd && !xp && i == 3 && c->no_dx))
            return -1;
        *rd = xp ? i == 0 : fwd ? i < 2 : i < 3;
        *wr = !*rd;
        *spm_ok = fwd ? (i == 2 && res->y_ok[ki]) || (i == 0 && res->x_ok[ki])
                      : !xp && ((i == 2 && res->x_ok[ki]) || (i == 3 && res->y_ok[ki]) ||
                                (i == 0 && res->xt_ok[ki]));
        return tensor_at(p, at[i]);
    }
    if (k->kind == NPU_SK_GEMM) {
        const npu_gemm_args_t *a = &k->g.args;
        if (i > 2)
            return -1;
        *rd = i < 2;
        *wr = i == 2;
        /* a transposed operand resident too: its tiles LOAD_SPMed transposed (gemm_emit.h) */
        int xt = !(res->overlap & NPU_RES_NO_XT);
        *spm_ok = i == 0 ? !a->transA || xt : i == 1 ? !a->transB || xt : 1;
        return tensor_at(p, i == 0 ? a->a : i == 1 ? a->b : a->c);
    }
    if (i >= k->v.nt || !(k->v.t[i].load || k->v.t[i].store))
        return -1; /* scratch: the kernel's own */
    *rd = k->v.t[i].load;
    *wr = k->v.t[i].store;
    *spm_ok = 1;
    return tensor_at(p, k->v.t[i].dram);
}

static void add(int *n, int *v, int t)
{
    for (int i = 0; i < *n; i++)
        if (v[i] == t)
            return;
    v[(*n)++] = t;
}

/* Scheduler step of kernel k: its SPM-side and DRAM-side reads and writes (dem: demoted slots). */
static void kernel_step(const npu_cfg_t *cfg, const npu_step_plan_t *p, const npu_step_res_t *res, int ki,
                        const unsigned char *dem, npu_sched_step_t *s)
{
    const npu_step_kernel_t *k = &p->k[ki];
    uint64_t pes = 4u * (uint64_t)cfg->s * (uint64_t)cfg->s;
    s->name = k->name;
    const npu_conv_t *c = &k->cv.c;
    uint64_t conv = (uint64_t)c->batch * npu_conv_oh(c) * npu_conv_ow(c) * c->F * c->C * c->KH * c->KW;
    if (k->kind == NPU_SK_GEMM)
        s->cycles = ((uint64_t)k->g.M * k->g.N * k->g.K + pes - 1) / pes;
    else if (k->kind == NPU_SK_VEC)
        s->cycles = (uint64_t)k->v.rows * (uint64_t)k->v.len * (uint64_t)k->v.nop / (2u * (uint64_t)cfg->s);
    else if (k->kind == NPU_SK_XPOSE) /* its bytes' time: a DMA kernel */
        s->cycles = 4u * (uint64_t)k->xp.taps * k->xp.rows * k->xp.cols / (uint64_t)cfg->dram_bw;
    else /* the MACs (the fused backward's dX and dW^T: twice, once without dX) */
        s->cycles = (k->kind == NPU_SK_CONV_BWD && !k->cv.no_dx ? 2 : 1) * (conv + pes - 1) / pes;
    for (int i = 0; i < SLOTS; i++) {
        int rd, wr, ok, t = slot(p, res, ki, i, &rd, &wr, &ok);
        if (t < 0)
            continue;
        int spm = ok && !dem[i] && !res->dram_only[t];
        if (rd)
            add(spm ? &s->n_in : &s->n_dram_in, spm ? s->in : s->dram_in, t);
        if (wr)
            add(spm ? &s->n_out : &s->n_dram_out, spm ? s->out : s->dram_out, t);
    }
}

/* The scheduler's tensors: DRAM bytes of a whole-tensor transfer, room in the area, the
 * parameters in DRAM at the start and wanted there at the end, the batch in DRAM. */
static void tensors(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res)
{
    uint64_t B = (uint64_t)npu_cfg_word(cfg);
    memset(res->st, 0, sizeof res->st);
    for (int t = 0; t < p->nt; t++) {
        res->stride[t] = npu_gemm_res_words(cfg, p->t[t].cols, p->t[t].width == 32);
        res->st[t].name = p->t[t].name;
        res->st[t].bytes = npu_step_res_xfer_bytes(cfg, p, t);
        res->st[t].spm_bytes = (uint64_t)p->t[t].rows * res->stride[t] * B;
        /* a pitch wider than its resident row (a convolution's padded pixel rows): a whole-tensor
         * transfer would spill into the next rows, so it stays on the DRAM side */
        res->dram_only[t] = npu_step_tensor_pitch(&p->t[t]) > res->stride[t] * B;
    }
    res->st[p->x16].in_dram = 1;
    for (int l = 1; l <= p->layers; l++) {
        const npu_step_lt_t *L = &p->l[l];
        int par[5] = {L->w16, L->w32, L->vw, L->b32, L->vb};
        for (int i = 0; i < 5; i++)
            if (par[i] >= 0) /* a normalised layer has no bias */
                res->st[par[i]].in_dram = res->st[par[i]].keep_out = 1;
    }
}

/* Tensor T's resident rows read as r rows of c elements: 1 the same shape, 2 both row lengths
 * whole SPM words (multiples of the 2S lanes) over as many elements, where the resident copy is
 * the packed element array and any such view of it reads the same bytes (a CNN head's GEMMs read
 * the last convolution's pixel rows as one row per sample, and its first vector kernel the head's
 * dH32 as pixel rows); 0 neither. */
static int same_rows(const npu_cfg_t *cfg, const npu_step_tensor_t *T, int r, int c)
{
    int F = 2 * cfg->s;
    if (T->rows == r && T->cols == c)
        return 1;
    return (uint64_t)r * (uint64_t)c == (uint64_t)T->rows * (uint64_t)T->cols && T->cols % F == 0 && c % F == 0 ? 2
                                                                                                               : 0;
}

/* How kernel k views its slot-i tensor t (same_rows: 1 as the plan shapes it, 2 in a shape its
 * packed resident rows hold as well, 0 otherwise): a vector kernel's rows x len (or one row), a
 * GEMM's operand M x K, K x N (untransposed) or M x N. A resident copy has one row layout, so a
 * tensor viewed otherwise stays on the DRAM side. */
static int view_ok(const npu_cfg_t *cfg, const npu_step_plan_t *p, const npu_step_kernel_t *k, int i, int t)
{
    const npu_step_tensor_t *T = &p->t[t];
    if (k->kind == NPU_SK_VEC)
        return k->v.t[i].one_row ? T->rows == 1 : same_rows(cfg, T, k->v.rows, k->v.len);
    if (k->kind != NPU_SK_GEMM)
        return 1; /* DRAM side anyway */
    int r = i == 0 ? k->g.M : i == 1 ? k->g.K : k->g.M, c = i == 0 ? k->g.K : k->g.N;
    return i == 0 && k->g.args.transA ? same_rows(cfg, T, c, r)
         : i == 1 && k->g.args.transB ? same_rows(cfg, T, k->g.N, k->g.K)
                                       : same_rows(cfg, T, r, c);
}

/* Tensors a kernel views in another shape than the plan's: DRAM side only (view_ok), but those
 * whose packed rows hold the view unless NPU_RES_NO_RESHAPE (res->reshaped counts them). */
static void views(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res)
{
    unsigned char re[NPU_STEP_MAX_TENSORS] = {0};
    for (int i = 0; i < p->nk; i++)
        for (int s = 0; s < SLOTS; s++) {
            int rd, wr, ok, t = slot(p, res, i, s, &rd, &wr, &ok);
            int v = t >= 0 && ok ? view_ok(cfg, p, &p->k[i], s, t) : 1;
            if (v == 0 || (v == 2 && (res->overlap & NPU_RES_NO_RESHAPE)))
                res->dram_only[t] = 1;
            if (v == 2)
                re[t] = 1;
        }
    for (int t = 0; t < p->nt; t++)
        res->reshaped += re[t] && !res->dram_only[t];
}

static void build_steps(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res,
                        unsigned char (*dem)[SLOTS])
{
    memset(res->ss, 0, (size_t)res->n_steps * sizeof *res->ss);
    for (int j = 0; j < res->n_steps; j++) {
        int i = npu_step_res_kernel(p, j);
        npu_sched_step_t *s = &res->ss[j];
        if (i >= 0) {
            kernel_step(cfg, p, res, i, dem[i], s);
            continue;
        }
        s->name = "host: logits out, their gradient in";
        add(&s->n_dram_in, s->dram_in, p->l[p->layers].z32);
        add(&s->n_dram_out, s->dram_out, p->l[p->layers].dz32);
    }
}

/* Moves the largest SPM-side access of scheduler step j to the DRAM side. 0 when none is left. */
static int demote(const npu_step_plan_t *p, npu_step_res_t *res, unsigned char (*dem)[SLOTS], int j)
{
    int i = npu_step_res_kernel(p, j), best = -1;
    uint64_t most = 0;
    if (i < 0)
        return 0;
    for (int s = 0; s < SLOTS; s++) {
        int rd, wr, ok, t = slot(p, res, i, s, &rd, &wr, &ok);
        if (t >= 0 && ok && !dem[i][s] && !res->dram_only[t] && res->st[t].spm_bytes > most) {
            most = res->st[t].spm_bytes;
            best = s;
        }
    }
    if (best < 0)
        return 0;
    dem[i][best] = 1;
    res->demoted++;
    return 1;
}

/* The scheduler's plan, demoting accesses until every step fits. 0, or -1 (res->why). */
static int schedule(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res,
                    unsigned char (*dem)[SLOTS])
{
    for (;;) {
        npu_sched_problem_t pr = {p->nt, res->n_steps, res->st, res->ss, res->cap_bytes,
                                  (double)cfg->dram_bw, (uint64_t)cfg->dram_latency, res->overlap & 1,
                                  (res->overlap >> 1) & 1};
        build_steps(cfg, p, res, dem);
        npu_sched_free(&res->r);
        if (npu_sched_run(&pr, &res->r)) {
            snprintf(res->why, sizeof res->why, "residency: %s", res->r.why);
            return -1;
        }
        if (res->r.ok)
            return 0;
        if (!demote(p, res, dem, res->r.bad_step)) {
            snprintf(res->why, sizeof res->why, "residency: %s", res->r.why);
            return -1;
        }
    }
}

/* ---- addresses ---- */

typedef struct placer {
    const npu_cfg_t *cfg;
    const npu_step_plan_t *p;
    npu_step_res_t *res;
    int open[NPU_STEP_MAX_TENSORS]; /* the stay a resident tensor is in, else -1 */
    int cap_stay, cap_x;
    unsigned short_of;              /* first fit failed: the words it wanted */
    int short_t, short_j;           /* for tensor short_t arriving at scheduler step short_j */
} placer_t;

static unsigned words_of(const placer_t *pl, int t) { return (unsigned)pl->p->t[t].rows * pl->res->stride[t]; }

/* The lowest word of the area where w words are free (first fit); UINT32_MAX when none. */
static unsigned first_fit(const placer_t *pl, unsigned w)
{
    unsigned c = pl->res->limit;
    for (int again = 1; again;) {
        again = 0;
        for (int t = 0; t < pl->p->nt; t++) {
            const npu_res_stay_t *s = pl->open[t] >= 0 ? &pl->res->stay[pl->open[t]] : NULL;
            if (s && s->spm < c + w && c < s->spm + words_of(pl, t)) {
                c = s->spm + words_of(pl, t);
                again = 1;
            }
        }
    }
    return (uint64_t)c + w <= pl->res->words ? c : UINT32_MAX;
}

static int grow(void **a, int *cap, int n, size_t each)
{
    if (n < *cap)
        return 0;
    int c = *cap ? 2 * *cap : 32;
    void *q = realloc(*a, (size_t)c * each);
    if (!q)
        return -1;
    *a = q;
    *cap = c;
    return 0;
}

/* Tensor t arrives at step j. 0, 1 when no range fits (pl->short_of), -1 out of memory. */
static int arrive(placer_t *pl, int t, int j)
{
    npu_step_res_t *res = pl->res;
    unsigned at = first_fit(pl, words_of(pl, t));
    if (at == UINT32_MAX) {
        pl->short_of = words_of(pl, t);
        pl->short_t = t;
        pl->short_j = j;
        return 1;
    }
    if (grow((void **)&res->stay, &pl->cap_stay, res->nstay, sizeof *res->stay))
        return -1;
    res->stay[res->nstay] = (npu_res_stay_t){t, j, res->n_steps, at};
    pl->open[t] = res->nstay++;
    return 0;
}

static void leave(placer_t *pl, int t, int j)
{
    if (pl->open[t] >= 0)
        pl->res->stay[pl->open[t]].to = j;
    pl->open[t] = -1;
}

/* A transfer of t (at its current address) in step j's own program before the kernel (app 0) or
 * appended to the kernel's program (app 1, with DMA tag `tag`). */
static int xfer(placer_t *pl, const npu_sched_event_t *ev, int j, int app, unsigned tag)
{
    npu_step_res_t *res = pl->res;
    if (grow((void **)&res->x, &pl->cap_x, res->nx, sizeof *res->x))
        return -1;
    res->x[res->nx++] = (npu_res_xfer_t){ev->kind == NPU_SCHED_STORE, ev->tensor, ev->keep,
                                         res->stay[pl->open[ev->tensor]].spm, j, app, tag, ev->step, 0};
    return 0;
}

/* Kernel i's tags, one per tensor it moves or may move (res->tags[i]): a GEMM's and a vector
 * kernel's given anew, 1, 2, ..; a convolution's and a transpose's role tags kept (their
 * emitters' own; one tensor per tag and direction, step_tags.h). */
static void retag(npu_step_res_t *res, const npu_step_plan_t *p, int i)
{
    npu_step_kernel_t *k = &res->k[i];
    npu_step_tagmap_t *m = &res->tags[i];
    unsigned next = 1; /* 0 is the program fetch's */
    if (k->kind != NPU_SK_GEMM && k->kind != NPU_SK_VEC) {
        res->ambiguous |= npu_step_tagmap(p, k, m) != 0;
        return;
    }
    for (int g = 0; g < NPU_NUM_TAGS; g++)
        m->rd[g] = m->wr[g] = -1;
    for (int s = 0; s < SLOTS; s++) {
        int rd, wr, ok, t = slot(p, res, i, s, &rd, &wr, &ok);
        if (t < 0)
            continue;
        if (next >= NPU_NUM_TAGS) {
            res->ambiguous = 1;
            next = 1;
        }
        m->rd[next] = m->wr[next] = t;
        if (k->kind == NPU_SK_VEC)
            k->v.t[s].tag = next++;
        else
            *(s == 0 ? &k->g.args.tag_a : s == 1 ? &k->g.args.tag_b : &k->g.args.tag_c) = next++;
    }
}

void npu_step_res_split(const npu_step_res_t *res, int i, const uint64_t *rd, const uint64_t *wr,
                        uint64_t *in, uint64_t *out)
{
    npu_step_tag_split(&res->tags[i], rd, wr, in, out);
}

/* Kernel i with its SPM-side accesses at the tensors' current addresses. */
static void apply(placer_t *pl, int i, const unsigned char *dem)
{
    const npu_step_plan_t *p = pl->p;
    npu_step_res_t *res = pl->res;
    npu_step_kernel_t *k = &res->k[i];
    retag(res, p, i);
    for (int s = 0; s < SLOTS; s++) {
        int rd, wr, ok, t = slot(p, res, i, s, &rd, &wr, &ok);
        if (t < 0 || !ok || dem[s] || res->dram_only[t] || pl->open[t] < 0)
            continue;
        unsigned at = res->stay[pl->open[t]].spm;
        if (k->kind == NPU_SK_VEC) { /* its rows of len (same_rows: the tensor's, or packed) */
            int same = k->v.t[s].one_row || p->t[t].cols == k->v.len;
            unsigned stride = same ? res->stride[t] : npu_gemm_res_words(pl->cfg, k->v.len, p->t[t].width == 32);
            npu_vk_resident(&k->v, s, at, stride);
            continue;
        }
        /* X (slot()): a forward copies it from its rows, a fused backward LOAD_SPMs X^T from them */
        if ((k->kind == NPU_SK_CONV_FWD || k->kind == NPU_SK_CONV_BWD) && s == 0) {
            k->cv.res_x = 1;
            k->cv.spm_x = at;
            k->cv.stride_x = res->stride[t];
            continue;
        }
        if (k->kind == NPU_SK_CONV_BWD && s == 2) { /* dY (slot()): read in place */
            k->cv.res_dy = 1;
            k->cv.spm_dy = at;
            k->cv.stride_dy = res->stride[t];
            continue;
        }
        if (k->kind == NPU_SK_CONV_BWD) { /* dX (slot()): drained into its rows */
            k->cv.res_dx = 1;
            k->cv.spm_dx = at;
            k->cv.stride_dx = res->stride[t];
            continue;
        }
        if (k->kind == NPU_SK_CONV_FWD) { /* Y (slot()): drained into its rows */
            k->cv.res_y = 1;
            k->cv.spm_y = at;
            k->cv.stride_y = res->stride[t];
            continue;
        }
        *(s == 0 ? &k->g.args.res_a : s == 1 ? &k->g.args.res_b : &k->g.args.res_c) = 1;
        *(s == 0 ? &k->g.args.spm_ra : s == 1 ? &k->g.args.spm_rb : &k->g.args.spm_rc) = at;
    }
    if (k->kind == NPU_SK_VEC) { /* its chunks below the limit: a SUM's blocks of the rows they hold */
        k->v.spm_limit = res->limit;
        for (int o = 0; o < k->v.nop; o++)
            if (k->v.op[o].vop == NPU_VOP_SUM && k->v.op[o].b >= 0) { /* a SUM with its scratch */
                npu_vk_sum_chunk(pl->cfg, &k->v);
                break;
            }
    } else if (k->kind == NPU_SK_XPOSE)
        k->xp.spm_limit = res->limit;
    else if (k->kind == NPU_SK_GEMM)
        k->g.args.spm_limit = res->limit;
    else
        k->cv.spm_limit = res->limit;
}

/* The tag kernel i's program moves tensor t under: its own for t (in neither direction another
 * tensor's), else a free one (then t's); 0 when there is none. */
static unsigned tag_for(npu_step_res_t *res, int i, int t)
{
    npu_step_tagmap_t *m = &res->tags[i];
    for (int pass = 0; pass < 2; pass++)
        for (int g = 1; g < NPU_NUM_TAGS; g++) {
            int mine = m->rd[g] == t || m->wr[g] == t, free_rd = m->rd[g] < 0 || m->rd[g] == t;
            if ((pass ? m->rd[g] < 0 && m->wr[g] < 0 : mine && free_rd && (m->wr[g] < 0 || m->wr[g] == t))) {
                m->rd[g] = m->wr[g] = t;
                return (unsigned)g;
            }
        }
    return 0;
}

/* An event issued before its step (a prefetch, a look-ahead write-back): appended to the program
 * of kernel i (step j) when a tag is left, else a program of its own at the event's step. */
static int early(placer_t *pl, const npu_sched_event_t *ev, int j, int i)
{
    unsigned tag = i >= 0 ? tag_for(pl->res, i, ev->tensor) : 0;
    return tag ? xfer(pl, ev, j, 1, tag) : xfer(pl, ev, i >= 0 ? ev->step : j, 0, 0);
}

/* Scheduler step j: the stays that end (their transfers, unless issued earlier), the loads issued
 * now (a demand load in the step's own program), the kernel's outputs, its addresses and tags,
 * then the transfers issued now for later steps, appended to its program. */
static int place_step(placer_t *pl, int j, unsigned char (*dem)[SLOTS])
{
    npu_step_res_t *res = pl->res;
    int rc = 0, i = j < res->n_steps ? npu_step_res_kernel(pl->p, j) : -1;
    for (int e = 0; e < res->r.n_ev && rc == 0; e++) {
        const npu_sched_event_t *ev = &res->r.ev[e];
        int xf = ev->kind == NPU_SCHED_LOAD || ev->kind == NPU_SCHED_STORE;
        if (ev->kind == NPU_SCHED_LOAD ? ev->at != j : ev->step != j)
            continue;
        if (ev->kind == NPU_SCHED_LOAD)
            rc = arrive(pl, ev->tensor, j);
        if (rc == 0 && xf && ev->at == j && ev->step == j)
            rc = xfer(pl, ev, j, 0, 0);
        if (rc == 0 && ev->kind != NPU_SCHED_LOAD && !ev->keep)
            leave(pl, ev->tensor, j);
    }
    for (int o = 0; j < res->n_steps && o < res->ss[j].n_out && rc == 0; o++)
        if (pl->open[res->ss[j].out[o]] < 0)
            rc = arrive(pl, res->ss[j].out[o], j);
    if (rc == 0 && i >= 0)
        apply(pl, i, dem[i]);
    for (int e = 0; e < res->r.n_ev && rc == 0; e++) {
        const npu_sched_event_t *ev = &res->r.ev[e];
        if ((ev->kind == NPU_SCHED_LOAD || ev->kind == NPU_SCHED_STORE) && ev->at == j && ev->step > j)
            rc = early(pl, ev, j, i);
    }
    return rc;
}

static int by_step(const void *a, const void *b)
{
    const npu_res_xfer_t *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->app != y->app)
        return x->app < y->app ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The transfers by step, own programs before appended ones, in the plan's order within each. */
static void index_xfers(npu_step_res_t *res)
{
    for (int x = 0; x < res->nx; x++)
        res->x[x].order = x;
    if (res->nx)
        qsort(res->x, (size_t)res->nx, sizeof *res->x, by_step);
    for (int j = 0, x = 0; j <= res->n_steps + 1; j++) {
        while (x < res->nx && res->x[x].step < j)
            x++;
        res->x_at[j] = x;
    }
}

/* The slot of convolution k's output (slot()): a forward's Y 2, a fused backward's dX 3; -1 for
 * other kernels. */
static int out_slot(const npu_step_kernel_t *k)
{
    return k->kind == NPU_SK_CONV_FWD ? 2 : k->kind == NPU_SK_CONV_BWD && !k->cv.no_dx ? 3 : -1;
}

/* Convolution i, its output slot not demoted, whose output (a forward's Y, a fused backward's dX)
 * is tensor t; -1 when none. */
static int y_of(const npu_step_plan_t *p, unsigned char (*dem)[SLOTS], int i, int t)
{
    int o = i >= 0 ? out_slot(&p->k[i]) : -1;
    return o >= 0 && !dem[i][o] && tensor_at(p, o == 2 ? p->k[i].cv.y : p->k[i].cv.dx) == t ? i : -1;
}

/* When first fit failed: the forward convolution whose resident output takes the most of the area
 * then (the one that found no range, or one still resident), else -1. */
static int y_in_the_way(const placer_t *pl, unsigned char (*dem)[SLOTS])
{
    const npu_step_plan_t *p = pl->p;
    int best = pl->short_j < pl->res->n_steps ? y_of(p, dem, npu_step_res_kernel(p, pl->short_j), pl->short_t) : -1;
    unsigned most = 0;
    for (int t = 0; t < p->nt && best < 0; t++) {
        const npu_res_stay_t *s = pl->open[t] >= 0 ? &pl->res->stay[pl->open[t]] : NULL;
        int i = s && s->from < pl->res->n_steps ? y_of(p, dem, npu_step_res_kernel(p, s->from), t) : -1;
        if (i >= 0 && words_of(pl, t) > most) {
            most = words_of(pl, t);
            best = i;
        }
    }
    return best;
}

static int has(int n, const int *v, int t)
{
    for (int i = 0; i < n; i++)
        if (v[i] == t)
            return 1;
    return 0;
}

/* A forward convolution whose output Y the plan drains into the SPM but no later kernel reads
 * there before the stay ends (written back first): it saves no byte and costs a transfer of its
 * own after the kernel instead of the kernel's overlapped STORE. -1 when none. */
static int idle_y(const npu_step_plan_t *p, const npu_step_res_t *res, unsigned char (*dem)[SLOTS])
{
    for (int x = 0; x < res->nstay; x++) {
        const npu_res_stay_t *st = &res->stay[x];
        int i = st->from < res->n_steps ? y_of(p, dem, npu_step_res_kernel(p, st->from), st->t) : -1, read = 0;
        if (i < 0 || !res->y_ok[i])
            continue;
        for (int j = st->from + 1; j < st->to && j < res->n_steps && !read; j++)
            read = has(res->ss[j].n_in, res->ss[j].in, st->t);
        if (!read)
            return i;
    }
    return -1;
}

/* Addresses for the plan: 0, 1 when first fit failed (*short_of words; *y_kernel a forward
 * convolution whose resident output is in the way, y_in_the_way), -1 out of memory. */
static int place(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res, unsigned char (*dem)[SLOTS],
                 unsigned *short_of, int *y_kernel)
{
    placer_t pl;
    int rc = 0;
    memset(&pl, 0, sizeof pl);
    pl.cfg = cfg;
    pl.p = p;
    pl.res = res;
    for (int t = 0; t < NPU_STEP_MAX_TENSORS; t++)
        pl.open[t] = -1;
    free(res->stay);
    free(res->x);
    res->stay = NULL;
    res->x = NULL;
    res->nstay = res->nx = 0;
    memcpy(res->k, p->k, (size_t)p->nk * sizeof *p->k);
    for (int j = 0; j <= res->n_steps && rc == 0; j++)
        rc = place_step(&pl, j, dem);
    if (rc == 0)
        index_xfers(res);
    *short_of = pl.short_of;
    *y_kernel = rc == 1 ? y_in_the_way(&pl, dem) : -1;
    return rc;
}

/* A tensor's DRAM pitch in beats against a conv plan's; 1 when they differ. */
static int pitch_differs(const npu_step_plan_t *p, uint32_t at, unsigned pitch)
{
    int t = tensor_at(p, at);
    return t >= 0 && npu_step_tensor_pitch(&p->t[t]) != pitch;
}

/* Tensor t's resident row stride in words (the rows a DRAIN writes, step_res.h). */
static unsigned res_words(const npu_cfg_t *cfg, const npu_step_plan_t *p, int t)
{
    return npu_gemm_res_words(cfg, p->t[t].cols, p->t[t].width == 32);
}

/* A forward planned as sp may drain Y into resident rows of tensor t (npu_conv_split_res_ok). */
static int y_may_stay(const npu_cfg_t *cfg, const npu_step_plan_t *p, const npu_conv_split_t *sp, int t)
{
    return t >= 0 && npu_conv_split_res_ok(sp, 0, res_words(cfg, p, t));
}

/* A forward planned as sp may read X from resident rows of tensor t (npu_conv_split_res_ok: its
 * bands LOAD_SPMed from them). The batch X16, which the host writes in DRAM each step, then
 * comes in by a whole-tensor load and is read once for the forward and the backward's X^T;
 * NPU_RES_NO_BATCH_X keeps it on the DRAM side alone (with it eligible and no such option the
 * traffic() choice of the time kept plans that moved more: small, cnn:c4,c4,c4+1,c4s2,fc10 at
 * batch 2, 132,704 B a step against 120,448 B). */
static int x_may_stay(const npu_cfg_t *cfg, const npu_step_plan_t *p, const npu_conv_split_t *sp, int t)
{
    return t >= 0 && npu_conv_split_res_ok(sp, 1, res_words(cfg, p, t));
}

/* Convolution kernel k planned on the banks below `limit` (npu_step_emit_other's cfg with
 * residency) reads and writes its tensors at the plan's pitches: 0, or -1 with the reason.
 * *y_ok, *x_ok: a forward whose Y may drain into resident rows, whose X may be copied from them;
 * a fused backward whose dX may drain into them, whose dY may be read there; *xt_ok: a fused
 * backward whose X^T may be made from X's resident rows. */
static int conv_below(const npu_cfg_t *cfg, const npu_step_plan_t *p, const npu_step_kernel_t *k, unsigned limit,
                      unsigned char *y_ok, unsigned char *x_ok, unsigned char *xt_ok, char *why, size_t n)
{
    npu_cfg_t lo = *cfg;
    char msg[200] = "";
    int bad = -1;
    lo.spm_banks = (int)(limit / (unsigned)cfg->spm_bank_words);
    if (k->kind == NPU_SK_CONV_FWD) {
        npu_conv_split_t *sp = calloc(1, sizeof *sp);
        if (sp && npu_conv_split(&lo, &k->cv.c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NPU_STEP_CONV_OPTS, sp, msg,
                                 sizeof msg) == 0)
            bad = pitch_differs(p, k->cv.x, sp->whole.pitch_x) || pitch_differs(p, k->cv.w, sp->whole.pitch_w) ||
                  pitch_differs(p, k->cv.y, sp->whole.pitch_out);
        *y_ok = bad == 0 && y_may_stay(cfg, p, sp, tensor_at(p, k->cv.y));
        *x_ok = bad == 0 && x_may_stay(cfg, p, sp, tensor_at(p, k->cv.x));
        if (sp)
            npu_conv_split_free(sp);
        free(sp);
    } else {
        npu_conv_bwd_plan_t *bp = calloc(1, sizeof *bp);
        int dy = tensor_at(p, k->cv.dy), dx = k->cv.no_dx ? -1 : tensor_at(p, k->cv.dx), x = tensor_at(p, k->cv.x);
        if (bp && npu_conv_bwd_plan(&lo, &k->cv.c, 1, bp, msg, sizeof msg) == 0)
            bad = pitch_differs(p, k->cv.x, bp->dx.pitch_x) || pitch_differs(p, k->cv.w, bp->dx.pitch_w) ||
                  pitch_differs(p, k->cv.dy, bp->dx.pitch_dy) ||
                  pitch_differs(p, k->cv.dwt, bp->pf * (unsigned)npu_cfg_word(cfg)) ||
                  (!k->cv.no_dx && pitch_differs(p, k->cv.dx, bp->dx.pitch_out));
        /* dY read in place from its resident rows (npu_conv_bwd_res_dy: no copy, so any dY); dX
         * drained into its rows (npu_conv_bwd_res_dx) */
        *x_ok = bad == 0 && dy >= 0 && npu_conv_bwd_res_dy_ok(bp, res_words(cfg, p, dy));
        *xt_ok = bad == 0 && x >= 0 && npu_conv_bwd_res_x_ok(bp, res_words(cfg, p, x)); /* by LOAD_SPMs */
        if (bad == 0 && !k->cv.no_dx && dx >= 0)
            *y_ok = npu_conv_bwd_res_dx_ok(bp, res_words(cfg, p, dx));
        free(bp);
    }
    if (bad)
        snprintf(why, n, "residency: %s on the %u SPM words below the resident banks: %s", k->name, limit,
                 bad < 0 ? (msg[0] ? msg : "out of memory") : "other DRAM pitches than the plan's");
    return bad ? -1 : 0;
}

int npu_step_res_plan(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, npu_step_res_t *res)
{
    return npu_step_res_plan_cap(cfg, p, res_banks, 0, res);
}

int npu_step_res_plan_cap(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap,
                          npu_step_res_t *res)
{
    return npu_step_res_plan_ex(cfg, p, res_banks, cap, NPU_RES_PREFETCH | NPU_RES_LOOKAHEAD, res);
}

/* Schedules at res->cap_bytes and places: 0, 1 when first fit failed (*short_of words; *yk the
 * convolution whose resident output was in the way, else -1), -1 with res->why. */
static int plan_at(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res, unsigned char (*dem)[SLOTS],
                   unsigned *short_of, int *yk)
{
    *short_of = 0;
    *yk = -1;
    if (schedule(cfg, p, res, dem))
        return -1;
    int prc = place(cfg, p, res, dem, short_of, yk);
    if (prc < 0)
        snprintf(res->why, sizeof res->why, "residency: out of memory");
    return prc;
}

/* The plan at the largest capacity (whole SPM words, <= the given one) whose schedule first fit
 * can place. The schedule counts bytes, not addresses, so fragmentation can leave no range for
 * a tensor: the capacity is cut by that tensor until a schedule places, then bisected back up
 * between the placing and the failing capacity (cutting the whole tensor alone would keep out
 * tensors a few words of fragmentation did not need to). Two demotions change the problem, and
 * the search starts again from where it is: a convolution's drained output that no kernel reads
 * in the SPM (stored as before), and with y_first a convolution's resident output in the way of
 * first fit (drained to DRAM instead of a cut; *y_seen says one was). 0, or -1 with res->why. */
static int plan_largest_cap(const npu_cfg_t *cfg, const npu_step_plan_t *p, npu_step_res_t *res,
                            unsigned char (*dem)[SLOTS], int y_first, int *y_seen)
{
    uint64_t word = (uint64_t)npu_cfg_word(cfg), ok = UINT64_MAX, bad = 0;
    for (int tries = 0; tries < MAX_TRIES; tries++) {
        unsigned short_of;
        int yk;
        uint64_t at = res->cap_bytes;
        int prc = plan_at(cfg, p, res, dem, &short_of, &yk);
        if (prc < 0)
            return -1;
        int idle = prc == 0 ? idle_y(p, res, dem) : -1;
        *y_seen |= prc && yk >= 0;
        if (idle >= 0 || (prc && y_first && yk >= 0)) {
            int kd = idle >= 0 ? idle : yk;
            dem[kd][out_slot(&p->k[kd])] = 1;
            res->demoted++;
            ok = UINT64_MAX;
            bad = 0;
            continue;
        }
        if (prc == 0)
            ok = at;
        else
            bad = at;
        uint64_t less = (uint64_t)short_of * word;
        if (ok == UINT64_MAX) /* none placed yet: cut by the tensor that found no range */
            res->cap_bytes = at > less ? at - less : 0;
        else if (bad > ok + word) /* bisect (ok, bad) in whole words */
            res->cap_bytes = ok + (bad - ok) / word / 2 * word;
        else if (at == ok)
            return 0;
        else { /* the last try failed: plan again at the largest that placed */
            res->cap_bytes = ok;
            return plan_at(cfg, p, res, dem, &short_of, &yk) ? -1 : 0;
        }
    }
    snprintf(res->why, sizeof res->why, "residency: no placement after %d tries", MAX_TRIES);
    return -1;
}

/* Tensors one kernel alone touches in the step (an update's W32 and VW, read and written by its
 * SGD): a resident copy serves no second kernel, so their accesses are demoted to the DRAM side
 * (the kernel streams them) instead of taking room that Belady would make by evicting tensors
 * a later kernel reads. */
static void bypass_once(const npu_step_plan_t *p, npu_step_res_t *res, unsigned char (*dem)[SLOTS])
{
    int users[NPU_STEP_MAX_TENSORS] = {0}, last[NPU_STEP_MAX_TENSORS];
    for (int t = 0; t < NPU_STEP_MAX_TENSORS; t++)
        last[t] = -1;
    for (int i = 0; i < p->nk; i++)
        for (int s = 0; s < SLOTS; s++) {
            int rd, wr, ok, t = slot(p, res, i, s, &rd, &wr, &ok);
            if (t >= 0 && last[t] != i) {
                users[t]++;
                last[t] = i;
            }
        }
    users[p->l[p->layers].z32]++; /* the host's step reads the logits and writes their gradient */
    users[p->l[p->layers].dz32]++;
    for (int i = 0; i < p->nk; i++)
        for (int s = 0; s < SLOTS; s++) {
            int rd, wr, ok, t = slot(p, res, i, s, &rd, &wr, &ok);
            if (t >= 0 && ok && users[t] == 1)
                dem[i][s] = 1;
        }
}

/* What each convolution kernel may keep SPM side on the banks below `limit` (conv_below), before
 * any option masks it: the same for every plan npu_step_res_plan_by tries, so planned once (each
 * is a convolution's split or backward plan). */
typedef struct conv_ok {
    unsigned char *y, *x, *xt;
    int bad;       /* a convolution that does not plan below the limit: why */
    char why[200];
} conv_ok_t;

static void conv_ok_free(conv_ok_t *c)
{
    free(c->y);
    free(c->x);
    free(c->xt);
}

static void conv_ok_init(const npu_cfg_t *cfg, const npu_step_plan_t *p, unsigned limit, conv_ok_t *c)
{
    memset(c, 0, sizeof *c);
    c->y = calloc((size_t)p->nk, 1);
    c->x = calloc((size_t)p->nk, 1);
    c->xt = calloc((size_t)p->nk, 1);
    c->bad = !c->y || !c->x || !c->xt;
    if (c->bad)
        snprintf(c->why, sizeof c->why, "residency: out of memory");
    for (int i = 0; i < p->nk && !c->bad; i++)
        c->bad = (p->k[i].kind == NPU_SK_CONV_FWD || p->k[i].kind == NPU_SK_CONV_BWD) &&
                 conv_below(cfg, p, &p->k[i], limit, &c->y[i], &c->x[i], &c->xt[i], c->why, sizeof c->why);
}

/* A copy of n bytes (NULL when out of memory). */
static unsigned char *dup_bytes(const unsigned char *a, size_t n)
{
    unsigned char *b = malloc(n ? n : 1);
    return b ? memcpy(b, a, n) : NULL;
}

/* The plan (npu_step_res_plan_ex) with one fallback when first fit fails: y_first, a forward
 * convolution's resident output in the way drained to DRAM instead (y_in_the_way); otherwise, and
 * when none is, the largest capacity that places (plan_largest_cap). *y_seen: a convolution's
 * output was in the way once. ok: the convolutions' SPM-side accesses before the options. */
static int plan_try(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap, int overlap,
                    const conv_ok_t *ok, int y_first, int *y_seen, npu_step_res_t *res)
{
    memset(res, 0, sizeof *res);
    res->overlap = overlap;
    if (res_banks < 1 || cfg->spm_banks - res_banks < 3) {
        snprintf(res->why, sizeof res->why, "residency: %d resident banks leave fewer than the 3 banks "
                 "a GEMM's buffers take (%d banks)", res_banks, cfg->spm_banks);
        return -1;
    }
    if (ok->bad) {
        snprintf(res->why, sizeof res->why, "%s", ok->why);
        return -1;
    }
    res->limit = (unsigned)((cfg->spm_banks - res_banks) * cfg->spm_bank_words);
    res->y_ok = dup_bytes(ok->y, (size_t)p->nk);
    res->x_ok = dup_bytes(ok->x, (size_t)p->nk);
    res->xt_ok = dup_bytes(ok->xt, (size_t)p->nk);
    if (!res->y_ok || !res->x_ok || !res->xt_ok) {
        snprintf(res->why, sizeof res->why, "residency: out of memory");
        return -1; /* npu_step_res_free frees what was allocated */
    }
    for (int i = 0; i < p->nk; i++) { /* the outputs and inputs the mask keeps on the DRAM side */
        int fwd = p->k[i].kind == NPU_SK_CONV_FWD;
        if (overlap & (fwd ? NPU_RES_NO_CONV_Y : NPU_RES_NO_CONV_DX))
            res->y_ok[i] = 0;
        if (overlap & (fwd ? NPU_RES_NO_CONV_X : NPU_RES_NO_CONV_DY))
            res->x_ok[i] = 0;
        if (fwd && (overlap & NPU_RES_NO_BATCH_X) && tensor_at(p, p->k[i].cv.x) == p->x16)
            res->x_ok[i] = 0;
        if (overlap & NPU_RES_NO_XT)
            res->xt_ok[i] = 0;
    }
    res->words = (unsigned)npu_cfg_spm_words(cfg);
    res->cap_bytes = (uint64_t)(res->words - res->limit) * (uint64_t)npu_cfg_word(cfg);
    res->cap_bytes = cap && cap < res->cap_bytes ? cap : res->cap_bytes;
    res->n_steps = p->nk + 1;
    unsigned char(*dem)[SLOTS] = calloc((size_t)p->nk, sizeof *dem);
    res->ss = calloc((size_t)res->n_steps, sizeof *res->ss);
    res->k = calloc((size_t)p->nk, sizeof *res->k);
    res->x_at = calloc((size_t)res->n_steps + 2, sizeof *res->x_at);
    res->tags = calloc((size_t)p->nk, sizeof *res->tags);
    int rc = -1;
    if (!dem || !res->ss || !res->k || !res->x_at || !res->tags) {
        snprintf(res->why, sizeof res->why, "residency: out of memory");
        goto out;
    }
    tensors(cfg, p, res);
    views(cfg, p, res);
    if (overlap & NPU_RES_BYPASS)
        bypass_once(p, res, dem);
    rc = plan_largest_cap(cfg, p, res, dem, y_first, y_seen);
out:
    free(dem);
    return rc;
}

static uint64_t plan_bytes(const npu_step_res_t *r) { return r->r.in_bytes + r->r.out_bytes; }

/* Both fallbacks of plan_try; the plan of fewer DRAM bytes (ties: the cut, the rule without
 * resident convolution outputs). */
static int plan_fallbacks(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap, int overlap,
                          const conv_ok_t *ok, npu_step_res_t *res)
{
    npu_step_res_t *y = malloc(sizeof *y);
    int seen = 0, rc = plan_try(cfg, p, res_banks, cap, overlap, ok, 0, &seen, res);
    if (!y || !seen)
        goto out; /* no convolution output ever in the way: the same plan */
    if (plan_try(cfg, p, res_banks, cap, overlap, ok, 1, &seen, y) == 0 && (rc || plan_bytes(y) < plan_bytes(res))) {
        npu_step_res_free(res);
        *res = *y;
        rc = 0;
    } else {
        npu_step_res_free(y);
    }
out:
    free(y);
    return rc;
}

/* A plan's DRAM bytes: its transfers and, a whole tensor each, every DRAM-side access of a kernel
 * (a convolution's or transpose's, a demoted one: the kernel streams the tensor itself). The
 * scheduler counts only its transfers, and an input copied from the SPM moves none of the
 * convolution's reads, while the area it takes may demote other accesses. */
static uint64_t traffic(const npu_step_res_t *r)
{
    uint64_t b = plan_bytes(r);
    for (int j = 0; j < r->n_steps; j++) {
        for (int i = 0; i < r->ss[j].n_dram_in; i++)
            b += r->st[r->ss[j].dram_in[i]].bytes;
        for (int i = 0; i < r->ss[j].n_dram_out; i++)
            b += r->st[r->ss[j].dram_out[i]].bytes;
    }
    return b;
}

/* Whether some kernel of kind `kind` may read its input (res->x_ok) or write its output (res->y_ok)
 * in resident rows. */
static int any_ok(const npu_step_plan_t *p, const unsigned char *ok, int kind)
{
    for (int i = 0; i < p->nk; i++)
        if (ok[i] && p->k[i].kind == kind)
            return 1;
    return 0;
}

/* A forward convolution that may read its input X from resident rows: the batch X16 (batch 1)
 * or a kernel-made one (batch 0). */
static int any_fwd_x(const npu_step_plan_t *p, const npu_step_res_t *res, int batch)
{
    for (int i = 0; i < p->nk; i++)
        if (res->x_ok[i] && p->k[i].kind == NPU_SK_CONV_FWD && (tensor_at(p, p->k[i].cv.x) == p->x16) == batch)
            return 1;
    return 0;
}

/* Which options can change plan res (has[m] for k_opts[m]; BYPASS's is the caller's): a
 * convolution whose access the option moves, a transposed GEMM operand. */
static void options_that_matter(const npu_step_plan_t *p, const npu_step_res_t *res, int *has)
{
    has[0] = any_fwd_x(p, res, 0);
    has[5] = any_fwd_x(p, res, 1);
    has[6] = res->reshaped > 0;
    has[1] = any_ok(p, res->x_ok, NPU_SK_CONV_BWD);
    has[2] = any_ok(p, res->y_ok, NPU_SK_CONV_BWD);
    has[3] = any_ok(p, res->xt_ok, NPU_SK_CONV_BWD);
    for (int i = 0; i < p->nk; i++)
        has[3] |= p->k[i].kind == NPU_SK_GEMM && (p->k[i].g.args.transA || p->k[i].g.args.transB);
}

/* A plan's cost: cost's (NULL: traffic()), then traffic() to break ties. */
typedef struct plan_cost {
    uint64_t c, bytes;
} plan_cost_t;

static plan_cost_t cost_of(npu_step_res_cost_fn cost, void *ctx, const npu_step_plan_t *p, const npu_step_res_t *r)
{
    plan_cost_t k = {0, traffic(r)};
    k.c = cost ? cost(ctx, p, r) : k.bytes;
    return k;
}

/* Options that keep something on the DRAM side, tried in every combination by
 * npu_step_res_plan_by */
static const int k_opts[] = {NPU_RES_NO_CONV_X, NPU_RES_NO_CONV_DY, NPU_RES_NO_CONV_DX, NPU_RES_NO_XT, NPU_RES_BYPASS,
                             NPU_RES_NO_BATCH_X, NPU_RES_NO_RESHAPE};
enum { N_OPTS = sizeof k_opts / sizeof k_opts[0], OPT_BATCH_X = 1 << 5 /* k_opts[5]'s bit */ };

/* The plan with the convolutions' SPM-side accesses where they may be (a forward's X copied from
 * its rows, a fused backward's dY read in place, its dX drained into rows and its X^T made from
 * X's rows) and every tensor resident, and the plans with every combination of the options that
 * keep something on the DRAM side (k_opts: NPU_RES_NO_CONV_X, NPU_RES_NO_CONV_DY,
 * NPU_RES_NO_CONV_DX, NPU_RES_NO_XT, NPU_RES_BYPASS, NPU_RES_NO_BATCH_X, NPU_RES_NO_RESHAPE; those
 * the caller set stay set, those that change nothing are not tried): the cheapest is kept
 * (step_res.h), ties by traffic(), then the first (fewest options). Every combination, not a greedy descent: keeping an access SPM side adds
 * to the area's pressure, so the options interact (at small, cnn:c4,c8s2,fc10 at batch 4: the
 * descent that turned each on in turn when the estimate did not grow kept a plan of 20,605 cycles,
 * the least traffic's took 20,058), and fewer bytes are not always fewer cycles (a bypassed update
 * streams its tensors in its own program instead of a prefetch beside an earlier kernel). At most
 * 96 plans, each a few milliseconds for the networks the tests and sweeps run. */
int npu_step_res_plan_by(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap,
                         int overlap, npu_step_res_cost_fn cost, void *ctx, npu_step_res_t *res)
{
    conv_ok_t ok;
    if (res_banks >= 1 && cfg->spm_banks - res_banks >= 3) /* else plan_try says why */
        conv_ok_init(cfg, p, (unsigned)((cfg->spm_banks - res_banks) * cfg->spm_bank_words), &ok);
    else
        memset(&ok, 0, sizeof ok);
    int rc = plan_fallbacks(cfg, p, res_banks, cap, overlap, &ok, res), opts = 0;
    int has[N_OPTS] = {1, 1, 1, 1, !(overlap & NPU_RES_NO_BYPASS), 1, 1};
    npu_step_res_t *o = malloc(sizeof *o);
    plan_cost_t best = {UINT64_MAX, UINT64_MAX};
    if (rc == 0) {
        options_that_matter(p, res, has);
        best = cost_of(cost, ctx, p, res);
    }
    for (int m = 0; m < N_OPTS; m++)
        opts |= !(overlap & k_opts[m]) && has[m] ? 1 << m : 0;
    for (int sub = 1; o && sub < 1 << N_OPTS; sub++) {
        int ov = overlap;
        if (sub & ~opts)
            continue;
        for (int m = 0; m < N_OPTS; m++)
            ov |= (sub >> m) & 1 ? k_opts[m] : 0;
        if ((ov & NPU_RES_NO_CONV_X) && (sub & OPT_BATCH_X) && !(overlap & NPU_RES_NO_BATCH_X))
            continue; /* NO_CONV_X keeps X16 on the DRAM side too: the plan without NO_BATCH_X */
        if (plan_fallbacks(cfg, p, res_banks, cap, ov, &ok, o)) {
            npu_step_res_free(o); /* a failed plan's too */
            continue;
        }
        plan_cost_t k = cost_of(cost, ctx, p, o);
        if (rc || k.c < best.c || (k.c == best.c && k.bytes < best.bytes)) {
            npu_step_res_free(res);
            *res = *o;
            rc = 0;
            best = k;
        } else {
            npu_step_res_free(o);
        }
    }
    free(o);
    conv_ok_free(&ok);
    return rc;
}

int npu_step_res_plan_ex(const npu_cfg_t *cfg, const npu_step_plan_t *p, int res_banks, uint64_t cap,
                         int overlap, npu_step_res_t *res)
{
    return npu_step_res_plan_by(cfg, p, res_banks, cap, overlap, NULL, NULL, res);
}

int npu_step_res_append(const npu_step_plan_t *p, const npu_step_res_t *res, int i, npu_prog_t *prog)
{
    int j = npu_step_res_step(p, i);
    for (int x = res->x_at[j]; x < res->x_at[j + 1]; x++) {
        const npu_res_xfer_t *X = &res->x[x];
        npu_insn_t in;
        if (!X->app)
            continue;
        if (npu_step_res_xfer_insn(p, res, X->store, X->t, X->spm, p->t[X->t].dram, X->tag, &in))
            return -1;
        if (npu_prog_push(prog, &in))
            return -1;
    }
    return 0;
}

void npu_step_res_free(npu_step_res_t *res)
{
    npu_sched_free(&res->r);
    free(res->ss);
    free(res->k);
    free(res->stay);
    free(res->x);
    free(res->x_at);
    free(res->tags);
    free(res->y_ok);
    free(res->x_ok);
    free(res->xt_ok);
    memset(res, 0, sizeof *res);
}
