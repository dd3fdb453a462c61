/*
 * gencfg - turn configs/<NAME>.cfg into the generated build files of one configuration.
 *
 *   gencfg <configs/NAME.cfg> <outdir>
 *
 * Input: lines `KEY = VALUE   # comment` with integer values (decimal, or hex with 0x).
 * Every key of the table below must appear exactly once; unknown keys, duplicates and
 * non-integer values are errors (reported as file:line, exit code 2).
 *
 * Calibration: configs/NAME.calib beside the .cfg, when it exists (written by `npu calibrate
 * --out`, docs/compiler.md "Slicing"), gives the slicing stage's fitted cost constants: the same
 * `KEY = VALUE` lines, every key of CAL_KEYS once. Its S and DRAM keys record what it was
 * measured under and must equal the .cfg's, so a stale file is an error, not a silent misfit.
 *
 * Output (each file is rewritten only when its content changes, so make does not rebuild):
 *   npu_params.h   C: NPU_CFG_NAME, NPU_CFG_<KEY>, struct npu_cfg and NPU_CFG_INIT (with the
 *                  calibration, valid = 0 without a .calib file)
 *   npu_params.vh  Verilog: `define NPU_CFG_<KEY> (informational; the RTL takes its
 *                  parameters as top-level -G overrides, see verilator.f)
 *   verilator.f    one -G<KEY>=<value> per line for the RTL parameters
 *   npu_defs.vh    localparams generated from the X-macro lists of sw/hw/npu_defs.h, to be
 *                  `include'd inside module bodies (instruction fields F_<FORMAT>_<NAME>_LSB/_W,
 *                  opcodes, tags, modes, errors, CSRs, counters)
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../hw/npu_defs.h"

/* ---- the configuration keys (order = struct npu_cfg field order) ---- */
struct key {
    const char *name;  /* KEY in the .cfg */
    const char *field; /* struct npu_cfg member */
    int rtl;           /* passed to Verilator as -G */
    int named;         /* 1: the value is a name from NPU_DTYPES, stored as its number */
};

static const struct key KEYS[] = {
    {"S", "s", 1, 0},
    {"SPM_BANKS", "spm_banks", 1, 0},
    {"SPM_BANK_WORDS", "spm_bank_words", 1, 0},
    {"OBUF_ROWS", "obuf_rows", 1, 0},
    {"LBUF_H_DEPTH", "lbuf_h_depth", 1, 0},
    {"LBUF_V_DEPTH", "lbuf_v_depth", 1, 0},
    {"QUEUE_DEPTH", "queue_depth", 1, 0},
    {"TOKEN_MAX", "token_max", 1, 0},
    {"DRAM_ADDR_BITS", "dram_addr_bits", 1, 0},
    {"MAX_BURST_BEATS", "max_burst_beats", 1, 0},
    {"MAX_OUTSTANDING", "max_outstanding", 1, 0},
    {"WATCHDOG_CYCLES", "watchdog_cycles", 1, 0},
    {"DRAM_BW", "dram_bw", 0, 0},
    {"DRAM_LATENCY", "dram_latency", 0, 0},
    {"DRAM_BURST_COST", "dram_burst_cost", 0, 0},
    {"DTYPE", "dtype", 1, 1},
    {"BEAT_WORDS", "beat_words", 1, 0},
    {"LOAD_PIPELINE", "load_pipeline", 1, 0},
    {"STORE_PIPELINE", "store_pipeline", 1, 0},
};
enum { NKEYS = (int)(sizeof KEYS / sizeof KEYS[0]) };
enum {
    K_S, K_SPM_BANKS, K_SPM_BANK_WORDS, K_OBUF_ROWS, K_LBUF_H_DEPTH, K_LBUF_V_DEPTH,
    K_QUEUE_DEPTH, K_TOKEN_MAX, K_DRAM_ADDR_BITS, K_MAX_BURST_BEATS, K_MAX_OUTSTANDING,
    K_WATCHDOG_CYCLES, K_DRAM_BW, K_DRAM_LATENCY, K_DRAM_BURST_COST, K_DTYPE, K_BEAT_WORDS, K_LOAD_PIPELINE,
    K_STORE_PIPELINE
};

/* A DTYPE name (NPU_DTYPES) as its number; -1 when it names none. */
static long dtype_value(const char *v)
{
#define X(nm, num, text) if (!strcmp(v, text)) return num;
    NPU_DTYPES(X)
#undef X
    return -1;
}

