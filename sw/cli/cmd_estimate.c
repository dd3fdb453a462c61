/* cmd_estimate.c - `npu estimate`: one training iteration through the analytical estimator
 * (model/estimate.h): a row per step, the tensors' DRAM bytes, the iteration's metrics. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "model/est_step.h"
#include "model/estimate.h"
#include "model/topology.h"
#include "run/fit.h"

static const char *const k_cols[] = {"step", "phase", "layer", "macs", "compute", "vec", "stall",
                                     "start", "end", "in_bytes", "out_bytes", "rf", "bound",
                                     "modelled", "tiled"};
enum { NCOLS = (int)(sizeof k_cols / sizeof k_cols[0]) };

static void row(npu_table_t *t, const npu_est_t *e, int i)
{
    const npu_est_step_t *st = &e->step[i];
    const npu_sched_step_stat_t *ss = &e->sched.step[i];
    npu_table_str(t, st->name);
    npu_table_str(t, npu_est_phase_name(st->phase));
    npu_table_int(t, st->layer);
    npu_table_u64(t, st->macs);
    npu_table_u64(t, st->compute);
    npu_table_u64(t, st->vec);
    npu_table_u64(t, ss->stall);
    npu_table_u64(t, ss->start);
    npu_table_u64(t, ss->end);
    npu_table_u64(t, ss->in_bytes);
    npu_table_u64(t, ss->out_bytes);
    npu_table_num(t, st->rf, "%.3f");
    npu_table_str(t, st->memory_bound ? "memory" : "compute");
    npu_table_int(t, st->modelled);
    npu_table_int(t, st->tiled);
    npu_table_end_row(t);
}

static void print_text(const npu_est_t *e, const char *model, int batch)
{
    printf("estimate %s, batch %d: SPM %llu bytes, DRAM %.1f B/cycle, latency %llu, prefetch %s, "
           "look-ahead %s\n", model, batch, (unsigned long long)e->problem.spm_bytes, e->problem.bw,
           (unsigned long long)e->problem.latency, e->problem.prefetch ? "on" : "off",
           e->problem.lookahead ? "on" : "off");
    printf("%-9s %12s %10s %8s %10s %10s %10s %10s %8s  %s\n", "step", "MACs", "compute", "vec",
           "stall", "end", "in B", "out B", "rf", "bound");
    for (int i = 0; i < e->n_steps; i++) {
        const npu_est_step_t *st = &e->step[i];
        const npu_sched_step_stat_t *ss = &e->sched.step[i];
        printf("%-9s %12llu %10llu %8llu %10llu %10llu %10llu %10llu %8.2f  %s%s%s\n", st->name,
               (unsigned long long)st->macs, (unsigned long long)st->compute,
               (unsigned long long)st->vec, (unsigned long long)ss->stall,
               (unsigned long long)ss->end, (unsigned long long)ss->in_bytes,
               (unsigned long long)ss->out_bytes, st->rf, st->memory_bound ? "memory" : "compute",
               st->modelled ? "" : " (not modelled: MACs/PEs, or vector kernels split)",
               st->tiled ? " (tiled: its tensors exceed the SPM)" : "");
    }
    printf("tensors (DRAM in / out bytes):");
    for (int t = 0; t < e->n_tensors; t++)
        printf(" %s %llu/%llu", e->tensor[t].name, (unsigned long long)e->sched.tensor[t].in_bytes,
               (unsigned long long)e->sched.tensor[t].out_bytes);
    printf("\niteration: %llu cycles, %llu stalled; DRAM in %llu, out %llu bytes (%.2f B/cycle, "
           "active %.1f%%); PE utilization %.1f%%; %.1f samples per Mcycle; ridge %.1f ops/B\n",
           (unsigned long long)e->cycles, (unsigned long long)e->sched.stall,
           (unsigned long long)e->sched.in_bytes, (unsigned long long)e->sched.out_bytes,
           e->bandwidth, 100 * e->active, 100 * e->utilization, e->samples_per_mcycle, e->ridge);
}

static int parse_input(const char *s, int *h, int *w, int *c)
{
    char tail;
    if (!s) {
        *h = *w = 8, *c = 1;
        return 0;
    }
    return sscanf(s, "%dx%dx%d%c", h, w, c, &tail) == 3 && *h > 0 && *w > 0 && *c > 0 ? 0 : -1;
}

/* --topology FILE: its layers per sample (npu_topo_net). 0, or NPU_EXIT_USAGE after the message. */
static int topology_net(const npu_args_t *a, npu_net_shape_t *net)
{
    npu_topology_t *t = malloc(sizeof *t);
    char why[256];
    int rc = NPU_EXIT_USAGE;
    if (!t)
        fprintf(stderr, "npu: out of memory\n");
    else if (npu_cli_load_topology(a, 1, t) == 0) {
        if (npu_topo_net(t, net, why, sizeof why))
            fprintf(stderr, "npu: --topology %s: %s\n", a->topology, why);
        else
            rc = 0;
    }
    free(t);
    return rc;
}

