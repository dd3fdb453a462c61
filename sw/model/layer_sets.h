/*
 * layer_sets.h - paper-model layer sets and the paper-scaled configurations of brief 000
 * (ARCHITECTURE.md section 7), and the model-based reproduction of Fig. 12 / Fig. 14:
 * reduction of forward + backward cycles for Interleaving, +Rearrangement (Algorithm 1 and
 * oracle) and +Partitioning (oracle and KNN) against the sequential baseline.
 *
 * Configurations [INTERP, see docs/training.md]: the paper's SPM bytes per PE (~512 B/PE) and
 * MACs per DRAM byte (ridge ~92 edge, ~115 server) on a 2S x 2S = 32 x 32 array (S = 16):
 *   edge    S 16, SPM 512 KiB, DRAM 11 B/cycle (ridge 93.1), batch 4, 1 core
 *   server  S 16, SPM 512 KiB, DRAM  9 B/cycle (ridge 113.8), batch 8, 1 core
 *   server4 the server array as four S x S cores sharing SPM and DRAM, batch 32 (the paper's
 *           quad-core: batch, SPM and bandwidth x4 with the cores)
 * Layer shapes: the standard architectures' GEMMs (im2col convs: M = B*Ho*Wo, K = Cin*R*S,
 * N = Cout; FC: M = B or B*seq) with each of M, K, N scaled by 2S / (paper array side) (32/45
 * edge, 32/128 server), rounded, >= 1, so the dims keep their ratio to the array side.
 * Models: ResNet-50 (v1.5, 224), MobileNet-v1 (pointwise convs and FC; depthwise convs are not
 * GEMMs and are left out), BERT (tiny on edge, large on server; seq 128; QKV, output, FFN x2;
 * the attention score GEMMs have no weights and are left out), NCF (NeuMF MLP 256-256-128-64-1),
 * DLRM (MLPerf MLPs: bottom 13-512-256-128, top 479-1024-1024-512-256-1), YOLOv2-tiny (416).
 * Element sizes: operands 2 B; partial sums and gradients acc_bytes (2 B by default for the
 * paper comparison, brief section 3 [INTERP] "element size 2 B (bf16)"; 4 B = the RTL's int32).
 * Identical shapes of a model are merged with a count. The first layer of a network (no dX)
 * is modelled as its dW GEMM only and gets no gain.
 */
#ifndef NPU_LAYER_SETS_H
#define NPU_LAYER_SETS_H

#include <stdint.h>

#include "model/knn.h"
#include "model/train_model.h"

#define NPU_LSET_MAX 160
#define NPU_LSET_MAX_MODELS 8

/* A layer of a set: its shape and its place (model, name, how many times the shape occurs). */
typedef struct npu_lset_layer {
    char model[16];
    char name[32];
    npu_train_shape_t shape;
    int count;
} npu_lset_layer_t;

typedef struct npu_lset_cfg {
    char name[16];
    int S;
    long spm_bytes;
    int dram_bw;        /* bytes per cycle */
    int cores;          /* 1 or 4 */
    int batch;
    int paper_side;     /* the paper's array side (45 / 128) */
    int big;            /* large model variants (BERT-large) */
    int acc_bytes;      /* partial-sum / gradient element bytes: 2 in the paper configs (the
                         * brief's bf16 interpretation), 4 = the RTL's int32 (0: 4) */
    double paper[4];    /* paper's %: interleave, +rearrangement, +partitioning, -1 if none */
} npu_lset_cfg_t;

/* "edge", "server", "server4"; returns 0 or -1. */
int npu_lset_config(const char *name, npu_lset_cfg_t *c);
void npu_lset_hw(const npu_lset_cfg_t *c, npu_tmodel_hw_t *hw);

/* The scaled layer set of a configuration; returns the count or -1. */
int npu_lset_layers(const npu_lset_cfg_t *c, npu_lset_layer_t *out, int max);

enum {
    NPU_LSET_BASE = 0,    /* sequential (best tiles and permutations); 4 cores: M split */
    NPU_LSET_INTERLEAVE,  /* Interleaving */
    NPU_LSET_ALG1,        /* +Rearrangement, Algorithm 1 */
    NPU_LSET_ORACLE,      /* +Rearrangement, oracle order */
    NPU_LSET_PART,        /* +Partitioning, best scheme by the model (Algorithm 1 order) */
    NPU_LSET_PART_KNN,    /* +Partitioning, scheme by KNN (leave-one-out, k = 1) */
    NPU_LSET_NSTEPS
};

typedef struct npu_lset_row {
    npu_lset_layer_t L;
    double cyc[NPU_LSET_NSTEPS];
    double base_canon;    /* sequential baseline with the brief's fixed loop orders */
    double part_cyc[4];   /* per scheme none/m/n/k at its best P (AUTO order) */
    int part_P[4];
    int alg1_order;       /* npu_order_t chosen by Algorithm 1 */
    int rule_b_order;     /* rule (b), for the log */
    int oracle_order;
    int label;            /* KNN label: fastest of none/m/n/k (1 core) or m/n/k (4 cores) */
    int knn_pred;
    uint64_t bytes_base, bytes_alg1;
    long dy_base, dy_alg1, dy_comp;
} npu_lset_row_t;

typedef struct npu_lset_bench {
    int nrows;
    int nmodels;
    char model[NPU_LSET_MAX_MODELS][16];
    double red_model[NPU_LSET_MAX_MODELS][NPU_LSET_NSTEPS]; /* % reduction per model */
    double red[NPU_LSET_NSTEPS];                           /* mean over models, % */
    double red_canon[NPU_LSET_NSTEPS]; /* mean over models against the fixed-order baseline */
    double knn_acc[3];   /* k = 1, 3, 5: mean accuracy over 1000 80/20 splits */
    int alg1_vs_oracle;  /* layers where Algorithm 1 picks the oracle's order */
    int alg1_vs_rule_b;  /* layers where rules (a) and (b) disagree */
} npu_lset_bench_t;

/* Evaluates every layer of the configuration; rows may be NULL. Returns 0 or -1. */
int npu_lset_bench(const npu_lset_cfg_t *c, npu_lset_row_t *rows, int max, npu_lset_bench_t *b);

#endif