/* configs/NAME.calib: the conditions of the measurement (checked against the .cfg), which sweep
 * produced it, and the slicing stage's cost constants in Q16 cycles (npu_cfg_calib_t). */
static const struct key CAL_KEYS[] = {
    {"S", "s", 0, 0},
    {"MAX_BURST_BEATS", "max_burst_beats", 0, 0},
    {"MAX_OUTSTANDING", "max_outstanding", 0, 0},
    {"DRAM_BW", "dram_bw", 0, 0},
    {"DRAM_LATENCY", "dram_latency", 0, 0},
    {"DRAM_BURST_COST", "dram_burst_cost", 0, 0},
    {"BEAT_WORDS", "beat_words", 0, 0},
    {"LOAD_PIPELINE", "load_pipeline", 0, 0},
    {"QUICK", "quick", 0, 0},
    {"XFER_FIXED", "xfer_fixed", 0, 0},
    {"BURST", "burst", 0, 0},
    {"BYTE", "byte", 0, 0},
    {"WAVE", "wave", 0, 0},
    {"DRAIN_FIXED", "drain_fixed", 0, 0},
    {"DRAIN_ROW", "drain_row", 0, 0},
    {"LAT_FIXED", "lat_fixed", 0, 0},
    {"WINDOW", "window", 0, 0},
    {"XFER_IDLE", "xfer_idle", 0, 0},
};
enum { NCAL = (int)(sizeof CAL_KEYS / sizeof CAL_KEYS[0]), NCAL_COND = 8, C_QUICK = 8, C_XFER_FIXED = 9 };
static const int CAL_COND_KEY[NCAL_COND] = {K_S, K_MAX_BURST_BEATS, K_MAX_OUTSTANDING, K_DRAM_BW,
                                            K_DRAM_LATENCY, K_DRAM_BURST_COST, K_BEAT_WORDS, K_LOAD_PIPELINE};

static long val[NKEYS];
static int line_of[NKEYS]; /* 0 = not seen */
static long cal_val[NCAL];
static int cal_line[NCAL];
static int have_cal;       /* a .calib file was read */
static const char *cfg_path; /* the file being parsed (messages) */
static const char *cfg_name; /* basename without .cfg */
static int n_errors;

/* The keys one kind of file takes and where their values go. */
struct keyset {
    const struct key *keys;
    int n;
    long *val;
    int *line_of;
};
static const struct keyset CFG_SET = {KEYS, NKEYS, val, line_of};
static const struct keyset CAL_SET = {CAL_KEYS, NCAL, cal_val, cal_line};

