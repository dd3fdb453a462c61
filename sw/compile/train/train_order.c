/* train_order.c - tile-op orders of the training backward pass; see train_order.h. */
#include "compile/train/train_order.h"

#include <stdlib.h>
#include <string.h>

static const char *const order_names[NPU_TORD_COUNT] = {"seq",     "interleave", "dxmajor",
                                                        "dwmajor", "auto",       "oracle"};

const char *npu_torder_name(npu_torder_t o)
{
    return (unsigned)o < NPU_TORD_COUNT ? order_names[o] : "?";
}

int npu_torder_parse(const char *s)
{
    for (int i = 0; i < NPU_TORD_COUNT; i++)
        if (s && strcmp(s, order_names[i]) == 0)
            return i;
    return -1;
}

const char *npu_train_grad_name(npu_tgrad_t g)
{
    return g == NPU_TG_FWD ? "fwd" : g == NPU_TG_DX ? "dx" : g == NPU_TG_DW ? "dw" : "?";
}

const char *npu_train_tensor_name(npu_ttensor_t t)
{
    static const char *const n[NPU_TT_COUNT] = {"X", "W", "dY", "dX", "dW", "Y"};
    return (unsigned)t < NPU_TT_COUNT ? n[t] : "?";
}

static int almost_square(long M, long K, long N)
{
    long mx = M, mn = M;
    if (K > mx) mx = K;
    if (N > mx) mx = N;
    if (K < mn) mn = K;
    if (N < mn) mn = N;
    return mn > 0 && mx < 4 * mn; /* max/min < 4, exactly, in integers */
}

npu_torder_t npu_train_alg1(long M, long K, long N)
{
    if (almost_square(M, K, N))
        return NPU_TORD_INTERLEAVE;
    if (K > N && K > M)
        return NPU_TORD_DWMAJOR;
    return NPU_TORD_DXMAJOR;
}

npu_torder_t npu_train_alg1_rule_b(long M, long K, long N)
{
    if (almost_square(M, K, N))
        return NPU_TORD_INTERLEAVE;
    return M > N ? NPU_TORD_DXMAJOR : NPU_TORD_DWMAJOR; /* |dX| = M*K > |dW| = K*N */
}

int npu_train_resolve(npu_torder_t o, long M, long K, long N)
{
    if (o == NPU_TORD_AUTO)
        return (int)npu_train_alg1(M, K, N);
    if ((unsigned)o < NPU_TORD_AUTO)
        return (int)o;
    return -1;
}

static npu_tnest_t nest(int a, int b, int c, int g0, int g1)
{
    npu_tnest_t t;
    t.perm[0] = (uint8_t)a;
    t.perm[1] = (uint8_t)b;
    t.perm[2] = (uint8_t)c;
    t.ngrads = (uint8_t)(g1 < 0 ? 1 : 2);
    t.grads[0] = (uint8_t)g0;
    t.grads[1] = (uint8_t)(g1 < 0 ? g0 : g1);
    return t;
}

int npu_train_sched(npu_torder_t o, unsigned variant, npu_tsched_t *out)
{
    memset(out, 0, sizeof *out);
    npu_tnest_t dx = (variant & 1u) ? nest(NPU_TD_K, NPU_TD_M, NPU_TD_N, NPU_TG_DX, -1)
                                    : nest(NPU_TD_M, NPU_TD_K, NPU_TD_N, NPU_TG_DX, -1);
    npu_tnest_t dw = (variant & 2u) ? nest(NPU_TD_N, NPU_TD_K, NPU_TD_M, NPU_TG_DW, -1)
                                    : nest(NPU_TD_K, NPU_TD_N, NPU_TD_M, NPU_TG_DW, -1);
    switch (o) {
    case NPU_TORD_SEQ:
    case NPU_TORD_INTERLEAVE:
        out->nnests = 2;
        out->zipped = o == NPU_TORD_INTERLEAVE;
        out->nest[0] = dx;
        out->nest[1] = dw;
        return 0;
    case NPU_TORD_DXMAJOR:
        out->nnests = 1;
        out->nest[0] = nest(NPU_TD_M, NPU_TD_K, NPU_TD_N, NPU_TG_DX, NPU_TG_DW);
        return 0;
    case NPU_TORD_DWMAJOR:
        out->nnests = 1;
        out->nest[0] = nest(NPU_TD_K, NPU_TD_N, NPU_TD_M, NPU_TG_DW, NPU_TG_DX);
        return 0;
    default:
        return -1;
    }
}

void npu_train_fwd_sched(unsigned variant, npu_tsched_t *out)
{
    memset(out, 0, sizeof *out);
    out->nnests = 1;
    out->nest[0] = (variant & 1u) ? nest(NPU_TD_N, NPU_TD_M, NPU_TD_K, NPU_TG_FWD, -1)
                                  : nest(NPU_TD_M, NPU_TD_N, NPU_TD_K, NPU_TG_FWD, -1);
}

size_t npu_train_sched_count(const npu_tsched_t *s, int Mt, int Nt, int Kt)
{
    size_t pts = (size_t)Mt * (size_t)Nt * (size_t)Kt, n = 0;
    for (int i = 0; i < s->nnests; i++)
        n += pts * s->nest[i].ngrads;
    return n;
}