int npu_cli_parse_net(const npu_args_t *a, npu_net_shape_t *net)
{
    char why[256];
    int h, w, c;
    if (a->topology)
        return topology_net(a, net);
    if (parse_input(a->input, &h, &w, &c)) {
        fprintf(stderr, "npu: --input needs HxWxC with positive sizes, not '%s'\n", a->input);
        return NPU_EXIT_USAGE;
    }
    if (npu_net_parse(a->model, h, w, c, net, why, sizeof why)) {
        fprintf(stderr, "npu: --model: %s\n", why);
        return NPU_EXIT_USAGE;
    }
    return 0;
}

int npu_cli_step_net(const npu_net_shape_t *net, int batch, const char *cmd,
                     npu_cli_step_net_t *s)
{
    int L = net->layers;
    s->n_conv = s->n_fc = 0;
    if (net->l[0].kind == NPU_NET_CONV) {
        s->n_conv = L > NPU_STEP_MAX_LAYERS ? -1 : npu_fit_cnn_layers(net, batch, s->conv, s->fc, &s->n_fc);
        for (int l = 0; l < s->n_conv; l++)
            s->res[l] = net->res[l];
        if (s->n_conv < 1)
            fprintf(stderr, "npu: %s --plan step of a CNN: the step engine takes convolutions first (residual "
                    "connections between them), at most 16 layers\n", cmd);
        return s->n_conv < 1 ? -1 : 0;
    }
    for (int l = 0; l < L; l++) {
        if (net->l[l].kind != NPU_NET_FC) {
            fprintf(stderr, "npu: %s --plan step: the step engine runs MLPs (mlp:D0,..,DL), not convolutions\n", cmd);
            return -1;
        }
        s->dims[l] = (int)npu_net_in(&net->l[l]);
    }
    s->dims[L] = (int)npu_net_out(&net->l[L - 1]);
    return 0;
}

static const char *const k_step_cols[] = {"kernel", "phase", "layer", "macs", "vec_busy", "rd_bytes",
                                          "wr_bytes", "roofline", "cycles", "bound"};

static const char *step_phase(int ph) { return ph == NPU_SK_FWD ? "fwd" : ph == NPU_SK_BWD ? "bwd" : "update"; }

/* "plan: ..." for the text report: what the choice kept on the DRAM side, and bypass. */
static void print_plan_options(int ov)
{
    int any = 0;
    printf("plan (chosen by %s): on the DRAM side:", ov & NPU_RES_BY_TRAFFIC ? "its DRAM traffic" : "the estimated step cycles");
    for (const npu_cli_res_word_t *w = npu_cli_res_words; w->name; w++)
        if (ov & w->bit) {
            printf(" %s", w->name);
            any = 1;
        }
    printf("%s; bypass %s\n", any ? "" : " none", ov & NPU_RES_BYPASS ? "on" : "off");
}