static void err_at(int line, const char *fmt, ...)
{
    va_list ap;
    if (line > 0)
        fprintf(stderr, "%s:%d: error: ", cfg_path, line);
    else
        fprintf(stderr, "%s: error: ", cfg_path);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    n_errors++;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "gencfg: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

/* ---- parsing ---- */
static char *trim(char *s)
{
    char *e;
    while (*s && isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = 0;
    return s;
}

static int parse_int(const char *s, long *out)
{
    char *end;
    long long v;
    int base = 10;
    const char *p = s;
    if (*p == '+' || *p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16;
    errno = 0;
    v = strtoll(s, &end, base);
    if (errno || *end || end == s)
        return -1;
    if (v < -2147483647LL - 1 || v > 2147483647LL)
        return -1;
    *out = (long)v;
    return 0;
}

/* Parses the lines of f (cfg_path names it in messages) for the keys of ks; errors are counted
 * in n_errors. */
static void parse_stream(FILE *f, const struct keyset *ks)
{
    char buf[1024];
    int line = 0;
    while (fgets(buf, sizeof buf, f)) {
        char *s, *eq, *k, *v, *hash;
        int i, found = -1;
        long x;
        line++;
        if (!strchr(buf, '\n') && !feof(f)) {
            err_at(line, "line too long");
            while (fgets(buf, sizeof buf, f) && !strchr(buf, '\n'))
                ;
            continue;
        }
        hash = strchr(buf, '#');
        if (hash)
            *hash = 0;
        s = trim(buf);
        if (!*s)
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            err_at(line, "expected `KEY = VALUE`, got `%s`", s);
            continue;
        }
        *eq = 0;
        k = trim(s);
        v = trim(eq + 1);
        if (!*k) {
            err_at(line, "missing key before `=`");
            continue;
        }
        for (i = 0; i < ks->n; i++)
            if (!strcmp(k, ks->keys[i].name))
                found = i;
        if (found < 0) {
            err_at(line, "unknown key `%s`", k);
            continue;
        }
        if (ks->line_of[found]) {
            err_at(line, "duplicate key %s (first set on line %d)", k, ks->line_of[found]);
            continue;
        }
        ks->line_of[found] = line; /* seen, even if the value below is bad */
        if (!*v) {
            err_at(line, "missing value for %s", k);
            continue;
        }
        if (ks->keys[found].named) {
            x = dtype_value(v);
            if (x < 0) {
                err_at(line, "value of %s must be int16 or bf16, got `%s`", k, v);
                continue;
            }
        } else if (parse_int(v, &x)) {
            err_at(line, "value of %s is not an integer: `%s`", k, v);
            continue;
        }
        ks->val[found] = x;
    }
    if (ferror(f))
        die("error reading %s", cfg_path);
    {
        int i;
        for (i = 0; i < ks->n; i++)
            if (!ks->line_of[i])
                err_at(0, "missing key %s", ks->keys[i].name);
    }
}

static void parse_file(const char *path, const struct keyset *ks)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot open %s: %s", path, strerror(errno));
    cfg_path = path;
    parse_stream(f, ks);
    fclose(f);
}

/* The calibration file beside the .cfg (NAME.cfg -> NAME.calib), if there is one: parsed, its
 * values checked, its measurement conditions compared with the configuration's. */
static void parse_calib(const char *cfg)
{
    static char path[4096];
    size_t n = strlen(cfg);
    FILE *f;
    int i;
    if (n < 4 || strcmp(cfg + n - 4, ".cfg") || n + 3 > sizeof path)
        return;
    memcpy(path, cfg, n - 4);
    memcpy(path + n - 4, ".calib", 7);
    f = fopen(path, "r");
    if (!f)
        return; /* no calibration: the slicing stage derives its constants from the config */
    fclose(f);
    have_cal = 1;
    parse_file(path, &CAL_SET);
    if (n_errors)
        return;
    for (i = 0; i < NCAL_COND; i++)
        if (cal_val[i] != val[CAL_COND_KEY[i]])
            err_at(cal_line[i], "measured with %s = %ld but %s has %ld: regenerate it with "
                   "`build/%s/npu calibrate --out %s`", CAL_KEYS[i].name, cal_val[i], cfg,
                   val[CAL_COND_KEY[i]], cfg_name, path);
    if (cal_val[C_QUICK] != 0 && cal_val[C_QUICK] != 1)
        err_at(cal_line[C_QUICK], "QUICK = %ld must be 0 or 1", cal_val[C_QUICK]);
    for (i = C_XFER_FIXED; i < NCAL; i++)
        if (cal_val[i] < 0)
            err_at(cal_line[i], "%s = %ld must not be negative", CAL_KEYS[i].name, cal_val[i]);
}

/* ---- validation ---- */
static int is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

static void check_range(int k, long lo, long hi)
{
    if (val[k] < lo || val[k] > hi)
        err_at(line_of[k], "%s = %ld out of range [%ld, %ld]", KEYS[k].name, val[k], lo, hi);
}

static void check_pow2(int k)
{
    if (!is_pow2(val[k]))
        err_at(line_of[k], "%s = %ld must be a power of two", KEYS[k].name, val[k]);
}

static void validate(void)
{
    int i;
    int before = n_errors;
    for (i = 0; i < NKEYS; i++)
        if (val[i] < 0)
            err_at(line_of[i], "%s = %ld must not be negative", KEYS[i].name, val[i]);
    if (n_errors != before)
        return;
    check_range(K_S, 1, 64);
    check_pow2(K_S);
    check_pow2(K_SPM_BANKS);
    check_pow2(K_SPM_BANK_WORDS);
    if ((long long)val[K_SPM_BANKS] * val[K_SPM_BANK_WORDS] > 65536)
        err_at(line_of[K_SPM_BANK_WORDS], "SPM_BANKS * SPM_BANK_WORDS = %lld exceeds 65536 (16-bit SPM addresses)",
               (long long)val[K_SPM_BANKS] * val[K_SPM_BANK_WORDS]);
    check_pow2(K_OBUF_ROWS);
    check_range(K_OBUF_ROWS, 1, 32768); /* 2*OBUF_ROWS addresses fit the 16-bit obuf_addr */
    check_range(K_LBUF_H_DEPTH, 1, 1L << 20);
    check_range(K_LBUF_V_DEPTH, 1, 1L << 20);
    check_range(K_QUEUE_DEPTH, 1, 15);     /* QSTATE reports queue counts in 4 bits */
    check_range(K_TOKEN_MAX, 1, 15);       /* QSTATE reports token counts in 4 bits */
    check_range(K_DRAM_ADDR_BITS, 16, 32); /* the 32-bit dram_addr field */
    check_range(K_MAX_BURST_BEATS, 1, 256);
    check_range(K_MAX_OUTSTANDING, 1, 16);
    check_range(K_WATCHDOG_CYCLES, 0, 2147483647L);
    check_range(K_DRAM_BW, 1, 1L << 20);
    check_range(K_DRAM_LATENCY, 0, 1L << 20);
    check_range(K_DRAM_BURST_COST, 0, 1L << 20);
    /* A DRAM beat is BEAT_WORDS SPM words (4*S bytes each); a power of two that divides 4 KiB,
     * so a burst's beats never straddle a 4 KiB line and the line rule is a shift. */
    check_range(K_BEAT_WORDS, 1, 8);
    check_pow2(K_BEAT_WORDS);
    check_range(K_LOAD_PIPELINE, 0, 1); /* docs/memory.md "Pipelined LOADs" */
    check_range(K_STORE_PIPELINE, 0, 1); /* docs/memory.md "Pipelined STOREs" */
    if (n_errors == before && 4 * val[K_S] * val[K_BEAT_WORDS] > 4096)
        err_at(line_of[K_BEAT_WORDS], "a DRAM beat of 4*S*BEAT_WORDS = %ld bytes exceeds 4096",
               4 * val[K_S] * val[K_BEAT_WORDS]);
}

/* ---- output buffer ---- */
struct buf {
    char *p;
    size_t n, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    int need;
    for (;;) {
        size_t room = b->cap - b->n;
        va_start(ap, fmt);
        need = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
        va_end(ap);
        if (need < 0)
            die("vsnprintf failed");
        if ((size_t)need < room) {
            b->n += (size_t)need;
            return;
        }
        b->cap = (b->cap + (size_t)need + 1) * 2;
        b->p = (char *)realloc(b->p, b->cap);
        if (!b->p)
            die("out of memory");
    }
}

static void mkdir_p(const char *dir)
{
    char tmp[4096];
    size_t i, n = strlen(dir);
    if (n == 0 || n >= sizeof tmp)
        die("bad output directory `%s`", dir);
    memcpy(tmp, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (tmp[i] == '/' || tmp[i] == 0) {
            char c = tmp[i];
            tmp[i] = 0;
            if (mkdir(tmp, 0777) && errno != EEXIST)
                die("cannot create directory %s: %s", tmp, strerror(errno));
            tmp[i] = c;
        }
    }
}

/* Write b to dir/name unless the file already holds exactly that content. */
static void write_if_changed(const char *dir, const char *name, const struct buf *b)
{
    char path[4096], tmp[4200];
    FILE *f;
    int same = 0;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (f) {
        char *old = (char *)malloc(b->n + 1);
        size_t got;
        if (!old)
            die("out of memory");
        got = fread(old, 1, b->n + 1, f);
        same = got == b->n && memcmp(old, b->p, b->n) == 0;
        free(old);
        fclose(f);
    }
    if (same)
        return;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "wb");
    if (!f)
        die("cannot write %s: %s", tmp, strerror(errno));
    if (fwrite(b->p, 1, b->n, f) != b->n || fclose(f))
        die("cannot write %s: %s", tmp, strerror(errno));
    if (rename(tmp, path))
        die("cannot rename %s to %s: %s", tmp, path, strerror(errno));
}

