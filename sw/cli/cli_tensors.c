/* cli_tensors.c - a GEMM's tensors in .npy files (io/npy.h): --a / --b in, --out and --save DIR
 * out; see commands.h. */
#define _POSIX_C_SOURCE 200809L /* mkdir */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "io/npy.h"
#include "ref/golden.h"
#include "run/conv_bf16.h"
#include "run/conv_run.h"
#include "run/progfile.h"
#include "run/train_run.h"

/* -m/-n/-k, when given, must be the files' sizes. 0, or -1 after the message. */
static int same_dim(char opt, int given, int from_file, const char *file)
{
    if (!given || given == from_file)
        return 0;
    fprintf(stderr, "npu: -%c %d conflicts with %s, whose shape gives %c = %d\n", opt, given, file,
            opt == 'm' ? 'M' : opt == 'n' ? 'N' : 'K', from_file);
    return -1;
}

int npu_cli_gemm_inputs(const npu_cfg_t *cfg, const npu_args_t *a, npu_args_t *g, int16_t **A,
                        int16_t **B)
{
    char err[512];
    int ra, ca, rb, cb, M, N, Ka, Kb;
    *g = *a;
    *A = *B = NULL;
    if (!a->a_file) { /* the DRAM check first: no operand is built for a GEMM that cannot fit */
        if (npu_cli_gemm_fits(cfg, a) != 0)
            return NPU_EXIT_USAGE;
        return npu_cli_random_inputs(cfg, a, A, B) == 0 ? 0 : NPU_EXIT_FAIL;
    }
    if (npu_npy_load_i16_2d(a->a_file, &ra, &ca, A, err, sizeof err) != 0 ||
        npu_npy_load_i16_2d(a->b_file, &rb, &cb, B, err, sizeof err) != 0) {
        fprintf(stderr, "npu: %s\n", err);
        goto bad;
    }
    M = a->trans_a ? ca : ra; /* A is M x K, stored K x M with --trans-a */
    Ka = a->trans_a ? ra : ca;
    Kb = a->trans_b ? cb : rb; /* B is K x N, stored N x K with --trans-b */
    N = a->trans_b ? rb : cb;
    if (Ka != Kb) {
        fprintf(stderr, "npu: --a %s is %dx%d and --b %s is %dx%d: A's K (%d) differs from B's "
                        "(%d)%s\n", a->a_file, ra, ca, a->b_file, rb, cb, Ka, Kb,
                a->trans_a || a->trans_b ? " (with the transposes asked)" : "");
        goto bad;
    }
    if (same_dim('m', a->m, M, a->a_file) || same_dim('k', a->k, Ka, a->a_file) ||
        same_dim('n', a->n, N, a->b_file))
        goto bad;
    g->m = M;
    g->n = N;
    g->k = Ka;
    if (npu_cli_gemm_fits(cfg, g) == 0)
        return 0;
bad:
    free(*A);
    free(*B);
    *A = *B = NULL;
    return NPU_EXIT_USAGE;
}

int npu_cli_out_dir(const char *opt, const char *dir)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "npu: %s %s: cannot create the directory: %s\n", opt, dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "npu: %s %s: not a directory\n", opt, dir);
        return -1;
    }
    return 0;
}