/* Every tensor's DRAM bytes; with residency the transfers and the scheduler's events too. */
static void print_tensors(const npu_est_kplan_t *e)
{
    if (!e->res_banks) {
        printf("%-10s %10s %10s\n", "tensor", "in B", "out B");
        for (int t = 0; t < e->nt; t++)
            printf("%-10s %10llu %10llu\n", e->t[t].name, (unsigned long long)e->t[t].in,
                   (unsigned long long)e->t[t].out);
        return;
    }
    print_plan_options(e->res_overlap);
    printf("%d whole-tensor transfers, %d of them overlapping a kernel (prefetch, look-ahead write-back), "
           "the others %llu cycles and %llu bytes in programs of their own; %d accesses left to DRAM\n", e->nx,
           e->nx_app, (unsigned long long)e->xfer_cycles, (unsigned long long)e->xfer_bytes, e->demoted);
    printf("%-10s %10s %10s %10s %10s %6s %7s %6s\n", "tensor", "in B", "out B", "xfer in", "xfer out",
           "loads", "stores", "drops");
    for (int t = 0; t < e->nt; t++) {
        const npu_est_tensor_t *T = &e->t[t];
        printf("%-10s %10llu %10llu %10llu %10llu %6d %7d %6d\n", T->name, (unsigned long long)T->in,
               (unsigned long long)T->out, (unsigned long long)T->xfer_in, (unsigned long long)T->xfer_out,
               T->loads, T->stores, T->drops);
    }
}

static void print_step(const npu_est_kplan_t *e, const char *model, int batch)
{
    if (e->res_banks)
        printf("estimate %s, batch %d, --plan step: the step engine's %d kernels, tensors kept in the "
               "SPM's last %d bank(s) between them (the scheduler's plan)\n", model, batch, e->nk, e->res_banks);
    else
        printf("estimate %s, batch %d, --plan step: the step engine's %d kernels, each from and to DRAM\n",
               model, batch, e->nk);
    printf("%-25s %10s %8s %10s %10s %10s %10s  %s\n", "kernel", "MACs", "vec", "rd B", "wr B", "roofline",
           "cycles", "bound");
    for (int i = 0; i < e->nk; i++) {
        const npu_est_kernel_t *k = &e->k[i];
        uint64_t rd = 0, wr = 0;
        for (int t = 0; t < NPU_NUM_TAGS; t++)
            rd += k->rd[t], wr += k->wr[t];
        printf("%-25s %10llu %8llu %10llu %10llu %10llu %10llu  %s\n", k->name, (unsigned long long)k->macs,
               (unsigned long long)k->vec_busy, (unsigned long long)rd, (unsigned long long)wr,
               (unsigned long long)k->roof, (unsigned long long)k->cycles, k->memory_bound ? "memory" : "compute");
    }
    print_tensors(e);
    printf("step: %llu cycles; DRAM read %llu, written %llu bytes (program fetch included%s); %llu MACs\n",
           (unsigned long long)e->cycles, (unsigned long long)e->rd_bytes, (unsigned long long)e->wr_bytes,
           e->res_banks ? "; the transfers' not" : "", (unsigned long long)e->macs);
}

/* "tensors" (per tensor: name, in / out bytes, those of whole-tensor transfers, the scheduler's
 * loads, stores, drops: 0 without residency), "resident_banks" (0: none), "transfers". */
static void json_tensors(cJSON *root, const npu_est_kplan_t *e)
{
    cJSON *ts = cJSON_AddArrayToObject(root, "tensors");
    cJSON_AddNumberToObject(root, "resident_banks", e->res_banks);
    cJSON_AddNumberToObject(root, "transfers", e->nx);
    cJSON_AddNumberToObject(root, "transfer_cycles", (double)e->xfer_cycles);
    if (e->res_banks) { /* the chosen plan's options: what it keeps on the DRAM side, bypass */
        cJSON *dram = cJSON_AddArrayToObject(root, "plan_dram_side");
        for (const npu_cli_res_word_t *w = npu_cli_res_words; dram && w->name; w++)
            if (e->res_overlap & w->bit)
                cJSON_AddItemToArray(dram, cJSON_CreateString(w->name));
        cJSON_AddBoolToObject(root, "plan_bypass", (e->res_overlap & NPU_RES_BYPASS) != 0);
        cJSON_AddStringToObject(root, "plan_objective", e->res_overlap & NPU_RES_BY_TRAFFIC ? "traffic" : "cycles");
    }
    for (int t = 0; ts && t < e->nt; t++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddStringToObject(o, "name", e->t[t].name);
        cJSON_AddNumberToObject(o, "in_bytes", (double)e->t[t].in);
        cJSON_AddNumberToObject(o, "out_bytes", (double)e->t[t].out);
        cJSON_AddNumberToObject(o, "transfer_in_bytes", (double)e->t[t].xfer_in);
        cJSON_AddNumberToObject(o, "transfer_out_bytes", (double)e->t[t].xfer_out);
        cJSON_AddNumberToObject(o, "loads", e->t[t].loads);
        cJSON_AddNumberToObject(o, "stores", e->t[t].stores);
        cJSON_AddNumberToObject(o, "drops", e->t[t].drops);
        cJSON_AddItemToArray(ts, o);
    }
}