/* ---- generators ---- */

static void gen_params_h(struct buf *b)
{
    int i;
    bprintf(b, "/* Generated by sw/tools/gencfg from %s.cfg -- do not edit. */\n", cfg_name);
    bprintf(b, "#ifndef NPU_PARAMS_H\n#define NPU_PARAMS_H\n\n");
    bprintf(b, "#define NPU_CFG_NAME \"%s\"\n", cfg_name);
    for (i = 0; i < NKEYS; i++)
        bprintf(b, "#define NPU_CFG_%s %ld\n", KEYS[i].name, val[i]);
    bprintf(b, "\n/* Derived values. */\n");
    bprintf(b, "#define NPU_CFG_WORD_BYTES %ld /* 4*S: one SPM word */\n", 4 * val[K_S]);
    bprintf(b, "#define NPU_CFG_BEAT_BYTES %ld /* 4*S*BEAT_WORDS: one DRAM beat */\n",
            4 * val[K_S] * val[K_BEAT_WORDS]);
    bprintf(b, "#define NPU_CFG_SPM_WORDS %ld /* SPM_BANKS*SPM_BANK_WORDS */\n",
            val[K_SPM_BANKS] * val[K_SPM_BANK_WORDS]);
    bprintf(b, "#define NPU_CFG_DRAM_BYTES (1UL << %ld)\n", val[K_DRAM_ADDR_BITS]);
    bprintf(b, "\n#ifndef NPU_CFG_T_DEFINED\n#define NPU_CFG_T_DEFINED\n");
    bprintf(b, "typedef struct npu_cfg_calib {\n    int valid;\n    unsigned");
    for (i = C_XFER_FIXED; i < NCAL; i++)
        bprintf(b, "%s %s", i > C_XFER_FIXED ? "," : "", CAL_KEYS[i].field);
    bprintf(b, ";\n} npu_cfg_calib_t;\n");
    bprintf(b, "typedef struct npu_cfg {\n    const char *name;\n    int");
    for (i = 0; i < NKEYS; i++)
        bprintf(b, "%s %s", i ? "," : "", KEYS[i].field);
    bprintf(b, ";\n    npu_cfg_calib_t calib;\n} npu_cfg_t;\n#endif\n\n");
    bprintf(b, "/* Calibration (%s.calib): 1 when its constants came from `npu calibrate --quick`. */\n",
            cfg_name);
    bprintf(b, "#define NPU_CFG_CALIB_QUICK %ld\n", have_cal ? cal_val[C_QUICK] : 0L);
    bprintf(b, "#define NPU_CFG_INIT { NPU_CFG_NAME");
    for (i = 0; i < NKEYS; i++)
        bprintf(b, ", %ld", val[i]);
    bprintf(b, ", { %d", have_cal);
    for (i = C_XFER_FIXED; i < NCAL; i++)
        bprintf(b, ", %ldu", have_cal ? cal_val[i] : 0L);
    bprintf(b, " } }\n\n#endif /* NPU_PARAMS_H */\n");
}

