/*
 * out.h - the machine-readable output of a run: one JSON object per run, printed on one line
 * with cJSON (a maintained library: correct escaping, non-finite numbers written as null, no
 * hand-built JSON), and CSV tables whose first line is a `# ...` comment with the same metadata.
 *
 * Every JSON object starts with the metadata: "schema" (NPU_OUT_SCHEMA, bumped when a key changes
 * meaning or goes away), "command", "rev" (the git revision the binary was built from),
 * "seed" and "config" ({"name", "s", ...}); the command's own keys follow.
 */
#ifndef NPU_OUT_H
#define NPU_OUT_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "hw/npu_cfg.h"

#define NPU_OUT_SCHEMA 1

typedef struct npu_out_meta {
    const char *command; /* "gemm", "conv", ... */
    const npu_cfg_t *cfg;
    uint64_t seed;
    const char *rev;     /* NULL: "unknown" */
} npu_out_meta_t;

/* A new JSON object holding the metadata (NULL on out-of-memory). */
cJSON *npu_out_json_new(const npu_out_meta_t *m);
/* The configuration object {"name", "s", "spm_banks", "spm_bank_words", "obuf_rows"}. */
cJSON *npu_out_json_cfg(const npu_cfg_t *cfg);
/* Prints root on one line (cJSON_PrintUnformatted) and a newline, then deletes it. 0, or -1 when
 * root is NULL or printing fails. */
int npu_out_json_print(FILE *f, cJSON *root);

/* The CSV's first line: "# npu <command> config=<name> seed=<n> rev=<rev> schema=<N>". */
void npu_out_csv_meta(FILE *f, const npu_out_meta_t *m);

/* A table written as CSV (metadata line, header, rows) and / or collected as JSON rows (one
 * object per row, keyed by the column names): the row is described once, for both. */
typedef struct npu_table {
    FILE *csv;                /* NULL: no CSV */
    cJSON *rows;              /* NULL: no JSON rows */
    const char *const *cols;  /* column names */
    int ncols, col;
    cJSON *row;               /* the JSON row being filled */
} npu_table_t;

/* Opens csv_path (NULL: no CSV) and, with json, the JSON rows. 0, or -1 when the file cannot be
 * opened (errno set; nothing to close). */
int npu_table_open(npu_table_t *t, const char *csv_path, int json, const npu_out_meta_t *m,
                   const char *const *cols, int ncols);
void npu_table_str(npu_table_t *t, const char *v);   /* CSV-quoted when it holds , " or a newline */
void npu_table_int(npu_table_t *t, long long v);
void npu_table_u64(npu_table_t *t, uint64_t v);
void npu_table_num(npu_table_t *t, double v, const char *csv_fmt); /* e.g. "%.6f" */
void npu_table_end_row(npu_table_t *t);
/* Closes the CSV; returns the JSON rows (the caller adds them to its object) or NULL. *csv_err
 * is set when writing the CSV failed. */
cJSON *npu_table_close(npu_table_t *t, int *csv_err);

#endif
