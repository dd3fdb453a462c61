/* knn_part.c - the KNN partition selector trained on the model; see knn_part.h. */
#include "model/knn_part.h"

#include <stdlib.h>
#include <string.h>

#include "model/layer_sets.h"
#include "model/train_model.h"

/* The model's fastest of the M, N and K splits at P = the cores, Algorithm 1's order; -1 if
 * none evaluates. */
static int fastest_split(const npu_tmodel_hw_t *hw, const npu_train_shape_t *L)
{
    double best = -1;
    int lab = -1;
    for (int sc = NPU_PART_M; sc <= NPU_PART_K; sc++) {
        npu_tmodel_opts_t o;
        npu_tmodel_result_t res;
        memset(&o, 0, sizeof o);
        o.order = NPU_ORDER_AUTO;
        o.part = (npu_part_t)sc;
        o.P = hw->cores;
        o.fwd_cycles = 1;
        if (npu_tmodel_layer_eval(hw, L, &o, &res) == 0 && (lab < 0 || res.cycles < best)) {
            best = res.cycles;
            lab = sc;
        }
    }
    return lab;
}

int npu_knn_part_samples(const char *set, npu_knn_sample_t *samples, int max)
{
    npu_lset_cfg_t pc;
    npu_tmodel_hw_t hw;
    npu_lset_layer_t *Ls = malloc(sizeof *Ls * NPU_LSET_MAX);
    int n = Ls && npu_lset_config(set, &pc) == 0 ? npu_lset_layers(&pc, Ls, NPU_LSET_MAX) : -1, ns = 0;
    if (n < 0) {
        free(Ls);
        return -1;
    }
    npu_lset_hw(&pc, &hw);
    for (int i = 0; i < n && ns < max; i++) {
        const npu_train_shape_t *L = &Ls[i].shape;
        int lab = L->has_dx ? fastest_split(&hw, L) : -1;
        if (lab < 0)
            continue;
        npu_knn_features(L->M, L->K, L->N, samples[ns].f);
        samples[ns++].label = lab;
    }
    free(Ls);
    return ns;
}

npu_part_t npu_knn_partition(const npu_train_shape_t *L)
{
    static npu_knn_sample_t samples[NPU_LSET_MAX];
    static int ns = -1;
    double f[NPU_KNN_FEATURES];
    int label;
    if (ns < 0) { /* train once (a failed training is not retried: the default M) */
        ns = npu_knn_part_samples("server4", samples, NPU_LSET_MAX);
        ns = ns < 0 ? 0 : ns;
    }
    npu_knn_features(L->M, L->K, L->N, f);
    label = ns > 0 ? npu_knn_predict(samples, ns, f, 1) : -1;
    return label >= NPU_PART_M && label <= NPU_PART_K ? (npu_part_t)label : NPU_PART_M;
}
