/* conv_slice.c - the convolution emitter's candidates under the slicing stage's cost; see
 * conv_slice.h. */
#include "compile/conv/conv_slice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_split.h"
#include "compile/conv/conv_unit.h"
#include "compile/slice/slice.h"
#include "prog/prog_expect.h"

void npu_conv_dram_layout(const npu_conv_plan_t *p, unsigned align, npu_conv_addrs_t *a, uint64_t *end)
{
    static const unsigned tags[3][3] = {{NPU_TAG_X, NPU_TAG_W, NPU_TAG_Y},
                                        {NPU_TAG_W, NPU_TAG_DY, NPU_TAG_DX},
                                        {NPU_TAG_X, NPU_TAG_DY, NPU_TAG_DW}};
    const unsigned *t = tags[p->kernel];
    uint64_t at = 0, al = align ? align : 1;
    memset(a, 0, sizeof *a); /* the tensors the kernel does not use stay at 0 */
    for (int i = 0; i < 3; i++) {
        uint32_t base = (uint32_t)at;
        if (i == 2)
            a->out = base;
        else if (t[i] == NPU_TAG_X)
            a->x = base;
        else if (t[i] == NPU_TAG_W)
            a->w = base;
        else
            a->dy = base;
        at += (npu_conv_tensor_bytes(p, t[i]) + al - 1) / al * al;
    }
    if (end)
        *end = at;
}

/* The walk of one program: the constants of both costs, the DMA rule, the pipes, the totals. */
typedef struct walk {
    npu_slice_cost_t k[2];
    uint64_t B, DB, mb; /* SPM word bytes, DRAM beat bytes, the longest burst in beats */
    npu_slice_pipe_t pipe[2];
    npu_conv_cand_t *c;
} walk_t;

/* One LOAD or STORE: its bursts by the DMA rule, added to the totals; cost and bus time per mode. */
static void xfer(walk_t *w, const npu_fields_t *f, int store, uint64_t *cost, uint64_t *bus)
{
    npu_dma_count_t d = npu_dma_bursts_wb(w->B, w->DB, w->mb, f);
    npu_bursts_t b = {d.bursts, d.beats, (uint64_t)f->rows * f->row_bytes, 0, 1, 0};
    if (!f->transpose) /* one SPM word per cycle, each row starting one */
        b.words = (uint64_t)f->rows * ((f->row_bytes + w->B - 1) / w->B);
    for (int m = 0; m < 2; m++) {
        cost[m] += npu_slice_xfer_cost(&w->k[m], &b, (unsigned)w->DB, store);
        bus[m] += npu_slice_xfer_bus(&w->k[m], &b, (unsigned)w->DB);
    }
    if (store) { /* DRAM bytes as the counters see them: whole beats (conv_plan's plan_rd / plan_wr) */
        w->c->wr_bytes += d.beats * w->DB;
        w->c->wr_bursts += d.bursts;
        w->c->wr_tag[f->tag % NPU_NUM_TAGS] += d.beats * w->DB;
    } else {
        w->c->rd_bytes += d.beats * w->DB;
        w->c->rd_bursts += d.bursts;
        w->c->rd_tag[f->tag % NPU_NUM_TAGS] += d.beats * w->DB;
    }
    w->c->xfers++;
}

/* A stationary tile's waves (those after one LDW) of r injection slots in all take
 * max(r, (r + wave) / 2): the next LDW waits for the bank turnaround (slice_cost.h). */
static uint64_t tile_cost(const walk_t *w, uint64_t slots)
{
    uint64_t r = slots << NPU_SLICE_Q, turn = (r + w->k[0].wave) / 2;
    return slots ? (r > turn ? r : turn) : 0;
}

/* The compute of a group: its tiles' waves (a WAVE's slots: its first row set, npu_wave_sets_f)
 * and its DRAINs (drain_fixed + rows x drain_row); the same constants in both modes. */
static uint64_t exec_cost(const walk_t *w, const npu_fields_t *f, uint64_t *slots)
{
    npu_wave_sets_t ws;
    uint64_t e = 0;
    if (f->op == NPU_OP_LDW) { /* a new tile: the previous one's waves are complete */
        e = tile_cost(w, *slots);
        *slots = 0;
    } else if (f->op == NPU_OP_DRAIN) {
        e = w->k[0].drain_fixed + (uint64_t)f->rows * w->k[0].drain_row;
    } else if (f->op == NPU_OP_WAVE && npu_wave_sets_f(f, &ws) > 0) {
        *slots += ws.len[0];
    }
    return e;
}