static void gen_params_vh(struct buf *b)
{
    int i;
    bprintf(b, "// Generated by sw/tools/gencfg from %s.cfg -- do not edit.\n", cfg_name);
    bprintf(b, "// Informational macros of configuration \"%s\". The RTL receives its hardware\n", cfg_name);
    bprintf(b, "// parameters as top-level overrides (-G, see verilator.f), not from this file.\n");
    bprintf(b, "`ifndef NPU_PARAMS_VH\n`define NPU_PARAMS_VH\n");
    bprintf(b, "`define NPU_CFG_NAME \"%s\"\n", cfg_name);
    for (i = 0; i < NKEYS; i++)
        bprintf(b, "`define NPU_CFG_%s %ld\n", KEYS[i].name, val[i]);
    bprintf(b, "`endif\n");
}

static void gen_verilator_f(struct buf *b)
{
    int i;
    for (i = 0; i < NKEYS; i++)
        if (KEYS[i].rtl)
            bprintf(b, "-G%s=%ld\n", KEYS[i].name, val[i]);
}

static void upper(char *dst, const char *src, size_t n)
{
    size_t i;
    for (i = 0; i + 1 < n && src[i]; i++)
        dst[i] = (char)toupper((unsigned char)src[i]);
    dst[i] = 0;
}

/* Width of the opcode field (INSN op) of NPU_ISA_FIELDS. */
static int op_width(void)
{
#define X(fo, nm, w, l, wd) if (!strcmp(#fo, "INSN") && !strcmp(#nm, "op")) return wd;
    NPU_ISA_FIELDS(X)
#undef X
    die("internal error: NPU_ISA_FIELDS has no INSN op field");
    return 0;
}

static void field_vh(struct buf *b, const char *fmt, const char *name, int word, int lsb, int w)
{
    bprintf(b, "localparam integer F_%s_%s_LSB = %d, F_%s_%s_W = %d; // w%d[", fmt, name,
            32 * word + lsb, fmt, name, w, word);
    if (w > 1)
        bprintf(b, "%d:", lsb + w - 1);
    bprintf(b, "%d]\n", lsb);
}

