/* layer_sets.c - paper-model layer sets, paper-scaled configurations and the model-based
 * Fig. 12 / Fig. 14 reproduction; see layer_sets.h. */
#include "model/layer_sets.h"

#include <stdio.h>
#include <string.h>

int npu_lset_config(const char *name, npu_lset_cfg_t *c)
{
    if (!name || !c)
        return -1;
    memset(c, 0, sizeof *c);
    c->S = 16;
    c->spm_bytes = 512L * 1024;
    c->cores = 1;
    c->acc_bytes = 2; /* brief 3 [INTERP]: one 2-byte element size (bf16) for the paper */
    if (strcmp(name, "edge") == 0) {
        c->dram_bw = 11;
        c->batch = 4;
        c->paper_side = 45;
        c->big = 0;
        c->paper[0] = 0.8;
        c->paper[1] = 23.8;
        c->paper[2] = 29.3;
        c->paper[3] = 25.1; /* oracle order */
    } else if (strcmp(name, "server") == 0 || strcmp(name, "server4") == 0) {
        c->dram_bw = 9;
        c->batch = 8;
        c->paper_side = 128;
        c->big = 1;
        c->paper[0] = 7.4;
        c->paper[1] = 10.9;
        c->paper[2] = 14.5;
        c->paper[3] = 12.4;
        if (name[6] == '4') {
            c->cores = 4;
            c->batch = 32;
            c->paper[0] = c->paper[1] = c->paper[3] = -1;
            c->paper[2] = 23.7;
        }
    } else {
        return -1;
    }
    snprintf(c->name, sizeof c->name, "%s", name);
    return 0;
}

void npu_lset_hw(const npu_lset_cfg_t *c, npu_tmodel_hw_t *hw)
{
    memset(hw, 0, sizeof *hw);
    hw->S = c->S;
    hw->cores = c->cores;
    hw->spm_bytes = c->spm_bytes;
    hw->dram_bw = c->dram_bw;
    hw->in_bytes = 2;
    hw->acc_bytes = c->acc_bytes > 0 ? c->acc_bytes : 4;
}

typedef struct lset {
    npu_lset_layer_t *out;
    int max, n, err;
    double scale;
    const char *model;
} lset_t;

static long scl(long v, double s)
{
    long r = (long)((double)v * s + 0.5);
    return r < 1 ? 1 : r;
}

static void add(lset_t *ls, const char *name, long M, long K, long N, int has_dx, int count)
{
    long m = scl(M, ls->scale), k = scl(K, ls->scale), n = scl(N, ls->scale);
    for (int i = 0; i < ls->n; i++) {
        npu_lset_layer_t *L = &ls->out[i];
        if (strcmp(L->model, ls->model) == 0 && L->shape.M == m && L->shape.K == k &&
            L->shape.N == n && L->shape.has_dx == has_dx) {
            L->count += count;
            return;
        }
    }
    if (ls->n >= ls->max) {
        ls->err = 1;
        return;
    }
    npu_lset_layer_t *L = &ls->out[ls->n++];
    memset(L, 0, sizeof *L);
    snprintf(L->model, sizeof L->model, "%s", ls->model);
    snprintf(L->name, sizeof L->name, "%s", name);
    L->shape.M = m;
    L->shape.K = k;
    L->shape.N = n;
    L->shape.has_dx = has_dx;
    L->count = count;
}

static void conv(lset_t *ls, const char *name, int B, int cin, int cout, int k, int res_out,
                 int has_dx, int count)
{
    add(ls, name, (long)B * res_out * res_out, (long)cin * k * k, cout, has_dx, count);
}

static void resnet50(lset_t *ls, int B)
{
    static const int blocks[4] = {3, 4, 6, 3}, mid[4] = {64, 128, 256, 512};
    char nm[64];
    ls->model = "res";
    conv(ls, "res_conv1", B, 3, 64, 7, 112, 0, 1);
    int in = 64, res = 56;
    for (int s = 0; s < 4; s++) {
        int out = mid[s] * 4, ro = s == 0 ? 56 : res / 2;
        for (int b = 0; b < blocks[s]; b++) {
            int ci = b == 0 ? in : out, ri = b == 0 ? res : ro;
            snprintf(nm, sizeof nm, "res_s%d_b%d_1x1a", s + 2, b);
            conv(ls, nm, B, ci, mid[s], 1, ri, 1, 1);
            snprintf(nm, sizeof nm, "res_s%d_b%d_3x3", s + 2, b);
            conv(ls, nm, B, mid[s], mid[s], 3, ro, 1, 1);
            snprintf(nm, sizeof nm, "res_s%d_b%d_1x1b", s + 2, b);
            conv(ls, nm, B, mid[s], out, 1, ro, 1, 1);
            if (b == 0) {
                snprintf(nm, sizeof nm, "res_s%d_short", s + 2);
                conv(ls, nm, B, ci, out, 1, ro, 1, 1);
            }
        }
        in = out;
        res = ro;
    }
    add(ls, "res_fc", B, 2048, 1000, 1, 1);
}