/* The loads (cost L, bus time Lb per mode), compute E and stores (cost St) of instructions
 * in[0..n); *slots carries the open tile's wave slots. A FILL takes a cycle per SPM word it zeroes
 * (docs/memory.md: one word per cycle on the LOAD engine's write port) and no bus time. */
typedef struct part { uint64_t L[2], Lb[2], St[2], Sb[2], E; } part_t;

static void scan(walk_t *w, const npu_prog_t *g, size_t i0, size_t i1, part_t *pt, uint64_t *slots)
{
    for (size_t j = i0; j < i1 && j < g->n; j++) {
        npu_fields_t f;
        if (npu_decode(&g->insn[j], &f) != 0)
            continue;
        if (f.op == NPU_OP_LOAD) {
            xfer(w, &f, 0, pt->L, pt->Lb);
        } else if (f.op == NPU_OP_STORE) {
            xfer(w, &f, 1, pt->St, pt->Sb);
        } else if (f.op == NPU_OP_FILL) {
            uint64_t chunks = npu_dma_chunks(w->B, (unsigned)(w->DB / w->B), &f);
            pt->L[0] += chunks << NPU_SLICE_Q;
            pt->L[1] += chunks << NPU_SLICE_Q;
        } else {
            pt->E += exec_cost(w, &f, slots);
        }
    }
}

static void step(walk_t *w, const part_t *pt)
{
    w->c->compute += pt->E;
    for (int m = 0; m < 2; m++)
        npu_slice_pipe_step(&w->pipe[m], pt->L[m], pt->Lb[m], pt->E, pt->St[m]);
}

/* The emitter's hook: unit un's groups (conv_unit.h) as one step of both pipes. The first unit
 * whose input comes in two parts (L, then L2 popped at C's c_split) is two steps: L with the
 * waves before c_split, then L2 with the rest (conv_emit.h). */
static void unit_step(npu_cx_t *x, const npu_conv_unit_t *un, npu_cx_unit_t *up, void *ctx)
{
    walk_t *w = ctx;
    part_t a;
    uint64_t slots = 0;
    size_t cs = up->L2.n && up->c_split > 1 && !up->FO.n ? up->c_split - 1 : 0;
    (void)x;
    (void)un;
    memset(&a, 0, sizeof a);
    scan(w, &up->L, 0, up->L.n, &a, &slots);
    if (cs) {
        scan(w, &up->C, 0, cs, &a, &slots);
        step(w, &a);
        memset(&a, 0, sizeof a);
    }
    scan(w, &up->L2, 0, up->L2.n, &a, &slots);
    scan(w, &up->FO, 0, up->FO.n, &a, &slots);
    scan(w, &up->C, cs, up->C.n, &a, &slots);
    scan(w, &up->D, 0, up->D.n, &a, &slots);
    scan(w, &up->S, 0, up->S.n, &a, &slots);
    a.E += tile_cost(w, slots); /* the unit's last tile */
    step(w, &a);
}

int npu_conv_slice_cost(const npu_cfg_t *cfg, const npu_conv_plan_t *p, const npu_conv_addrs_t *a,
                        npu_conv_time_fn time, npu_conv_cand_t *c, char *msg, size_t n)
{
    walk_t w;
    npu_prog_t prog;
    npu_conv_plan_opts_t keep = c->opts;
    int rc;
    memset(&w, 0, sizeof w);
    memset(c, 0, sizeof *c);
    c->opts = keep;
    c->R = p->R;
    c->nbands = p->nbands;
    c->G = p->G;
    c->ngroups = p->ngroups;
    c->units = p->units;
    c->passes = p->kernel == NPU_CONV_DW ? p->dw_passes : 1;
    w.k[NPU_SLICE_BURST] = npu_slice_cost_default(cfg, NPU_SLICE_BURST);
    w.k[NPU_SLICE_NOBURST] = npu_slice_cost_default(cfg, NPU_SLICE_NOBURST);
    for (int m = 0; m < 2; m++)
        npu_slice_pipe_init(&w.pipe[m], &w.k[m]);
    w.B = (uint64_t)npu_cfg_word(cfg);
    w.DB = (uint64_t)npu_cfg_beat(cfg);
    w.mb = cfg->max_burst_beats > 0 ? (uint64_t)cfg->max_burst_beats : 1;
    w.c = c;
    npu_prog_init(&prog);
    rc = npu_cx_emit(cfg, p, a, unit_step, &w, &prog, msg, n);
    for (int m = 0; m < 2; m++)
        c->cycles[m] = npu_slice_pipe_end(&w.pipe[m]);
    for (int m = 0; m < 2 && rc == 0 && time; m++) { /* the whole program's time, Q16 like the walk */
        uint64_t cyc;
        rc = time(cfg, &w.k[m], prog.insn, prog.n, &cyc, msg, n);
        c->cycles[m] = cyc << NPU_SLICE_Q;
    }
    npu_prog_free(&prog);
    return rc;
}

