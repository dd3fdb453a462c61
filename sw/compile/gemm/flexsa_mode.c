/* flexsa_mode.c - FlexSA mode selection, sub-wave row split and the wave-plan model; see
 * flexsa_mode.h. */
#include "compile/gemm/flexsa_mode.h"
#include "hw/isa.h"

#include <string.h>

npu_mode_t npu_flexsa_mode(int S, int n, int k)
{
    int wide = n > S, tall = k > S;
    if (wide && tall)
        return NPU_MODE_FW;
    if (wide)
        return NPU_MODE_HSW;
    if (tall)
        return NPU_MODE_VSW;
    return NPU_MODE_ISW;
}

int npu_flexsa_parts(npu_mode_t mode)
{
    switch (mode) {
    case NPU_MODE_FW: return 1;
    case NPU_MODE_HSW:
    case NPU_MODE_VSW: return 2;
    case NPU_MODE_ISW: return 4;
    default: return 0;
    }
}

/* The largest difference over the cores of the entry offsets (npu_flexsa_mode_gap). */
int npu_flexsa_mode_gap(npu_mode_t from, npu_mode_t to)
{
    static const int off[NPU_NUM_MODES][4] = {
        [NPU_MODE_FW] = {0, 1, 1, 2}, [NPU_MODE_HSW] = {0, 1, 0, 1},
        [NPU_MODE_VSW] = {0, 0, 1, 1}, [NPU_MODE_ISW] = {0, 0, 0, 0}};
    int gap = 0;
    if ((unsigned)from >= NPU_NUM_MODES || (unsigned)to >= NPU_NUM_MODES)
        return 0;
    for (int c = 0; c < 4; c++)
        gap = off[from][c] - off[to][c] > gap ? off[from][c] - off[to][c] : gap;
    return gap;
}

int npu_flexsa_split(npu_mode_t mode, int m, npu_flexsa_split_t *out)
{
    /* The split is the hardware's (npu_wave_sets, which the emitter and the RTL follow); this
     * view only adds the cycle count. */
    npu_flexsa_split_t s;
    npu_wave_sets_t ws;
    int i;
    if (m < 1 || npu_flexsa_parts(mode) == 0)
        return -1;
    memset(&s, 0, sizeof s);
    s.count = npu_wave_sets((unsigned)mode, (unsigned)m, &ws);
    for (i = 0; i < s.count; i++) {
        s.row0[i] = (int)ws.start[i];
        s.rows[i] = (int)ws.len[i];
        s.cores[i] = ws.cores[i];
        if (s.rows[i] > s.cycles)
            s.cycles = s.rows[i];
    }
    if (out)
        *out = s;
    return s.cycles;
}

const char *npu_flexsa_policy_name(npu_flexsa_policy_t p)
{
    switch (p) {
    case NPU_POLICY_1G1C: return "1G1C";
    case NPU_POLICY_1G4C: return "1G4C";
    case NPU_POLICY_FLEXSA: return "FlexSA";
    default: return "?";
    }
}