static void mobilenet(lset_t *ls, int B)
{
    static const int pw[][3] = {{32, 64, 112},   {64, 128, 56},   {128, 128, 56},
                                {128, 256, 28},  {256, 256, 28},  {256, 512, 14},
                                {512, 512, 14},  {512, 512, 14},  {512, 512, 14},
                                {512, 512, 14},  {512, 512, 14},  {512, 1024, 7},
                                {1024, 1024, 7}};
    char nm[64];
    ls->model = "mob";
    conv(ls, "mob_conv1", B, 3, 32, 3, 112, 0, 1);
    for (size_t i = 0; i < sizeof pw / sizeof pw[0]; i++) {
        snprintf(nm, sizeof nm, "mob_pw%d", (int)i + 1);
        conv(ls, nm, B, pw[i][0], pw[i][1], 1, pw[i][2], 1, 1);
    }
    add(ls, "mob_fc", B, 1024, 1000, 1, 1);
}

static void bert(lset_t *ls, int B, int big)
{
    int L = big ? 24 : 2, h = big ? 1024 : 128, T = 128;
    ls->model = "bert";
    long M = (long)B * T;
    add(ls, "bert_qkv", M, h, 3L * h, 1, L);
    add(ls, "bert_attn_out", M, h, h, 1, L);
    add(ls, "bert_ffn1", M, h, 4L * h, 1, L);
    add(ls, "bert_ffn2", M, 4L * h, h, 1, L);
}

static void ncf(lset_t *ls, int B)
{
    ls->model = "ncf";
    add(ls, "ncf_mlp1", B, 256, 256, 1, 1);
    add(ls, "ncf_mlp2", B, 256, 128, 1, 1);
    add(ls, "ncf_mlp3", B, 128, 64, 1, 1);
    add(ls, "ncf_pred", B, 128, 1, 1, 1);
}

static void dlrm(lset_t *ls, int B)
{
    ls->model = "dlrm";
    add(ls, "dlrm_bot1", B, 13, 512, 0, 1);
    add(ls, "dlrm_bot2", B, 512, 256, 1, 1);
    add(ls, "dlrm_bot3", B, 256, 128, 1, 1);
    add(ls, "dlrm_top1", B, 479, 1024, 1, 1);
    add(ls, "dlrm_top2", B, 1024, 1024, 1, 1);
    add(ls, "dlrm_top3", B, 1024, 512, 1, 1);
    add(ls, "dlrm_top4", B, 512, 256, 1, 1);
    add(ls, "dlrm_top5", B, 256, 1, 1, 1);
}

static void yolo_tiny(lset_t *ls, int B)
{
    static const int c[][4] = {{16, 32, 3, 208},   {32, 64, 3, 104},   {64, 128, 3, 52},
                               {128, 256, 3, 26},  {256, 512, 3, 13},  {512, 1024, 3, 13},
                               {1024, 512, 3, 13}, {512, 125, 1, 13}};
    char nm[64];
    ls->model = "yolo";
    conv(ls, "yolo_conv1", B, 3, 16, 3, 416, 0, 1);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        snprintf(nm, sizeof nm, "yolo_conv%d", (int)i + 2);
        conv(ls, nm, B, c[i][0], c[i][1], c[i][2], c[i][3], 1, 1);
    }
}

int npu_lset_layers(const npu_lset_cfg_t *c, npu_lset_layer_t *out, int max)
{
    if (!c || !out || max < 1 || c->paper_side < 1)
        return -1;
    lset_t ls;
    memset(&ls, 0, sizeof ls);
    ls.out = out;
    ls.max = max;
    ls.scale = (double)(2 * c->S) / c->paper_side;
    resnet50(&ls, c->batch);
    mobilenet(&ls, c->batch);
    bert(&ls, c->batch, c->big);
    ncf(&ls, c->batch);
    dlrm(&ls, c->batch);
    yolo_tiny(&ls, c->batch);
    return ls.err ? -1 : ls.n;
}