void npu_train_op_tensors(npu_tgrad_t g, npu_ttensor_t *out, npu_ttensor_t *a, npu_ttensor_t *b)
{
    switch (g) {
    case NPU_TG_DX: *out = NPU_TT_DX; *a = NPU_TT_DY; *b = NPU_TT_W; break;
    case NPU_TG_DW: *out = NPU_TT_DW; *a = NPU_TT_X; *b = NPU_TT_DY; break;
    default:        *out = NPU_TT_Y; *a = NPU_TT_X; *b = NPU_TT_W; break;
    }
}

int npu_train_tensor_uses(npu_ttensor_t t, npu_tdim_t d)
{
    switch (t) {
    case NPU_TT_X: case NPU_TT_DX: return d == NPU_TD_M || d == NPU_TD_K;
    case NPU_TT_W: case NPU_TT_DW: return d == NPU_TD_K || d == NPU_TD_N;
    default:                       return d == NPU_TD_M || d == NPU_TD_N;
    }
}

long npu_train_tile_index(npu_ttensor_t t, int m, int n, int k, int Mt, int Nt, int Kt)
{
    (void)Mt;
    switch (t) {
    case NPU_TT_X: case NPU_TT_DX: return (long)m * Kt + k;
    case NPU_TT_W: case NPU_TT_DW: return (long)k * Nt + n;
    default:                       return (long)m * Nt + n;
    }
}

long npu_train_tile_count(npu_ttensor_t t, int Mt, int Nt, int Kt)
{
    switch (t) {
    case NPU_TT_X: case NPU_TT_DX: return (long)Mt * Kt;
    case NPU_TT_W: case NPU_TT_DW: return (long)Kt * Nt;
    default:                       return (long)Mt * Nt;
    }
}

/* Reduction trip count of a gradient (contributions per output tile). */
static int reduction_trips(npu_tgrad_t g, int Mt, int Nt, int Kt)
{
    return g == NPU_TG_DX ? Nt : g == NPU_TG_DW ? Mt : Kt;
}

long npu_train_order_ex(const npu_tsched_t *s, int Mt, int Nt, int Kt, npu_tileop_t *ops,
                        size_t max)
{
    if (!s || Mt < 1 || Nt < 1 || Kt < 1 || s->nnests < 1 || s->nnests > 2)
        return -1;
    size_t total = npu_train_sched_count(s, Mt, Nt, Kt);
    if (total > max || !ops)
        return -1;
    size_t pts = (size_t)Mt * Nt * Kt;
    int trips[3] = {Mt, Nt, Kt};
    size_t w = 0;
    /* nest point p -> (m,n,k) by the nest's permutation (inner fastest) */
    size_t npass = s->zipped ? 1 : (size_t)s->nnests;
    for (size_t pass = 0; pass < npass; pass++) {
        for (size_t p = 0; p < pts; p++) {
            int lo = s->zipped ? 0 : (int)pass, hi = s->zipped ? s->nnests : (int)pass + 1;
            for (int ni = lo; ni < hi; ni++) {
                const npu_tnest_t *ne = &s->nest[ni];
                int idx[3];
                size_t r = p;
                for (int l = 2; l >= 0; l--) {
                    int d = ne->perm[l];
                    idx[d] = (int)(r % (size_t)trips[d]);
                    r /= (size_t)trips[d];
                }
                for (int g = 0; g < ne->ngrads; g++) {
                    npu_tileop_t *o = &ops[w++];
                    o->grad = ne->grads[g];
                    o->stream = (uint8_t)ni;
                    o->first = o->last = 0;
                    o->m = idx[NPU_TD_M];
                    o->n = idx[NPU_TD_N];
                    o->k = idx[NPU_TD_K];
                }
            }
        }
    }
    /* first/last by counting contributions per (grad, output tile) */
    long cnt[3];
    cnt[0] = (long)Mt * Nt; /* Y */
    cnt[1] = (long)Mt * Kt; /* dX */
    cnt[2] = (long)Kt * Nt; /* dW */
    int *seen[3];
    for (int g = 0; g < 3; g++) {
        seen[g] = calloc((size_t)cnt[g], sizeof(int));
        if (!seen[g]) {
            for (int j = 0; j < g; j++)
                free(seen[j]);
            return -1;
        }
    }
    for (size_t i = 0; i < w; i++) {
        npu_tileop_t *o = &ops[i];
        npu_ttensor_t out, a, b;
        npu_train_op_tensors((npu_tgrad_t)o->grad, &out, &a, &b);
        long t = npu_train_tile_index(out, o->m, o->n, o->k, Mt, Nt, Kt);
        int c = seen[o->grad][t]++;
        o->first = c == 0;
        o->last = c == reduction_trips((npu_tgrad_t)o->grad, Mt, Nt, Kt) - 1;
    }
    for (int g = 0; g < 3; g++)
        free(seen[g]);
    return (long)w;
}

long npu_train_order(npu_torder_t o, int Mt, int Nt, int Kt, npu_tileop_t *ops, size_t max)
{
    npu_tsched_t s;
    if (npu_train_sched(o, 0, &s) != 0)
        return -1;
    return npu_train_order_ex(&s, Mt, Nt, Kt, ops, max);
}
