/* train_order.c - tile-op orders of the training backward pass; see train_order.h. */
#include "compile/train/train_order.h"

#include <stdlib.h>
#include <string.h>

static const char *const order_names[NPU_ORDER_COUNT] = {"seq",     "interleave", "dxmajor",
                                                        "dwmajor", "auto",       "oracle"};

const char *npu_order_name(npu_order_t o)
{
    return (unsigned)o < NPU_ORDER_COUNT ? order_names[o] : "?";
}

int npu_order_parse(const char *s)
{
    for (int i = 0; i < NPU_ORDER_COUNT; i++)
        if (s && strcmp(s, order_names[i]) == 0)
            return i;
    return -1;
}

const char *npu_phase_name(npu_phase_t g)
{
    return g == NPU_PHASE_FWD ? "fwd" : g == NPU_PHASE_DX ? "dx" : g == NPU_PHASE_DW ? "dw" : "?";
}

const char *npu_tensor_name(npu_tensor_t t)
{
    static const char *const n[NPU_TENSOR_COUNT] = {"X", "W", "dY", "dX", "dW", "Y"};
    return (unsigned)t < NPU_TENSOR_COUNT ? n[t] : "?";
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

npu_order_t npu_order_alg1(long M, long K, long N)
{
    if (almost_square(M, K, N))
        return NPU_ORDER_INTERLEAVE;
    if (K > N && K > M)
        return NPU_ORDER_DWMAJOR;
    return NPU_ORDER_DXMAJOR;
}

npu_order_t npu_order_alg1_rule_b(long M, long K, long N)
{
    if (almost_square(M, K, N))
        return NPU_ORDER_INTERLEAVE;
    return M > N ? NPU_ORDER_DXMAJOR : NPU_ORDER_DWMAJOR; /* |dX| = M*K > |dW| = K*N */
}

int npu_order_resolve(npu_order_t o, long M, long K, long N)
{
    if (o == NPU_ORDER_AUTO)
        return (int)npu_order_alg1(M, K, N);
    if ((unsigned)o < NPU_ORDER_AUTO)
        return (int)o;
    return -1;
}

static npu_order_nest_t nest(int a, int b, int c, int g0, int g1)
{
    npu_order_nest_t t;
    t.perm[0] = (uint8_t)a;
    t.perm[1] = (uint8_t)b;
    t.perm[2] = (uint8_t)c;
    t.ngrads = (uint8_t)(g1 < 0 ? 1 : 2);
    t.grads[0] = (uint8_t)g0;
    t.grads[1] = (uint8_t)(g1 < 0 ? g0 : g1);
    return t;
}

int npu_order_schedule(npu_order_t o, unsigned variant, npu_order_sched_t *out)
{
    memset(out, 0, sizeof *out);
    npu_order_nest_t dx = (variant & 1u) ? nest(NPU_DIM_K, NPU_DIM_M, NPU_DIM_N, NPU_PHASE_DX, -1)
                                    : nest(NPU_DIM_M, NPU_DIM_K, NPU_DIM_N, NPU_PHASE_DX, -1);
    npu_order_nest_t dw = (variant & 2u) ? nest(NPU_DIM_N, NPU_DIM_K, NPU_DIM_M, NPU_PHASE_DW, -1)
                                    : nest(NPU_DIM_K, NPU_DIM_N, NPU_DIM_M, NPU_PHASE_DW, -1);
    switch (o) {
    case NPU_ORDER_SEQ:
    case NPU_ORDER_INTERLEAVE:
        out->nnests = 2;
        out->zipped = o == NPU_ORDER_INTERLEAVE;
        out->nest[0] = dx;
        out->nest[1] = dw;
        return 0;
    case NPU_ORDER_DXMAJOR:
        out->nnests = 1;
        out->nest[0] = nest(NPU_DIM_M, NPU_DIM_K, NPU_DIM_N, NPU_PHASE_DX, NPU_PHASE_DW);
        return 0;
    case NPU_ORDER_DWMAJOR:
        out->nnests = 1;
        out->nest[0] = nest(NPU_DIM_K, NPU_DIM_N, NPU_DIM_M, NPU_PHASE_DW, NPU_PHASE_DX);
        return 0;
    default:
        return -1;
    }
}

void npu_order_fwd_schedule(unsigned variant, npu_order_sched_t *out)
{
    memset(out, 0, sizeof *out);
    out->nnests = 1;
    out->nest[0] = (variant & 1u) ? nest(NPU_DIM_N, NPU_DIM_M, NPU_DIM_K, NPU_PHASE_FWD, -1)
                                  : nest(NPU_DIM_M, NPU_DIM_N, NPU_DIM_K, NPU_PHASE_FWD, -1);
}

size_t npu_order_schedule_count(const npu_order_sched_t *s, int Mt, int Nt, int Kt)
{
    size_t pts = (size_t)Mt * (size_t)Nt * (size_t)Kt, n = 0;
    for (int i = 0; i < s->nnests; i++)
        n += pts * s->nest[i].ngrads;
    return n;
}

void npu_order_op_tensors(npu_phase_t g, npu_tensor_t *out, npu_tensor_t *a, npu_tensor_t *b)
{
    switch (g) {
    case NPU_PHASE_DX: *out = NPU_TENSOR_DX; *a = NPU_TENSOR_DY; *b = NPU_TENSOR_W; break;
    case NPU_PHASE_DW: *out = NPU_TENSOR_DW; *a = NPU_TENSOR_X; *b = NPU_TENSOR_DY; break;
    default:        *out = NPU_TENSOR_Y; *a = NPU_TENSOR_X; *b = NPU_TENSOR_W; break;
    }
}

int npu_order_tensor_uses(npu_tensor_t t, npu_dim_t d)
{
    switch (t) {
    case NPU_TENSOR_X: case NPU_TENSOR_DX: return d == NPU_DIM_M || d == NPU_DIM_K;
    case NPU_TENSOR_W: case NPU_TENSOR_DW: return d == NPU_DIM_K || d == NPU_DIM_N;
    default:                       return d == NPU_DIM_M || d == NPU_DIM_N;
    }
}

long npu_order_tile_index(npu_tensor_t t, int m, int n, int k, int Mt, int Nt, int Kt)
{
    (void)Mt;
    switch (t) {
    case NPU_TENSOR_X: case NPU_TENSOR_DX: return (long)m * Kt + k;
    case NPU_TENSOR_W: case NPU_TENSOR_DW: return (long)k * Nt + n;
    default:                       return (long)m * Nt + n;
    }
}

long npu_order_tile_count(npu_tensor_t t, int Mt, int Nt, int Kt)
{
    switch (t) {
    case NPU_TENSOR_X: case NPU_TENSOR_DX: return (long)Mt * Kt;
    case NPU_TENSOR_W: case NPU_TENSOR_DW: return (long)Kt * Nt;
    default:                       return (long)Mt * Nt;
    }
}

/* Reduction trip count of a gradient (contributions per output tile). */
static int reduction_trips(npu_phase_t g, int Mt, int Nt, int Kt)
{
    return g == NPU_PHASE_DX ? Nt : g == NPU_PHASE_DW ? Mt : Kt;
}

long npu_order_build_ex(const npu_order_sched_t *s, int Mt, int Nt, int Kt, npu_order_op_t *ops,
                        size_t max)
{
    if (!s || Mt < 1 || Nt < 1 || Kt < 1 || s->nnests < 1 || s->nnests > 2)
        return -1;
    size_t total = npu_order_schedule_count(s, Mt, Nt, Kt);
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
                const npu_order_nest_t *ne = &s->nest[ni];
                int idx[3];
                size_t r = p;
                for (int l = 2; l >= 0; l--) {
                    int d = ne->perm[l];
                    idx[d] = (int)(r % (size_t)trips[d]);
                    r /= (size_t)trips[d];
                }
                for (int g = 0; g < ne->ngrads; g++) {
                    npu_order_op_t *o = &ops[w++];
                    o->grad = ne->grads[g];
                    o->stream = (uint8_t)ni;
                    o->first = o->last = 0;
                    o->m = idx[NPU_DIM_M];
                    o->n = idx[NPU_DIM_N];
                    o->k = idx[NPU_DIM_K];
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
        npu_order_op_t *o = &ops[i];
        npu_tensor_t out, a, b;
        npu_order_op_tensors((npu_phase_t)o->grad, &out, &a, &b);
        long t = npu_order_tile_index(out, o->m, o->n, o->k, Mt, Nt, Kt);
        int c = seen[o->grad][t]++;
        o->first = c == 0;
        o->last = c == reduction_trips((npu_phase_t)o->grad, Mt, Nt, Kt) - 1;
    }
    for (int g = 0; g < 3; g++)
        free(seen[g]);
    return (long)w;
}

long npu_order_build(npu_order_t o, int Mt, int Nt, int Kt, npu_order_op_t *ops, size_t max)
{
    npu_order_sched_t s;
    if (npu_order_schedule(o, 0, &s) != 0)
        return -1;
    return npu_order_build_ex(&s, Mt, Nt, Kt, ops, max);
}