/* A first layer: the method does not apply, every step is the baseline. */
static void first_layer_row(npu_lset_row_t *r)
{
    r->base_canon = r->cyc[NPU_LSET_BASE];
    for (int s = 1; s < NPU_LSET_NSTEPS; s++)
        r->cyc[s] = r->cyc[NPU_LSET_BASE];
    for (int p = 0; p < 4; p++) {
        r->part_cyc[p] = r->cyc[NPU_LSET_BASE];
        r->part_P[p] = 1;
    }
    r->oracle_order = NPU_ORDER_SEQ;
    r->bytes_alg1 = r->bytes_base;
    r->dy_alg1 = r->dy_base;
}

/* The sequential baseline (best and canonical loop orders); o ends with the forward time. */
static int eval_base(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, npu_tmodel_opts_t *o,
                     npu_lset_row_t *r)
{
    npu_tmodel_result_t res, rc;
    npu_tmodel_opts_t oc;
    memset(o, 0, sizeof *o);
    o->order = NPU_ORDER_SEQ;
    o->part = hw->cores > 1 ? NPU_PART_M : NPU_PART_NONE;
    o->P = hw->cores;
    if (npu_tmodel_layer_eval(hw, L, o, &res) != 0)
        return -1;
    r->cyc[NPU_LSET_BASE] = res.cycles;
    oc = *o;
    oc.canonical = 1;
    oc.fwd_cycles = res.fwd_cycles;
    if (npu_tmodel_layer_eval(hw, L, &oc, &rc) != 0)
        return -1;
    r->base_canon = rc.cycles;
    r->bytes_base = res.dram_bytes;
    r->dy_base = res.dy_loads;
    r->dy_comp = res.dy_compulsory;
    o->fwd_cycles = res.fwd_cycles;
    return 0;
}

/* Interleaving, Algorithm 1's order and the oracle's. */
static int eval_orders(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, npu_tmodel_opts_t *o,
                       npu_lset_row_t *r)
{
    static const npu_order_t ord[3] = {NPU_ORDER_INTERLEAVE, NPU_ORDER_AUTO, NPU_ORDER_ORACLE};
    npu_tmodel_result_t res;
    for (int i = 0; i < 3; i++) {
        o->order = ord[i];
        if (npu_tmodel_layer_eval(hw, L, o, &res) != 0)
            return -1;
        r->cyc[NPU_LSET_INTERLEAVE + i] = res.cycles;
        if (ord[i] == NPU_ORDER_AUTO) {
            r->bytes_alg1 = res.dram_bytes;
            r->dy_alg1 = res.dy_loads;
        }
        if (ord[i] == NPU_ORDER_ORACLE)
            r->oracle_order = res.order;
    }
    return 0;
}

/* Partitions under Algorithm 1's order: none, and m/n/k at their best P; the fastest is the
 * KNN label. */
static int eval_partitions(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L, npu_tmodel_opts_t *o,
                           npu_lset_row_t *r)
{
    static const int Ps[2] = {2, 4};
    int nP = hw->cores > 1 ? 1 : 2, lab = hw->cores > 1 ? NPU_PART_M : NPU_PART_NONE;
    npu_tmodel_result_t res;
    o->order = NPU_ORDER_AUTO;
    r->part_P[NPU_PART_NONE] = 1;
    r->part_cyc[NPU_PART_NONE] = hw->cores > 1 ? -1 : r->cyc[NPU_LSET_ALG1];
    for (int sc = NPU_PART_M; sc <= NPU_PART_K; sc++) {
        r->part_cyc[sc] = -1;
        for (int i = 0; i < nP; i++) {
            o->part = (npu_part_t)sc;
            o->P = hw->cores > 1 ? hw->cores : Ps[i];
            if (npu_tmodel_layer_eval(hw, L, o, &res) != 0)
                return -1;
            if (r->part_cyc[sc] < 0 || res.cycles < r->part_cyc[sc]) {
                r->part_cyc[sc] = res.cycles;
                r->part_P[sc] = o->P;
            }
        }
    }
    for (int sc = lab + 1; sc <= NPU_PART_K; sc++)
        if (r->part_cyc[sc] < r->part_cyc[lab])
            lab = sc;
    r->label = lab;
    r->cyc[NPU_LSET_PART] = r->part_cyc[lab];
    return 0;
}

