/* pruned_layers.c - synthetic pruned ResNet-50 layer set and its FlexSA evaluation; see
 * pruned_layers.h. */
#include "model/pruned_layers.h"

#include <stdio.h>
#include <string.h>

/* Channel groups: 0 stem, 1..4 residual stream of stages 2..5, then 2 per block (in order). */
#define NGROUPS (1 + 4 + 2 * 16)

static const int stage_blocks[4] = {3, 4, 6, 3};

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int conv_out(int h, int k, int s, int p) { return (h + 2 * p - k) / s + 1; }

static int scale_ch(int c, int S)
{
    int v = (int)(((long)c * S + 32) / 64);
    return v < 1 ? 1 : v;
}

static int prune_ch(int c, double keep)
{
    int v = (int)(c * keep + 0.5);
    return v < 1 ? 1 : v > c ? c : v;
}

static void set_layer(npu_conv_layer_t *L, const char *name, int cin, int cout, int k, int stride,
                      int hi)
{
    memset(L, 0, sizeof *L);
    snprintf(L->name, sizeof L->name, "%s", name);
    L->cin = cin;
    L->cout = cout;
    L->kh = L->kw = k;
    L->stride = stride;
    L->pad = k / 2;
    L->hi = L->wi = hi;
    L->ho = L->wo = conv_out(hi, k, stride, L->pad);
    L->need_dgrad = 1;
}

/* Builds the network with the given channel counts per group (ch[g]); returns the count. */
static int build(const int ch[NGROUPS], int S, int in_hw, npu_conv_layer_t *out)
{
    int n = 0, g = 5, st, b, h, in_c;
    char name[32];
    set_layer(&out[n], "conv1", 3, ch[0], 7, 2, in_hw);
    out[n].need_dgrad = 0;
    h = out[n].ho;
    n++;
    h = conv_out(h, 3, 2, 1); /* max pool 3x3 / 2 */
    in_c = ch[0];
    for (st = 0; st < 4; st++) {
        int res = ch[1 + st];
        for (b = 0; b < stage_blocks[st]; b++) {
            int wa = ch[g], wb = ch[g + 1], stride = (b == 0 && st > 0) ? 2 : 1, ho;
            g += 2;
            snprintf(name, sizeof name, "s%d.b%d.a", st + 2, b);
            set_layer(&out[n++], name, in_c, wa, 1, 1, h);
            snprintf(name, sizeof name, "s%d.b%d.b", st + 2, b);
            set_layer(&out[n], name, wa, wb, 3, stride, h);
            ho = out[n++].ho;
            snprintf(name, sizeof name, "s%d.b%d.c", st + 2, b);
            set_layer(&out[n++], name, wb, res, 1, 1, ho);
            if (b == 0) {
                snprintf(name, sizeof name, "s%d.b%d.sc", st + 2, b);
                set_layer(&out[n++], name, in_c, res, 1, stride, h);
            }
            h = ho;
            in_c = res;
        }
    }
    set_layer(&out[n], "fc", in_c, scale_ch(1000, S), 1, 1, 1);
    out[n].pad = 0;
    out[n].ho = out[n].wo = 1;
    n++;
    return n;
}

static void base_channels(int S, int ch[NGROUPS])
{
    int st, b, g = 5;
    ch[0] = scale_ch(64, S);
    for (st = 0; st < 4; st++) {
        ch[1 + st] = scale_ch(256 << st, S);
        for (b = 0; b < stage_blocks[st]; b++) {
            ch[g++] = scale_ch(64 << st, S);
            ch[g++] = scale_ch(64 << st, S);
        }
    }
}

uint64_t npu_conv_layer_macs(const npu_conv_layer_t *L, int batch)
{
    return (uint64_t)batch * (uint64_t)L->ho * (uint64_t)L->wo * (uint64_t)L->cout *
           (uint64_t)L->cin * (uint64_t)L->kh * (uint64_t)L->kw;
}

static uint64_t net_macs(const int ch[NGROUPS], int S, int in_hw)
{
    npu_conv_layer_t L[NPU_RESNET50_LAYERS];
    uint64_t t = 0;
    int i, n = build(ch, S, in_hw, L);
    for (i = 0; i < n; i++)
        t += npu_conv_layer_macs(&L[i], 1);
    return t;
}

static void pruned_channels(const int base[NGROUPS], const double u[NGROUPS], double alpha,
                            int ch[NGROUPS])
{
    int g;
    for (g = 0; g < NGROUPS; g++) {
        double keep = alpha * u[g];
        ch[g] = prune_ch(base[g], keep > 1.0 ? 1.0 : keep);
    }
}