/* --plan step: the network's step engine kernels estimated (model/est_step.h). */
static int estimate_step(const npu_cfg_t *cfg, const npu_args_t *a, const npu_net_shape_t *net, int batch)
{
    static npu_est_kplan_t e; /* large; one per process */
    static npu_cli_step_net_t sn;
    int L = net->layers, csv_err = 0;
    npu_table_t t;
    char why[256] = "";
    if (a->dram_bw_set || a->dram_latency_set || a->input ||
        ((a->spm_kib || a->no_prefetch || a->no_lookahead || a->no_conv_reuse || a->bypass || a->objective) &&
         !a->resident_banks)) {
        fprintf(stderr, "npu: estimate --plan step models this build's hardware and the step engine's plan: "
                "--dram-bw, --dram-latency and --input do not apply; --spm-kib (the scheduler's share of "
                "the resident banks), --no-prefetch, --no-lookahead, --no-conv-reuse, --bypass and --objective only "
                "with --resident-banks\n");
        return NPU_EXIT_USAGE;
    }
    uint64_t area = (uint64_t)a->resident_banks * (uint64_t)cfg->spm_bank_words * (uint64_t)npu_cfg_word(cfg);
    if ((uint64_t)a->spm_kib * 1024 > area) {
        fprintf(stderr, "npu: estimate --plan step: --spm-kib %u exceeds the %u resident bank(s), %llu KiB\n",
                a->spm_kib, a->resident_banks, (unsigned long long)(area / 1024));
        return NPU_EXIT_USAGE;
    }
    if (npu_cli_step_net(net, batch, "estimate", &sn))
        return NPU_EXIT_USAGE;
    if (sn.n_conv ? npu_estimate_step_cnn_res(cfg, sn.conv, sn.n_conv, sn.res, sn.fc, sn.n_fc, batch, a->policy,
                                              (int)a->resident_banks, (uint64_t)a->spm_kib * 1024,
                                              npu_cli_res_overlap(a), &e, why, sizeof why)
                  : npu_estimate_step_res_ex(cfg, sn.dims, L, batch, a->policy, (int)a->resident_banks,
                                             (uint64_t)a->spm_kib * 1024,
                                             npu_cli_res_overlap(a), &e, why, sizeof why)) {
        if (why[0])
            fprintf(stderr, "npu: estimate --plan step: %s\n", why);
        return NPU_EXIT_USAGE;
    }
    if (npu_cli_table_open(cfg, a, &t, k_step_cols, 10) != 0)
        return NPU_EXIT_USAGE;
    for (int i = 0; i < e.nk; i++) {
        const npu_est_kernel_t *k = &e.k[i];
        uint64_t rd = 0, wr = 0;
        for (int g = 0; g < NPU_NUM_TAGS; g++)
            rd += k->rd[g], wr += k->wr[g];
        npu_table_str(&t, k->name);
        npu_table_str(&t, step_phase(k->phase));
        npu_table_int(&t, k->layer);
        npu_table_u64(&t, k->macs);
        npu_table_u64(&t, k->vec_busy);
        npu_table_u64(&t, rd);
        npu_table_u64(&t, wr);
        npu_table_u64(&t, k->roof);
        npu_table_u64(&t, k->cycles);
        npu_table_str(&t, k->memory_bound ? "memory" : "compute");
        npu_table_end_row(&t);
    }
    cJSON *rows = npu_table_close(&t, &csv_err);
    if (a->json) {
        cJSON *root = npu_cli_json_new(cfg, a);
        if (root) {
            cJSON_AddStringToObject(root, "model", npu_cli_net_name(a));
            cJSON_AddStringToObject(root, "plan", "step");
            cJSON_AddNumberToObject(root, "batch", batch);
            cJSON_AddNumberToObject(root, "cycles", (double)e.cycles);
            cJSON_AddNumberToObject(root, "dram_rd_bytes", (double)e.rd_bytes);
            cJSON_AddNumberToObject(root, "dram_wr_bytes", (double)e.wr_bytes);
            json_tensors(root, &e);
            cJSON_AddItemToObject(root, "rows", rows);
            npu_cli_json_print(root);
            rows = NULL;
        }
    } else if (!a->quiet) {
        print_step(&e, npu_cli_net_name(a), batch);
    }
    cJSON_Delete(rows);
    return csv_err ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}