static int eval_row(const npu_tmodel_hw_t *hw, npu_lset_row_t *r)
{
    const npu_train_shape_t *L = &r->L.shape;
    npu_tmodel_opts_t o;
    if (eval_base(hw, L, &o, r) != 0)
        return -1;
    r->alg1_order = npu_order_alg1(L->M, L->K, L->N);
    r->rule_b_order = npu_order_alg1_rule_b(L->M, L->K, L->N);
    r->label = hw->cores > 1 ? NPU_PART_M : NPU_PART_NONE;
    r->knn_pred = -1;
    if (!L->has_dx) {
        first_layer_row(r);
        return 0;
    }
    if (eval_orders(hw, L, &o, r) != 0)
        return -1;
    return eval_partitions(hw, L, &o, r);
}

int npu_lset_bench(const npu_lset_cfg_t *c, npu_lset_row_t *rows, int max, npu_lset_bench_t *b)
{
    if (!c || !b)
        return -1;
    memset(b, 0, sizeof *b);
    npu_lset_layer_t L[NPU_LSET_MAX];
    int n = npu_lset_layers(c, L, NPU_LSET_MAX);
    if (n < 0)
        return -1;
    npu_lset_row_t local[NPU_LSET_MAX];
    npu_lset_row_t *R = rows && max >= n ? rows : local;
    npu_tmodel_hw_t hw;
    npu_lset_hw(c, &hw);
    for (int i = 0; i < n; i++) {
        memset(&R[i], 0, sizeof R[i]);
        R[i].L = L[i];
        if (eval_row(&hw, &R[i]) != 0)
            return -1;
    }
    b->nrows = n;
    /* KNN: labels of the layers with dX; leave-one-out predictions (k = 1) for the bench, and
     * the accuracy over 1000 random 80/20 splits for k = 1, 3, 5 */
    npu_knn_sample_t S[NPU_LSET_MAX];
    int idx[NPU_LSET_MAX], pred[NPU_LSET_MAX], ns = 0;
    for (int i = 0; i < n; i++)
        if (R[i].L.shape.has_dx) {
            npu_knn_features(R[i].L.shape.M, R[i].L.shape.K, R[i].L.shape.N, S[ns].f);
            S[ns].label = R[i].label;
            idx[ns++] = i;
        }
    if (ns >= 2 && npu_knn_loo(S, ns, 1, pred) == 0) {
        for (int j = 0; j < ns; j++) {
            npu_lset_row_t *r = &R[idx[j]];
            r->knn_pred = pred[j];
            r->cyc[NPU_LSET_PART_KNN] =
                pred[j] >= NPU_PART_NONE && pred[j] <= NPU_PART_K && r->part_cyc[pred[j]] > 0
                    ? r->part_cyc[pred[j]]
                    : r->cyc[NPU_LSET_ALG1];
        }
        static const int ks[3] = {1, 3, 5};
        for (int i = 0; i < 3; i++)
            b->knn_acc[i] = npu_knn_accuracy(S, ns, ks[i], 1000, 0.8, 0x5eed0000ull + (uint64_t)ks[i]);
    }
    for (int i = 0; i < n; i++)
        if (!R[i].L.shape.has_dx)
            R[i].cyc[NPU_LSET_PART_KNN] = R[i].cyc[NPU_LSET_BASE];
    /* per-model reductions of the summed cycles, then the mean over models */
    double sum[NPU_LSET_MAX_MODELS][NPU_LSET_NSTEPS], canon[NPU_LSET_MAX_MODELS];
    memset(sum, 0, sizeof sum);
    memset(canon, 0, sizeof canon);
    for (int i = 0; i < n; i++) {
        int m;
        for (m = 0; m < b->nmodels; m++)
            if (strcmp(b->model[m], R[i].L.model) == 0)
                break;
        if (m == b->nmodels) {
            if (b->nmodels >= NPU_LSET_MAX_MODELS)
                return -1;
            memcpy(b->model[b->nmodels++], R[i].L.model, sizeof b->model[0]);
        }
        for (int s = 0; s < NPU_LSET_NSTEPS; s++)
            sum[m][s] += R[i].cyc[s] * R[i].L.count;
        canon[m] += R[i].base_canon * R[i].L.count;
        if (R[i].L.shape.has_dx) {
            b->alg1_vs_oracle += R[i].alg1_order == R[i].oracle_order;
            b->alg1_vs_rule_b += R[i].alg1_order != R[i].rule_b_order;
        }
    }
    for (int m = 0; m < b->nmodels; m++)
        for (int s = 0; s < NPU_LSET_NSTEPS; s++) {
            b->red_model[m][s] = 100.0 * (1.0 - sum[m][s] / sum[m][NPU_LSET_BASE]);
            b->red[s] += b->red_model[m][s] / b->nmodels;
            b->red_canon[s] += 100.0 * (1.0 - sum[m][s] / canon[m]) / b->nmodels;
        }
    return 0;
}