/* One matrix as DIR/name (dir NULL: name is the path). 0 or -1 after the message. */
static int save_matrix(const char *dir, const char *name, int elem, int rows, int cols,
                       const void *data)
{
    char path[4096], err[600];
    const int64_t shape[2] = {rows, cols};
    if (dir)
        snprintf(path, sizeof path, "%s/%s", dir, name);
    else
        snprintf(path, sizeof path, "%s", name);
    if (npu_npy_save(path, elem, 2, shape, data, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "npu: %s\n", err);
    return -1;
}

/* The golden C of rep's GEMM (malloc'd; bf16: in the plan's summation order), or NULL after the
 * message. */
static int32_t *golden(const npu_cfg_t *cfg, const npu_gemm_report_t *rep, const int16_t *A,
                       const int16_t *B)
{
    int32_t *gold = malloc((size_t)rep->M * (size_t)rep->N * sizeof *gold);
    if (!gold || npu_gemm_golden(cfg, rep, A, B, gold) != 0) {
        fprintf(stderr, "npu: out of memory for the golden C\n");
        free(gold);
        return NULL;
    }
    return gold;
}

int npu_cli_gemm_save_program(const npu_cfg_t *cfg, const npu_args_t *g,
                              const npu_dram_timing_t *t, const npu_gemm_report_t *rep,
                              const int16_t *A, const int16_t *B)
{
    char err[600];
    int32_t *gold;
    int rc;
    if (rep->prog.n == 0) {
        fprintf(stderr, "npu: --save-program %s: no program was compiled\n", g->save_program);
        return -1;
    }
    if (!(gold = golden(cfg, rep, A, B)))
        return -1;
    rc = npu_progfile_save(g->save_program, cfg, t, rep, A, B, gold, err, sizeof err);
    free(gold);
    if (rc != 0)
        fprintf(stderr, "npu: --save-program %s\n", err);
    return rc;
}

int npu_cli_gemm_save(const npu_cfg_t *cfg, const npu_args_t *g, const npu_gemm_report_t *rep,
                      const int16_t *A, const int16_t *B, const int32_t *C, cJSON *report)
{
    int ra = g->trans_a ? g->k : g->m, ca = g->trans_a ? g->m : g->k;
    int rb = g->trans_b ? g->n : g->k, cb = g->trans_b ? g->k : g->n, rc = 0;
    int32_t *gold;
    char path[4096];
    FILE *f;
    if (g->out && C)
        rc |= save_matrix(NULL, g->out, 4, g->m, g->n, C);
    if (!g->save)
        return rc;
    if (!(gold = golden(cfg, rep, A, B)))
        return -1;
    rc |= save_matrix(g->save, "A.npy", 2, ra, ca, A);
    rc |= save_matrix(g->save, "B.npy", 2, rb, cb, B);
    rc |= save_matrix(g->save, "C_golden.npy", 4, g->m, g->n, gold);
    if (C)
        rc |= save_matrix(g->save, "C.npy", 4, g->m, g->n, C);
    free(gold);
    snprintf(path, sizeof path, "%s/run.json", g->save);
    if (report && (f = fopen(path, "w")) != NULL) { /* the report, as --json prints it */
        rc |= npu_out_json_print(f, cJSON_Duplicate(report, 1));
        rc |= fclose(f) != 0 ? -1 : 0;
    } else if (report) {
        fprintf(stderr, "npu: --save: cannot write %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    return rc;
}

/* ---- npu conv: one kernel's tensors ---- */

/* path as an int16 array of exactly the shape want (names: the dimensions, for the message).
 * 0, or -1 after the message. */
static int load_shaped(const char *opt, const char *path, int nd, const int64_t *want,
                       const char *names, int16_t **data)
{
    npu_npy_t a;
    char err[600], got[120] = "", need[120] = "";
    int same;
    if (npu_npy_load(path, &a, err, sizeof err) != 0) {
        fprintf(stderr, "npu: %s %s\n", opt, err);
        return -1;
    }
    same = a.elem == 2 && a.ndim == nd;
    for (int i = 0; i < nd; i++) {
        same &= i < a.ndim && a.shape[i] == want[i];
        snprintf(need + strlen(need), sizeof need - strlen(need), "%s%lld", i ? ", " : "",
                 (long long)want[i]);
    }
    for (int i = 0; i < a.ndim; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "",
                 (long long)a.shape[i]);
    if (!same) {
        fprintf(stderr, "npu: %s %s: %s (%s), the layer needs int16 (%s) (%s)\n", opt, path,
                a.elem == 2 ? "int16" : a.elem == 4 ? "int32" : "int64", got, need, names);
        npu_npy_free(&a);
        return -1;
    }
    *data = a.data;
    return 0;
}

/* The shapes of X, W (Wt), dY and the kernel's result as NumPy arrays. */
static void conv_shapes(const npu_conv_t *c, int kernel, int64_t x[4], int64_t w[4], int64_t dy[4],
                        int64_t out[4])
{
    int64_t X[4] = {c->batch, c->H, c->W, c->C};
    int64_t W[4] = {c->KH, c->KW, c->depthwise ? 1 : c->F, c->C};
    int64_t D[4] = {c->batch, npu_conv_oh(c), npu_conv_ow(c), c->F};
    memcpy(x, X, sizeof X);
    memcpy(w, W, sizeof W);
    memcpy(dy, D, sizeof D);
    memcpy(out, kernel == NPU_CONV_FWD ? D : kernel == NPU_CONV_DX ? X : W, sizeof X);
}

int npu_cli_conv_inputs(const npu_args_t *a, const npu_conv_t *c, int kernel, npu_conv_io_t *io)
{
    int64_t x[4], w[4], dy[4], out[4];
    int rows, cols;
    memset(io, 0, sizeof *io);
    conv_shapes(c, kernel, x, w, dy, out);
    if ((a->x_file && load_shaped("--x", a->x_file, 4, x, "B, H, W, C", (int16_t **)&io->X)) ||
        (a->w_file && load_shaped("--w", a->w_file, 4, w, "KH, KW, F, C", (int16_t **)&io->Wt)) ||
        (a->dy_file && load_shaped("--dy", a->dy_file, 4, dy, "B, OH, OW, F", (int16_t **)&io->dY)))
        return NPU_EXIT_USAGE;
    if (a->save && npu_cli_out_dir("--save", a->save) != 0)
        return NPU_EXIT_USAGE;
    npu_conv_out_shape(c, kernel, &rows, &cols);
    io->out = malloc((size_t)rows * (size_t)cols * sizeof *io->out);
    io->golden = malloc((size_t)rows * (size_t)cols * sizeof *io->golden);
    return io->out && io->golden ? 0 : NPU_EXIT_FAIL;
}

/* One 4-D tensor as DIR/name. 0 or -1 after the message. */
static int save_4d(const char *dir, const char *name, int elem, const int64_t *shape,
                   const void *data)
{
    char path[4096], err[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (npu_npy_save(path, elem, 4, shape, data, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "npu: --save %s\n", err);
    return -1;
}

int npu_cli_conv_outputs(const npu_args_t *a, const npu_conv_t *c, int kernel, uint64_t seed,
                         int bf16, int done, const npu_conv_io_t *io)
{
    static const char *const out_name[3] = {"Y", "dX", "dW"};
    int64_t x[4], w[4], dy[4], out[4];
    char name[32], err[600];
    int rc = 0;
    conv_shapes(c, kernel, x, w, dy, out);
    if (a->out && !done)
        fprintf(stderr, "npu: --out %s not written: the run did not complete\n", a->out);
    if (a->out && done && npu_npy_save(a->out, 4, 4, out, io->out, err, sizeof err) != 0) {
        fprintf(stderr, "npu: --out %s\n", err);
        rc = -1;
    }
    if (a->save) { /* the inputs the run used: the given ones, the seeded ones otherwise */
        size_t nx = (size_t)(x[0] * x[1] * x[2] * x[3]), nw = (size_t)(w[0] * w[1] * w[2] * w[3]);
        size_t nd = (size_t)(dy[0] * dy[1] * dy[2] * dy[3]);
        int16_t *X = malloc(nx * 2), *W = malloc(nw * 2), *D = malloc(nd * 2);
        if (!X || !W || !D)
            rc = -1;
        else if (bf16) /* as the run seeded them (conv_run.c) */
            npu_conv_operands_bf16(c, seed, X, W, D);
        else
            npu_conv_operands(c, seed, X, W, D);
        if (X && W && D && kernel != NPU_CONV_DX)
            rc |= save_4d(a->save, "X.npy", 2, x, io->X ? io->X : X);
        if (X && W && D && kernel != NPU_CONV_DW)
            rc |= save_4d(a->save, "W.npy", 2, w, io->Wt ? io->Wt : W);
        if (X && W && D && kernel != NPU_CONV_FWD)
            rc |= save_4d(a->save, "dY.npy", 2, dy, io->dY ? io->dY : D);
        free(X);
        free(W);
        free(D);
        snprintf(name, sizeof name, "%s_golden.npy", out_name[kernel]);
        rc |= done ? save_4d(a->save, name, 4, out, io->golden) : 0;
        snprintf(name, sizeof name, "%s.npy", out_name[kernel]);
        rc |= done ? save_4d(a->save, name, 4, out, io->out) : 0;
    }
    return rc;
}

void npu_cli_conv_io_free(npu_conv_io_t *io)
{
    free((void *)io->X);
    free((void *)io->Wt);
    free((void *)io->dY);
    free(io->out);
    free(io->golden);
    memset(io, 0, sizeof *io);
}

/* ---- npu train --layers: the step's tensors ---- */

/* --w W0.npy,W1.npy,...: the i-th file name of the list into buf; 0, or -1 past the last. */
static int nth_file(const char *list, int i, char *buf, size_t n)
{
    const char *p = list, *end;
    for (; i > 0 && p; i--)
        p = (p = strchr(p, ',')) ? p + 1 : NULL;
    if (!p)
        return -1;
    end = strchr(p, ',');
    snprintf(buf, n, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
    return 0;
}

static int count_files(const char *list)
{
    int n = 1;
    for (const char *p = list; (p = strchr(p, ',')) != NULL; p++)
        n++;
    return n;
}

/* The given inputs, each of its exact shape; 0, or NPU_EXIT_USAGE after the message. */
static int train_load(const npu_args_t *a, const npu_mlp_t *mlp, npu_train_io_t *io)
{
    const int L = mlp->layers;
    int64_t x[2] = {mlp->batch, mlp->dims[0]}, dy[2] = {mlp->batch, mlp->dims[L]};
    char file[4096];
    if (a->w_file && count_files(a->w_file) != L) {
        fprintf(stderr, "npu: --w %s: %d files for %d layers (one W_i per layer, separated by "
                        "commas)\n", a->w_file, count_files(a->w_file), L);
        return NPU_EXIT_USAGE;
    }
    if ((a->x_file && load_shaped("--x", a->x_file, 2, x, "batch, D0", (int16_t **)&io->x)) ||
        (a->dy_file && load_shaped("--dy", a->dy_file, 2, dy, "batch, DL", (int16_t **)&io->dy)))
        return NPU_EXIT_USAGE;
    for (int i = 0; a->w_file && i < L; i++) {
        int64_t w[2] = {mlp->dims[i], mlp->dims[i + 1]};
        char names[48];
        snprintf(names, sizeof names, "D%d, D%d", i, i + 1);
        nth_file(a->w_file, i, file, sizeof file);
        if (load_shaped("--w", file, 2, w, names, (int16_t **)&io->w[i]))
            return NPU_EXIT_USAGE;
    }
    return 0;
}

int npu_cli_train_inputs(const npu_args_t *a, const npu_mlp_t *mlp, npu_train_io_t *io)
{
    const int L = mlp->layers;
    size_t B = (size_t)mlp->batch;
    int ok = 1, rc;
    memset(io, 0, sizeof *io);
    if ((rc = train_load(a, mlp, io)) != 0)
        return rc;
    if (!a->save)
        return 0;
    if (npu_cli_out_dir("--save", a->save) != 0)
        return NPU_EXIT_USAGE;
    ok &= (io->x_used = malloc(2 * B * (size_t)mlp->dims[0])) != NULL;
    ok &= (io->dy_used = malloc(2 * B * (size_t)mlp->dims[L])) != NULL;
    for (int i = 0; i < L; i++) {
        size_t K = (size_t)mlp->dims[i], N = (size_t)mlp->dims[i + 1];
        ok &= (io->w_used[i] = malloc(2 * K * N)) != NULL;
        ok &= (io->y[i] = malloc(4 * B * N)) != NULL;
        ok &= (io->dw[i] = malloc(4 * K * N)) != NULL;
        ok &= i == 0 || (io->dx[i] = malloc(4 * B * K)) != NULL;
    }
    if (!ok)
        fprintf(stderr, "npu: out of memory for the step's tensors\n");
    return ok ? 0 : NPU_EXIT_FAIL;
}

int npu_cli_train_outputs(const npu_args_t *a, const npu_mlp_t *mlp, const npu_train_io_t *io)
{
    const int L = mlp->layers, B = mlp->batch;
    char name[32];
    int rc = 0;
    if (!a->save)
        return 0;
    rc |= save_matrix(a->save, "X.npy", 2, B, mlp->dims[0], io->x_used);
    rc |= save_matrix(a->save, "dY.npy", 2, B, mlp->dims[L], io->dy_used);
    for (int i = 0; i < L && rc == 0; i++) {
        int K = mlp->dims[i], N = mlp->dims[i + 1];
        snprintf(name, sizeof name, "W%d.npy", i);
        rc |= save_matrix(a->save, name, 2, K, N, io->w_used[i]);
        snprintf(name, sizeof name, "Y%d.npy", i);
        rc |= save_matrix(a->save, name, 4, B, N, io->y[i]);
        snprintf(name, sizeof name, "dW%d.npy", i);
        rc |= save_matrix(a->save, name, 4, K, N, io->dw[i]);
        snprintf(name, sizeof name, "dX%d.npy", i);
        rc |= i > 0 ? save_matrix(a->save, name, 4, B, K, io->dx[i]) : 0;
    }
    return rc;
}

void npu_cli_train_io_free(npu_train_io_t *io)
{
    free((void *)io->x);
    free((void *)io->dy);
    free(io->x_used);
    free(io->dy_used);
    for (int i = 0; i < NPU_TRAIN_MAX_LAYERS; i++) {
        free((void *)io->w[i]);
        free(io->w_used[i]);
        free(io->y[i]);
        free(io->dx[i]);
        free(io->dw[i]);
    }
    memset(io, 0, sizeof *io);
}