int npu_conv_cand_better(const npu_conv_cand_t *a, const npu_conv_cand_t *b, int mode)
{
    if (a->cycles[mode] != b->cycles[mode])
        return a->cycles[mode] < b->cycles[mode];
    return a->rd_bytes + a->wr_bytes < b->rd_bytes + b->wr_bytes;
}

void npu_conv_slicing_free(npu_conv_slicing_t *r)
{
    free(r->cand);
    r->cand = NULL;
    r->n = r->cap = 0;
}

static int fail(char *msg, size_t n, const char *why)
{
    if (n)
        snprintf(msg, n, "%s", why);
    return -1;
}

/* Split sp's cost at addresses a (fills every field of *c but opts): each part walked at its own
 * addresses (npu_conv_slice_cost), the parts' bytes, bursts and compute summed and their walks
 * end to end (a barrier between parts); with a timing model, the split's whole program timed
 * instead. The shape fields are part 0's; units and parts the split's. 0, or -1 with the reason. */
static int split_cost(const npu_cfg_t *cfg, const npu_conv_split_t *sp, const npu_conv_addrs_t *a,
                      npu_conv_time_fn time, npu_conv_cand_t *c, char *msg, size_t n)
{
    npu_conv_cand_t pc, sum;
    npu_prog_t prog;
    int rc = 0;
    if (sp->parts == 1) /* the layer's own plan: its program as npu_conv_slice_cost emits it */
        rc = npu_conv_slice_cost(cfg, &sp->part[0], a, time, c, msg, n);
    for (int i = 0; i < sp->parts && sp->parts > 1 && rc == 0; i++) {
        npu_conv_addrs_t ai = npu_conv_split_addrs(sp, i, a);
        pc.opts = c->opts;
        if ((rc = npu_conv_slice_cost(cfg, &sp->part[i], &ai, NULL, &pc, msg, n)) != 0)
            break;
        if (i == 0) {
            sum = pc;
            continue;
        }
        for (int m = 0; m < 2; m++)
            sum.cycles[m] += pc.cycles[m];
        sum.compute += pc.compute, sum.units += pc.units, sum.xfers += pc.xfers;
        sum.rd_bytes += pc.rd_bytes, sum.wr_bytes += pc.wr_bytes;
        sum.rd_bursts += pc.rd_bursts, sum.wr_bursts += pc.wr_bursts;
        for (int t = 0; t < NPU_NUM_TAGS; t++)
            sum.rd_tag[t] += pc.rd_tag[t], sum.wr_tag[t] += pc.wr_tag[t];
    }
    if (sp->parts > 1 && rc == 0) {
        *c = sum;
        npu_prog_init(&prog);
        rc = time ? npu_conv_split_emit(cfg, sp, a, &prog, msg, n) : 0;
        for (int m = 0; m < 2 && rc == 0 && time; m++) {
            npu_slice_cost_t k = npu_slice_cost_default(cfg, m);
            uint64_t cyc;
            rc = time(cfg, &k, prog.insn, prog.n, &cyc, msg, n);
            c->cycles[m] = cyc << NPU_SLICE_Q;
        }
        npu_prog_free(&prog);
    }
    c->nf = sp->nf, c->nc = sp->nc, c->nw = sp->nw, c->parts = sp->parts;
    c->rows = sp->part[0].rows, c->gmax = sp->part[0].nblk;
    return rc;
}

static int same_shape(const npu_conv_cand_t *a, const npu_conv_split_t *sp, int units)
{
    const npu_conv_plan_t *p = &sp->part[0];
    return a->nf == sp->nf && a->nc == sp->nc && a->nw == sp->nw && a->R == p->R && a->nbands == p->nbands &&
           a->G == p->G && a->ngroups == p->ngroups && a->units == units;
}

