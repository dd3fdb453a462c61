/* out.c - machine-readable output: JSON with metadata, CSV tables; see out.h. */
#include "run/out.h"

#include <stdlib.h>
#include <string.h>

cJSON *npu_out_json_cfg(const npu_cfg_t *cfg)
{
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return NULL;
    cJSON_AddStringToObject(c, "name", cfg->name ? cfg->name : "?");
    cJSON_AddNumberToObject(c, "s", cfg->s);
    cJSON_AddNumberToObject(c, "spm_banks", cfg->spm_banks);
    cJSON_AddNumberToObject(c, "spm_bank_words", cfg->spm_bank_words);
    cJSON_AddNumberToObject(c, "obuf_rows", cfg->obuf_rows);
    return c;
}

cJSON *npu_out_json_new(const npu_out_meta_t *m)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddNumberToObject(root, "schema", NPU_OUT_SCHEMA);
    cJSON_AddStringToObject(root, "command", m->command ? m->command : "?");
    cJSON_AddStringToObject(root, "rev", m->rev ? m->rev : "unknown");
    cJSON_AddNumberToObject(root, "seed", (double)m->seed);
    cJSON_AddItemToObject(root, "config", npu_out_json_cfg(m->cfg));
    return root;
}

int npu_out_json_print(FILE *f, cJSON *root)
{
    char *s = root ? cJSON_PrintUnformatted(root) : NULL;
    int rc = s && fprintf(f, "%s\n", s) > 0 ? 0 : -1;
    free(s);
    cJSON_Delete(root);
    fflush(f);
    return rc;
}

void npu_out_csv_meta(FILE *f, const npu_out_meta_t *m)
{
    fprintf(f, "# npu %s config=%s seed=%llu rev=%s schema=%d\n", m->command ? m->command : "?",
            m->cfg && m->cfg->name ? m->cfg->name : "?", (unsigned long long)m->seed,
            m->rev ? m->rev : "unknown", NPU_OUT_SCHEMA);
}

int npu_table_open(npu_table_t *t, const char *csv_path, int json, const npu_out_meta_t *m,
                   const char *const *cols, int ncols)
{
    memset(t, 0, sizeof *t);
    t->cols = cols;
    t->ncols = ncols;
    if (csv_path && !(t->csv = fopen(csv_path, "w")))
        return -1;
    if (t->csv) {
        npu_out_csv_meta(t->csv, m);
        for (int i = 0; i < ncols; i++)
            fprintf(t->csv, "%s%s", i ? "," : "", cols[i]);
        fputc('\n', t->csv);
    }
    if (json)
        t->rows = cJSON_CreateArray();
    return 0;
}

/* The next column's name, and the CSV separator before its value; opens the JSON row. */
static const char *next_col(npu_table_t *t)
{
    const char *name = t->col < t->ncols ? t->cols[t->col] : "?";
    if (t->csv && t->col)
        fputc(',', t->csv);
    if (t->rows && !t->row)
        t->row = cJSON_CreateObject();
    t->col++;
    return name;
}

void npu_table_str(npu_table_t *t, const char *v)
{
    const char *name = next_col(t);
    v = v ? v : "";
    if (t->csv && strpbrk(v, ",\"\r\n")) { /* RFC 4180: quoted, quotes doubled */
        fputc('"', t->csv);
        for (const char *p = v; *p; p++) {
            if (*p == '"')
                fputc('"', t->csv);
            fputc(*p, t->csv);
        }
        fputc('"', t->csv);
    } else if (t->csv) {
        fputs(v, t->csv);
    }
    if (t->row)
        cJSON_AddStringToObject(t->row, name, v);
}

void npu_table_int(npu_table_t *t, long long v)
{
    const char *name = next_col(t);
    if (t->csv)
        fprintf(t->csv, "%lld", v);
    if (t->row)
        cJSON_AddNumberToObject(t->row, name, (double)v);
}

void npu_table_u64(npu_table_t *t, uint64_t v)
{
    const char *name = next_col(t);
    if (t->csv)
        fprintf(t->csv, "%llu", (unsigned long long)v);
    if (t->row)
        cJSON_AddNumberToObject(t->row, name, (double)v);
}

void npu_table_num(npu_table_t *t, double v, const char *csv_fmt)
{
    const char *name = next_col(t);
    if (t->csv)
        fprintf(t->csv, csv_fmt, v);
    if (t->row)
        cJSON_AddNumberToObject(t->row, name, v); /* cJSON writes NaN and inf as null */
}

void npu_table_end_row(npu_table_t *t)
{
    if (t->csv)
        fputc('\n', t->csv);
    if (t->rows && t->row)
        cJSON_AddItemToArray(t->rows, t->row);
    t->row = NULL;
    t->col = 0;
}

cJSON *npu_table_close(npu_table_t *t, int *csv_err)
{
    cJSON *rows = t->rows;
    *csv_err = 0;
    if (t->csv) {
        *csv_err = ferror(t->csv) != 0;
        *csv_err |= fclose(t->csv) != 0;
    }
    cJSON_Delete(t->row);
    memset(t, 0, sizeof *t);
    return rows;
}