int npu_cmd_estimate(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_net_shape_t net;
    npu_est_opts_t o = {a->batch ? (int)a->batch : 32, (uint64_t)a->spm_kib * 1024,
                        a->dram_bw_set ? a->dram_bw : 0, a->dram_latency_set ? (int)a->dram_latency : -1,
                        !a->no_prefetch, !a->no_lookahead};
    static npu_est_t e; /* large; one per process */
    npu_table_t t;
    char why[256];
    int csv_err = 0;
    cJSON *rows;
    if (npu_cli_parse_net(a, &net))
        return NPU_EXIT_USAGE;
    if (a->plan && !strcmp(a->plan, "step"))
        return estimate_step(cfg, a, &net, o.batch);
    if (a->policy || a->resident_banks || a->no_conv_reuse || a->bypass || a->objective) {
        fprintf(stderr, "npu: estimate: --%s applies to --plan step (the scheduler's plan costs the array "
                "by the slicing stage and sizes the SPM by --spm-kib)\n",
                a->policy ? "policy" : a->resident_banks ? "resident-banks" : a->no_conv_reuse ? "no-conv-reuse" : a->bypass ? "bypass" : "objective");
        return NPU_EXIT_USAGE;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (npu_estimate(cfg, &net, &o, &e, why, sizeof why)) {
        fprintf(stderr, "npu: estimate: %s\n", why);
        return NPU_EXIT_USAGE;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (npu_cli_table_open(cfg, a, &t, k_cols, NCOLS) != 0) {
        npu_est_free(&e);
        return NPU_EXIT_USAGE;
    }
    for (int i = 0; i < e.n_steps; i++)
        row(&t, &e, i);
    rows = npu_table_close(&t, &csv_err);
    if (a->json) {
        cJSON *root = npu_cli_json_new(cfg, a);
        if (root) {
            cJSON_AddStringToObject(root, "model", npu_cli_net_name(a));
            cJSON_AddNumberToObject(root, "batch", o.batch);
            cJSON_AddNumberToObject(root, "cycles", (double)e.cycles);
            cJSON_AddNumberToObject(root, "stall", (double)e.sched.stall);
            cJSON_AddNumberToObject(root, "dram_in_bytes", (double)e.sched.in_bytes);
            cJSON_AddNumberToObject(root, "dram_out_bytes", (double)e.sched.out_bytes);
            cJSON_AddNumberToObject(root, "utilization", e.utilization);
            cJSON_AddNumberToObject(root, "samples_per_mcycle", e.samples_per_mcycle);
            /* the estimator's own time (no process start): issue 16's speed against the RTL */
            cJSON_AddNumberToObject(root, "wall_s", (double)(t1.tv_sec - t0.tv_sec) +
                                                        1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
            cJSON_AddItemToObject(root, "rows", rows);
            npu_cli_json_print(root);
        } else {
            cJSON_Delete(rows);
        }
    } else if (!a->quiet) {
        cJSON_Delete(rows);
        print_text(&e, npu_cli_net_name(a), o.batch);
    } else {
        cJSON_Delete(rows);
    }
    npu_est_free(&e);
    return csv_err ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}