const char *npu_flexsa_mode_name(npu_mode_t m)
{
#define NPU_X_MODE_NAME(n, v) \
    if (m == NPU_MODE_##n)    \
        return #n;
    NPU_MODES(NPU_X_MODE_NAME)
#undef NPU_X_MODE_NAME
    return "?";
}

int npu_flexsa_default_blk_m(int S, npu_flexsa_policy_t pol)
{
    return pol == NPU_POLICY_1G4C ? 2 * S : 4 * S;
}

static int imin(int a, int b) { return a < b ? a : b; }

long npu_flexsa_plan(int S, int blk_m, npu_flexsa_policy_t pol, int M, int N, int K,
                     npu_flexsa_wave_fn fn, void *ctx, npu_flexsa_stats_t *st)
{
    npu_flexsa_stats_t s;
    npu_flexsa_wave_t w;
    int blk, n0, m0, k0, c;
    long count = 0;
    if (S < 1 || M < 1 || N < 1 || K < 1 || pol < NPU_POLICY_1G1C || pol >= NPU_NUM_POLICIES)
        return -1;
    if (blk_m <= 0)
        blk_m = npu_flexsa_default_blk_m(S, pol);
    blk = pol == NPU_POLICY_1G4C ? S : 2 * S;
    memset(&s, 0, sizeof s);
    s.S = S;
    for (n0 = 0; n0 < N; n0 += blk) {
        for (m0 = 0; m0 < M; m0 += blk_m) {
            for (k0 = 0; k0 < K; k0 += blk) {
                memset(&w, 0, sizeof w);
                w.index = (int)count;
                w.m0 = m0;
                w.n0 = n0;
                w.k0 = k0;
                w.m = imin(blk_m, M - m0);
                w.n = imin(blk, N - n0);
                w.k = imin(blk, K - k0);
                w.first_k = k0 == 0;
                w.last_k = k0 + blk >= K;
                switch (pol) {
                case NPU_POLICY_1G1C:
                    w.mode = NPU_MODE_FW;
                    w.core = -1;
                    w.pes = 4 * S * S;
                    w.cycles = w.m;
                    break;
                case NPU_POLICY_1G4C:
                    w.mode = NPU_MODE_ISW;
                    w.core = (int)(count % 4);
                    w.pes = S * S;
                    w.cycles = w.m;
                    break;
                default:
                    w.mode = npu_flexsa_mode(S, w.n, w.k);
                    w.core = -1;
                    w.pes = 4 * S * S;
                    w.cycles = npu_flexsa_split(w.mode, w.m, NULL);
                    break;
                }
                w.macs = (uint64_t)w.m * (uint64_t)w.n * (uint64_t)w.k;
                w.lbuf_v = (uint64_t)w.k * (uint64_t)w.n;
                w.lbuf_h = (uint64_t)w.m * (uint64_t)w.k;
                if (fn)
                    fn(&w, ctx);
                s.waves++;
                s.waves_mode[w.mode]++;
                s.cycles_mode[w.mode] += (uint64_t)w.cycles;
                s.macs += w.macs;
                s.pe_cycles += (uint64_t)w.pes * (uint64_t)w.cycles;
                if (w.core >= 0)
                    s.core_cycles[w.core] += (uint64_t)w.cycles;
                else
                    s.array_cycles += (uint64_t)w.cycles;
                s.lbuf_v += w.lbuf_v;
                s.lbuf_h += w.lbuf_h;
                count++;
            }
        }
    }
    if (pol == NPU_POLICY_1G4C)
        for (c = 0; c < 4; c++)
            if (s.core_cycles[c] > s.array_cycles)
                s.array_cycles = s.core_cycles[c];
    if (st)
        *st = s;
    return count;
}

void npu_flexsa_stats_add(npu_flexsa_stats_t *dst, const npu_flexsa_stats_t *src)
{
    int i;
    if (!dst->S)
        dst->S = src->S;
    dst->waves += src->waves;
    for (i = 0; i < NPU_NUM_MODES; i++) {
        dst->waves_mode[i] += src->waves_mode[i];
        dst->cycles_mode[i] += src->cycles_mode[i];
    }
    dst->macs += src->macs;
    dst->pe_cycles += src->pe_cycles;
    dst->array_cycles += src->array_cycles;
    for (i = 0; i < 4; i++)
        dst->core_cycles[i] += src->core_cycles[i];
    dst->lbuf_v += src->lbuf_v;
    dst->lbuf_h += src->lbuf_h;
}

double npu_flexsa_util(const npu_flexsa_stats_t *st)
{
    return st->pe_cycles ? (double)st->macs / (double)st->pe_cycles : 0.0;
}

double npu_flexsa_util_rr(const npu_flexsa_stats_t *st)
{
    double pes = 4.0 * st->S * st->S;
    return st->array_cycles ? (double)st->macs / (pes * (double)st->array_cycles) : 0.0;
}

uint64_t npu_flexsa_traffic(const npu_flexsa_stats_t *st) { return st->lbuf_v + st->lbuf_h; }

double npu_flexsa_intercore_waves(const npu_flexsa_stats_t *st)
{
    uint64_t inter = st->waves_mode[NPU_MODE_FW] + st->waves_mode[NPU_MODE_HSW] +
                     st->waves_mode[NPU_MODE_VSW];
    return st->waves ? (double)inter / (double)st->waves : 0.0;
}

double npu_flexsa_intercore_cycles(const npu_flexsa_stats_t *st)
{
    uint64_t inter = st->cycles_mode[NPU_MODE_FW] + st->cycles_mode[NPU_MODE_HSW] +
                     st->cycles_mode[NPU_MODE_VSW];
    uint64_t all = inter + st->cycles_mode[NPU_MODE_ISW];
    return all ? (double)inter / (double)all : 0.0;
}
