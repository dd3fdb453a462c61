/* cmd_slice.c - `npu slice`: the slicing stage's choice for a GEMM or a convolution kernel, under
 * the burst-aware and the bytes-only cost (compile/slice, docs/compiler.md "Slicing"). A view of
 * the model: the emitters do not take its plan yet, so nothing runs on the RTL here. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "compile/conv/conv_layer.h"
#include "compile/slice/slice.h"

static const char *const k_split[NPU_SLICE_SPLITS] = {"by filters/columns (N)", "by rows (M)",
                                                      "2x2"};
static const char *const k_tensor[NPU_SLICE_TENSORS] = {"in0", "in1", "out"};

static double q16(uint64_t x) { return (double)x / 65536.0; }

static void print_plan(const char *what, const npu_slice_plan_t *p)
{
    printf("  %-7s split %s, loops", what, k_split[p->split]);
    for (int i = 0; i < p->nd; i++)
        printf(" %s", p->dim_name[p->loop[i]]);
    printf(", tiles");
    for (int d = 0; d < p->nd; d++)
        printf(" %s=%lld", p->dim_name[d], (long long)p->tile[d]);
    if (p->band != NPU_SLICE_BAND_NONE)
        printf(", %s band resident", k_tensor[p->band - 1]);
    if (p->cband)
        printf(", %s band (whole rows stored once per m-tile)", k_tensor[NPU_SLICE_OUT]);
    printf("\n          %.0f cycles predicted (compute %.0f, transfers %.0f), %llu steps\n",
           q16(p->cycles), q16(p->compute), q16(p->transfer), (unsigned long long)p->steps);
    for (int t = 0; t < NPU_SLICE_TENSORS; t++)
        printf("          %-3s %6llu transfers %10llu bytes %8llu bursts %7llu beats\n",
               k_tensor[t], (unsigned long long)p->t[t].loads,
               (unsigned long long)p->t[t].b.bytes, (unsigned long long)p->t[t].b.bursts,
               (unsigned long long)p->t[t].b.beats);
}

static cJSON *json_plan(const npu_slice_plan_t *p)
{
    cJSON *o = cJSON_CreateObject(), *j;
    cJSON_AddStringToObject(o, "split", k_split[p->split]);
    j = cJSON_AddArrayToObject(o, "loops");
    for (int i = 0; i < p->nd; i++)
        cJSON_AddItemToArray(j, cJSON_CreateString(p->dim_name[p->loop[i]]));
    j = cJSON_AddObjectToObject(o, "tiles");
    for (int d = 0; d < p->nd; d++)
        cJSON_AddNumberToObject(j, p->dim_name[d], (double)p->tile[d]);
    cJSON_AddStringToObject(o, "band", p->band != NPU_SLICE_BAND_NONE ? k_tensor[p->band - 1] : "none");
    cJSON_AddBoolToObject(o, "out_band", p->cband);
    cJSON_AddNumberToObject(o, "cycles", q16(p->cycles));
    cJSON_AddNumberToObject(o, "compute", q16(p->compute));
    cJSON_AddNumberToObject(o, "transfer", q16(p->transfer));
    cJSON_AddNumberToObject(o, "steps", (double)p->steps);
    j = cJSON_AddObjectToObject(o, "tensors");
    for (int t = 0; t < NPU_SLICE_TENSORS; t++) {
        cJSON *x = cJSON_AddObjectToObject(j, k_tensor[t]);
        cJSON_AddNumberToObject(x, "transfers", (double)p->t[t].loads);
        cJSON_AddNumberToObject(x, "bytes", (double)p->t[t].b.bytes);
        cJSON_AddNumberToObject(x, "bursts", (double)p->t[t].b.bursts);
        cJSON_AddNumberToObject(x, "beats", (double)p->t[t].b.beats);
    }
    return o;
}

/* One search's result as a JSON row of "searches". */
static void json_search(cJSON *arr, const char *kernel, int mode, const npu_slice_result_t *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kernel", kernel);
    cJSON_AddStringToObject(o, "cost", npu_slice_mode_name(mode));
    cJSON_AddNumberToObject(o, "candidates", (double)r->visited);
    cJSON_AddNumberToObject(o, "fit", (double)r->fitting);
    cJSON_AddNumberToObject(o, "costed", (double)r->evaluated);
    cJSON_AddItemToObject(o, "best", json_plan(&r->best));
    if (r->fitting > 1)
        cJSON_AddItemToObject(o, "runner", json_plan(&r->second));
    cJSON_AddItemToArray(arr, o);
}