/* The candidate of options o: its split appended unless one of the same shape is there; its index,
 * -1 with the reason, or -2 when o does not plan. */
static int add_cand(const npu_cfg_t *cfg, npu_conv_slicing_t *r, const npu_conv_t *l, int kernel, int dataflow,
                    const npu_conv_plan_opts_t *o, const npu_conv_addrs_t *a, npu_conv_time_fn time, char *msg,
                    size_t n)
{
    npu_conv_split_t sp;
    char why[300];
    int i, rc = 0;
    if (npu_conv_split(cfg, l, kernel, dataflow, o, &sp, why, sizeof why) != 0) {
        fail(msg, n, why);
        return -2;
    }
    for (i = 0; i < r->n && !same_shape(&r->cand[i], &sp, sp.units); i++)
        ;
    if (i == r->n) {
        if (r->n == r->cap) {
            int cap = r->cap ? 2 * r->cap : 64;
            npu_conv_cand_t *m = realloc(r->cand, (size_t)cap * sizeof *m);
            if (!m) {
                npu_conv_split_free(&sp);
                return fail(msg, n, "out of memory");
            }
            r->cand = m, r->cap = cap;
        }
        memset(&r->cand[i], 0, sizeof r->cand[i]);
        r->cand[i].opts = *o;
        rc = split_cost(cfg, &sp, a, time, &r->cand[i], msg, n);
        r->n += rc == 0;
    }
    npu_conv_split_free(&sp);
    return rc == 0 ? i : -1;
}

/* Stage B: every (G, R) on the split of candidate `base` (its split options kept), G and R from
 * the largest down, bounded by its part 0's blocks and rows; each distinct plan costed. */
static int bands_and_groups(const npu_cfg_t *cfg, npu_conv_slicing_t *r, const npu_conv_t *l, int kernel,
                            int dataflow, int base, const npu_conv_addrs_t *a, npu_conv_time_fn time, char *msg,
                            size_t n)
{
    npu_conv_plan_opts_t o0 = r->cand[base].opts;
    int gmax = kernel == NPU_CONV_DW ? 1 : r->cand[base].gmax, rows = r->cand[base].rows;
    for (int G = gmax; G >= 1; G--)
        for (int R = rows; R >= 1; R--) {
            npu_conv_plan_opts_t o = o0;
            if ((rows + R - 1) / R == (rows + R) / (R + 1) && R < rows)
                continue; /* the same bands as R + 1 (balanced heights) */
            o.max_band_rows = R;
            o.max_blocks = kernel == NPU_CONV_DW ? 0 : G;
            if (add_cand(cfg, r, l, kernel, dataflow, &o, a, time, msg, n) == -1)
                return -1;
        }
    return 0;
}

/* Stage A: every split (filters and channels per range: npu_slice_tile_opts of F and C in 2S
 * blocks, largest first; fwd and dX columns per range for 1 .. NW_MAX ranges, dW's only where the
 * heuristic split needed them: zeropad dW whose dY band does not fit whole, each range adding the
 * whole dW's partial sums) of at most PARTS_MAX parts, its parts planned by conv_plan's own bands
 * and groups. */
#define NW_MAX 4
#define PARTS_MAX 64
#define SPLIT_OPTS 64
static int splits(const npu_cfg_t *cfg, npu_conv_slicing_t *r, const npu_conv_t *l, int kernel, int dataflow,
                  const npu_conv_plan_t *w, const npu_conv_addrs_t *a, npu_conv_time_fn time, char *msg, size_t n)
{
    int64_t fo[SPLIT_OPTS], co[SPLIT_OPTS];
    int nfo = l->depthwise ? 1 : npu_slice_tile_opts(l->F, w->L, fo, SPLIT_OPTS);
    int nco = npu_slice_tile_opts(l->C, w->L, co, SPLIT_OPTS);
    int ncols = kernel == NPU_CONV_DX ? w->c.W : w->OW, prev = 0;
    int nw_max = kernel != NPU_CONV_DW || r->cand[r->heuristic].nw > 1 ? NW_MAX : 1;
    nfo = nfo < SPLIT_OPTS ? nfo : SPLIT_OPTS;
    nco = nco < SPLIT_OPTS ? nco : SPLIT_OPTS;
    for (int nw = 1; nw <= nw_max && nw <= ncols; nw++) {
        int wseg = (ncols + nw - 1) / nw;
        if (wseg == prev)
            continue;
        prev = wseg;
        for (int i = 0; i < nfo; i++)
            for (int j = 0; j < nco; j++) {
                npu_conv_plan_opts_t o = {0};
                int parts = (l->depthwise ? 1 : (int)((l->F + fo[i] - 1) / fo[i])) *
                            (int)((l->C + co[j] - 1) / co[j]) * ((ncols + wseg - 1) / wseg);
                if (parts > PARTS_MAX)
                    continue;
                o.split_f = l->depthwise ? 0 : (int)fo[i];
                o.split_c = (int)co[j];
                o.split_w = wseg;
                if (add_cand(cfg, r, l, kernel, dataflow, &o, a, time, msg, n) == -1)
                    return -1;
            }
    }
    return 0;
}