/* The instruction fields: bit position in the 128-bit instruction and width of each. */
static void gen_fields_vh(struct buf *b)
{
    char f[64], u[64];
    bprintf(b, "// Instruction fields (NPU_ISA_FIELDS): F_<FORMAT>_<NAME>_LSB is the field's lowest bit\n");
    bprintf(b, "// in the 128-bit instruction {w3, w2, w1, w0} (32 * word + lsb), F_<FORMAT>_<NAME>_W its\n");
    bprintf(b, "// width: insn[F_LOAD_ROWS_LSB +: F_LOAD_ROWS_W]. FORMAT is the opcode (INSN: every one).\n");
    bprintf(b, "localparam integer INSN_BITS = %d;\n", 8 * NPU_INSN_BYTES);
#define X(fo, nm, w, l, wd)                                                                     \
    upper(f, #fo, sizeof f);                                                                    \
    upper(u, #nm, sizeof u);                                                                    \
    field_vh(b, f, u, w, l, wd);
    NPU_ISA_FIELDS(X)
#undef X
}

static void gen_defs_vh(struct buf *b)
{
    int n, ow = op_width();
    char u[64];
    bprintf(b, "// Generated by sw/tools/gencfg from sw/hw/npu_defs.h -- do not edit.\n");
    bprintf(b, "// Names shared by the RTL and the C host. `include this file inside a module\n");
    bprintf(b, "// body: it holds only localparams (no include guard, no `define).\n");
    bprintf(b, "/* verilator lint_save */\n/* verilator lint_off UNUSED */\n\n");

    bprintf(b, "localparam integer INSN_BYTES = %d;\n", NPU_INSN_BYTES);
    gen_fields_vh(b);

    bprintf(b, "\n// Opcodes (field INSN op); queue L = LOAD, E = EXEC, S = STORE\n");
#define X(nm, v, q, t)                                                                          \
    bprintf(b, "localparam [%d:0] OP_%-6s = %d'h%02X; // %s: %s\n", ow - 1, #nm, ow,          \
            (unsigned)(v), #q, t);
    NPU_OPCODES(X)
#undef X

    bprintf(b, "\n// Tensor tags\n");
#define X(nm, v) bprintf(b, "localparam [2:0] TAG_%-7s = 3'd%d;\n", #nm, (int)(v));
    NPU_TAGS(X)
#undef X
    bprintf(b, "localparam integer NUM_TAGS = %d;\n", (int)NPU_NUM_TAGS);

    bprintf(b, "\n// FlexSA modes\n");
#define X(nm, v) bprintf(b, "localparam [1:0] MODE_%-3s = 2'd%d;\n", #nm, (int)(v));
    NPU_MODES(X)
#undef X
    bprintf(b, "localparam integer NUM_MODES = %d;\n", (int)NPU_NUM_MODES);

    bprintf(b, "\n// Vector operations (VEC field vop)\n");
#define X(nm, v, rb, nw, t) bprintf(b, "localparam [3:0] VOP_%-8s = 4'd%d; // %s\n", #nm, (int)(v), t);
    NPU_VOPS(X)
#undef X
    bprintf(b, "localparam integer NUM_VOPS = %d;\n", (int)NPU_NUM_VOPS);
    bprintf(b, "localparam [15:0] VOP_B_MASK = 16'h%04x; // bit v: op v reads b\n",
            (unsigned)NPU_VOP_B_MASK);
    bprintf(b, "localparam [15:0] VOP_NOWIDE_MASK = 16'h%04x; // bit v: op v has no 32-bit form\n",
            (unsigned)NPU_VOP_NOWIDE_MASK);

    bprintf(b, "\n// Element types (parameter DTYPE, CSR HW_DTYPE)\n");
#define X(nm, v, t) bprintf(b, "localparam integer DTYPE_%-5s = %d; // %s\n", #nm, (int)(v), t);
    NPU_DTYPES(X)
#undef X

    bprintf(b, "\n// Error codes (STATUS[15:8])\n");
#define X(nm, v, t) bprintf(b, "localparam [7:0] ERR_%-14s = 8'd%d; // %s\n", #nm, (int)(v), t);
    NPU_ERRORS(X)
#undef X

    bprintf(b, "\n// States (STATUS[1:0])\n");
#define X(nm, v) bprintf(b, "localparam [1:0] ST_%-7s = 2'd%d;\n", #nm, (int)(v));
    NPU_STATES(X)
#undef X

    bprintf(b, "\n// CSR word addresses\n");
#define X(nm, v, t) bprintf(b, "localparam [11:0] CSR_%-9s = 12'h%03X; // %s\n", #nm, (unsigned)(v), t);
    NPU_CSRS(X)
#undef X
    bprintf(b, "localparam [11:0] CSR_CNT_LO    = 12'h%03X; // counter i low word at CSR_CNT_LO + i\n",
            (unsigned)NPU_CSR_CNT_LO);
    bprintf(b, "localparam [11:0] CSR_CNT_HI    = 12'h%03X; // counter i high word at CSR_CNT_HI + i\n",
            (unsigned)NPU_CSR_CNT_HI);
    bprintf(b, "// NOCSTATE fields (sw/hw/npu_defs.h): channel c at c * NOC_CH_BITS\n");
    bprintf(b, "localparam integer NOC_CH_BITS = %d;\n", NPU_NOC_CH_BITS);
    bprintf(b, "localparam integer NOC_VLD = %d, NOC_BLK = %d, NOC_GID = %d, NOC_WAIT = %d;\n",
            NPU_NOC_VLD, NPU_NOC_BLK, NPU_NOC_GID, NPU_NOC_WAIT);

    bprintf(b, "\n// Performance counter indices\n");
    n = 0;
#define X(nm, t)                                                                     \
    upper(u, #nm, sizeof u);                                                         \
    bprintf(b, "localparam integer CNT_%-17s = %d; // %s\n", u, n, t);                \
    n++;
    NPU_COUNTERS(X)
#undef X
    if (n != (int)NPU_NUM_COUNTERS)
        die("internal error: counter count mismatch");
    bprintf(b, "localparam integer NUM_COUNTERS = %d;\n", n);
    bprintf(b, "\n/* verilator lint_restore */\n");
}

static const char *base_name(const char *path)
{
    static char name[256];
    const char *s = strrchr(path, '/');
    size_t n;
    s = s ? s + 1 : path;
    n = strlen(s);
    if (n > 4 && !strcmp(s + n - 4, ".cfg"))
        n -= 4;
    if (n == 0 || n >= sizeof name)
        die("bad configuration file name `%s`", path);
    memcpy(name, s, n);
    name[n] = 0;
    {
        size_t i;
        for (i = 0; i < n; i++)
            if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
                die("configuration name `%s` may only contain letters, digits, '_' and '-'", name);
    }
    return name;
}

/* The parser and checks as one call, for tests/fuzz/fuzz_gencfg.c: forgets any earlier
 * configuration, parses f and validates it. Returns the number of errors (0: valid). */
int gencfg_check(FILE *f, const char *name)
{
    memset(val, 0, sizeof val);
    memset(line_of, 0, sizeof line_of);
    have_cal = 0;
    n_errors = 0;
    cfg_path = name;
    cfg_name = name;
    parse_stream(f, &CFG_SET);
    if (!n_errors)
        validate();
    return n_errors;
}

#ifndef GENCFG_NO_MAIN
int main(int argc, char **argv)
{
    struct buf b = {0, 0, 0};
    if (argc != 3) {
        fprintf(stderr, "usage: %s <configs/NAME.cfg> <outdir>\n", argv[0]);
        return 2;
    }
    cfg_path = argv[1];
    cfg_name = base_name(cfg_path);
    parse_file(cfg_path, &CFG_SET);
    if (!n_errors)
        validate();
    if (!n_errors)
        parse_calib(argv[1]);
    if (n_errors) {
        fprintf(stderr, "%s: %d error%s, nothing written\n", argv[1], n_errors, n_errors > 1 ? "s" : "");
        return 2;
    }
    mkdir_p(argv[2]);
    gen_params_h(&b);
    write_if_changed(argv[2], "npu_params.h", &b);
    b.n = 0;
    gen_params_vh(&b);
    write_if_changed(argv[2], "npu_params.vh", &b);
    b.n = 0;
    gen_verilator_f(&b);
    write_if_changed(argv[2], "verilator.f", &b);
    b.n = 0;
    gen_defs_vh(&b);
    write_if_changed(argv[2], "npu_defs.vh", &b);
    free(b.p);
    return 0;
}
#endif /* GENCFG_NO_MAIN */