/* One search under one cost mode: 0, or -1 after printing why on stderr. */
static int search(const npu_cfg_t *cfg, const npu_args_t *a, const npu_conv_t *c, int kind,
                  int mode, cJSON *json)
{
    static const char *const kname[] = {"gemm", "fwd", "dx", "dw"};
    npu_slice_cost_t k = npu_slice_cost_default(cfg, mode);
    npu_slice_result_t r;
    k.runner = 1; /* the report shows the runner-up */
    char msg[200];
    int rc = c ? npu_slice_conv(cfg, &k, c, kind, &r, msg, sizeof msg)
               : npu_slice_gemm(cfg, &k, a->m, a->n, a->k, &r, msg, sizeof msg);
    if (rc != 0) {
        fprintf(stderr, "npu: slice (%s): %s\n", npu_slice_mode_name(mode), msg);
        return -1;
    }
    if (json) {
        json_search(json, kname[kind], mode, &r);
        return 0;
    }
    printf("%s cost: %llu candidates, %llu fit, %llu costed step by step\n",
           npu_slice_mode_name(mode), (unsigned long long)r.visited,
           (unsigned long long)r.fitting, (unsigned long long)r.evaluated);
    print_plan("best", &r.best);
    if (r.fitting > 1)
        print_plan("runner", &r.second);
    return 0;
}

/* The kernels of --kernel (fwd when absent; all: fwd, dx, dw) into kinds; returns the count. */
static int kinds_of(const char *kernel, int *kinds)
{
    static const char *const names[3] = {"fwd", "dx", "dw"};
    int n = 0;
    for (int i = 0; i < 3; i++)
        if ((!kernel && i == 0) || (kernel && (!strcmp(kernel, "all") || !strcmp(kernel, names[i]))))
            kinds[n++] = NPU_SLICE_FWD + i;
    return n;
}

int npu_cmd_slice(const npu_cfg_t *cfg, const npu_args_t *a)
{
    static const char *const kname[] = {"gemm", "fwd", "dx", "dw"};
    npu_conv_t conv;
    char msg[200];
    int kinds[3] = {NPU_SLICE_GEMM}, nk = 1;
    cJSON *root = NULL, *arr = NULL;
    if (a->conv) {
        if (strchr(a->conv, ';')) {
            fprintf(stderr, "npu: slice --conv takes one layer, not a list\n");
            return NPU_EXIT_USAGE;
        }
        if (npu_conv_parse(a->conv, &conv, msg, sizeof msg) != 0) {
            fprintf(stderr, "npu: slice --conv: %s\n", msg);
            return NPU_EXIT_USAGE;
        }
        nk = kinds_of(a->kernel, kinds);
    }
    if (a->json) {
        root = npu_cli_json_new(cfg, a);
        cJSON_AddStringToObject(root, "problem", a->conv ? a->conv : "gemm");
        if (!a->conv) {
            cJSON_AddNumberToObject(root, "m", a->m);
            cJSON_AddNumberToObject(root, "n", a->n);
            cJSON_AddNumberToObject(root, "k", a->k);
        }
        arr = cJSON_AddArrayToObject(root, "searches");
    }
    for (int i = 0; i < nk; i++) {
        if (a->conv && !a->json)
            printf("npu slice conv %s %s (config %s)\n", a->conv, kname[kinds[i]], cfg->name);
        else if (!a->json)
            printf("npu slice gemm M=%d N=%d K=%d (config %s)\n", a->m, a->n, a->k, cfg->name);
        if (search(cfg, a, a->conv ? &conv : NULL, kinds[i], NPU_SLICE_BURST, arr) != 0 ||
            search(cfg, a, a->conv ? &conv : NULL, kinds[i], NPU_SLICE_NOBURST, arr) != 0) {
            cJSON_Delete(root);
            return NPU_EXIT_FAIL;
        }
    }
    if (root && npu_cli_json_print(root) != 0)
        return NPU_EXIT_FAIL;
    return NPU_EXIT_PASS;
}