/* The (G, R) options bands_and_groups tries on candidate c: its distinct band counts x blocks. */
static int band_opts(const npu_conv_cand_t *c, int kernel)
{
    int k = 0;
    for (int R = c->rows; R >= 1; R--)
        k += R == c->rows || (c->rows + R - 1) / R != (c->rows + R) / (R + 1);
    return k * (kernel == NPU_CONV_DW ? 1 : c->gmax);
}

/* Stage B on the splits of stage A (candidates [0, ns)): on every one when their (G, R) options
 * number at most PLANS_FULL in all, else on the SPLITS_TOP cheapest under each cost. */
#define PLANS_FULL 512
#define SPLITS_TOP 3
static int stage_b(const npu_cfg_t *cfg, npu_conv_slicing_t *r, const npu_conv_t *l, int kernel, int dataflow,
                   const npu_conv_addrs_t *a, npu_conv_time_fn time, char *msg, size_t n)
{
    int ns = r->n, total = 0, rc = 0;
    char *pick = calloc((size_t)ns, 1);
    if (!pick)
        return fail(msg, n, "out of memory");
    for (int i = 0; i < ns; i++)
        total += band_opts(&r->cand[i], kernel);
    for (int m = 0; m < 2; m++)
        for (int t = 0; t < (total <= PLANS_FULL ? ns : SPLITS_TOP); t++) {
            int b = -1; /* the cheapest split not yet taken under cost m */
            for (int i = 0; i < ns; i++)
                if (!(pick[i] & (1 << m)) && (b < 0 || npu_conv_cand_better(&r->cand[i], &r->cand[b], m)))
                    b = i;
            if (b >= 0)
                pick[b] |= (char)(1 << m);
        }
    for (int i = 0; i < ns && rc == 0; i++)
        if (pick[i])
            rc = bands_and_groups(cfg, r, l, kernel, dataflow, i, a, time, msg, n);
    free(pick);
    return rc;
}

static int least(const npu_conv_slicing_t *r, int mode)
{
    int b = 0;
    for (int i = 1; i < r->n; i++)
        if (npu_conv_cand_better(&r->cand[i], &r->cand[b], mode))
            b = i;
    return b;
}

int npu_conv_slice(const npu_cfg_t *cfg, const npu_conv_t *c, int kernel, int dataflow, npu_conv_time_fn time,
                   npu_conv_slicing_t *r, char *msg, size_t n)
{
    npu_conv_plan_t *w = malloc(sizeof *w);
    npu_conv_addrs_t a;
    npu_conv_plan_opts_t none = {0};
    unsigned DB = (unsigned)npu_cfg_beat(cfg); /* tensors from a DRAM beat, as conv_run places them */
    int rc = -1;
    memset(r, 0, sizeof *r);
    if (!w)
        return fail(msg, n, "out of memory");
    if (npu_conv_geometry(cfg, c, kernel, dataflow, NULL, w, msg, n) == 0) {
        npu_conv_dram_layout(w, DB > 16 ? DB : 16, &a, NULL);
        rc = 0;
    }
    if (rc == 0 && (r->heuristic = add_cand(cfg, r, c, kernel, dataflow, &none, &a, time, msg, n)) < 0)
        rc = -1; /* the layer does not plan, split or not: npu_conv_split's reason */
    rc = rc == 0 ? splits(cfg, r, c, kernel, dataflow, w, &a, time, msg, n) : rc;
    rc = rc == 0 ? stage_b(cfg, r, c, kernel, dataflow, &a, time, msg, n) : rc;
    for (int m = 0; m < 2 && rc == 0; m++)
        r->pick[m] = least(r, m);
    free(w);
    if (rc != 0)
        npu_conv_slicing_free(r);
    else if (n)
        msg[0] = '\0';
    return rc;
}