int npu_pruned_resnet50(const npu_prune_cfg_t *cfg, npu_conv_layer_t *out, int max,
                        double *flops_ratio)
{
    int base[NGROUPS], ch[NGROUPS], g, it, in_hw;
    double u[NGROUPS], lo = 0.0, hi = 2.0, alpha;
    uint64_t seed, full, got;
    if (!cfg || !out || cfg->S < 1 || max < NPU_RESNET50_LAYERS)
        return -1;
    in_hw = cfg->in_hw > 0 ? cfg->in_hw : 32;
    base_channels(cfg->S, base);
    seed = cfg->seed ? cfg->seed : 0x9E3779B97F4A7C15ull;
    for (g = 0; g < 8; g++)
        xorshift(&seed); /* decorrelate nearby seeds */
    for (g = 0; g < NGROUPS; g++)
        u[g] = 0.5 + (double)(xorshift(&seed) >> 11) * (1.0 / 9007199254740992.0);
    full = net_macs(base, cfg->S, in_hw);
    if (cfg->flops_target <= 0.0 || cfg->flops_target >= 1.0) {
        memcpy(ch, base, sizeof ch);
    } else {
        /* forward MACs are non-decreasing in alpha; alpha = 2 keeps everything */
        for (it = 0; it < 60; it++) {
            double mid = 0.5 * (lo + hi);
            pruned_channels(base, u, mid, ch);
            if ((double)net_macs(ch, cfg->S, in_hw) < cfg->flops_target * (double)full)
                lo = mid;
            else
                hi = mid;
        }
        /* the closer of the two bracketing channel sets */
        pruned_channels(base, u, lo, ch);
        got = net_macs(ch, cfg->S, in_hw);
        pruned_channels(base, u, hi, ch);
        alpha = hi;
        {
            double dlo = cfg->flops_target * (double)full - (double)got;
            double dhi = (double)net_macs(ch, cfg->S, in_hw) - cfg->flops_target * (double)full;
            if (dlo < dhi)
                alpha = lo;
        }
        pruned_channels(base, u, alpha, ch);
    }
    got = net_macs(ch, cfg->S, in_hw);
    if (flops_ratio)
        *flops_ratio = (double)got / (double)full;
    return build(ch, cfg->S, in_hw, out);
}

int npu_conv_gemms(const npu_conv_layer_t *L, int layer, int batch, npu_gemm_shape_t out[3])
{
    int n = 0, rs = L->kh * L->kw;
    out[n].M = batch * L->ho * L->wo;
    out[n].N = L->cout;
    out[n].K = L->cin * rs;
    out[n].layer = layer;
    out[n++].phase = NPU_PHASE_FWD;
    if (L->need_dgrad) {
        out[n].M = batch * L->hi * L->wi;
        out[n].N = L->cin;
        out[n].K = L->cout * rs;
        out[n].layer = layer;
        out[n++].phase = NPU_PHASE_DX;
    }
    out[n].M = L->cout;
    out[n].N = L->cin * rs;
    out[n].K = batch * L->ho * L->wo;
    out[n].layer = layer;
    out[n++].phase = NPU_PHASE_DW;
    return n;
}

int npu_flexsa_eval(int S, int blk_m, const npu_gemm_shape_t *g, int n, npu_flexsa_eval_t *out)
{
    int i, p;
    if (S < 1 || !g || n < 1 || !out)
        return -1;
    memset(out, 0, sizeof *out);
    for (p = 0; p < NPU_NUM_POLICIES; p++) {
        out->st[p].S = S;
        for (i = 0; i < n; i++) {
            npu_flexsa_stats_t s;
            if (npu_flexsa_plan(S, blk_m, (npu_flexsa_policy_t)p, g[i].M, g[i].N, g[i].K, NULL,
                                NULL, &s) < 0)
                return -1;
            npu_flexsa_stats_add(&out->st[p], &s);
        }
    }
    for (p = 0; p < NPU_NUM_POLICIES; p++) {
        out->util[p] = npu_flexsa_util(&out->st[p]);
        out->util_rr[p] = npu_flexsa_util_rr(&out->st[p]);
        out->traffic_norm[p] = (double)npu_flexsa_traffic(&out->st[p]) /
                               (double)npu_flexsa_traffic(&out->st[NPU_POLICY_1G1C]);
        out->intercore_waves[p] = npu_flexsa_intercore_waves(&out->st[p]);
        out->intercore_cycles[p] = npu_flexsa_intercore_cycles(&out->st[p]);
    }
    return 0;
}
