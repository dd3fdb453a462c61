/* fcov.c - functional coverage of NPU runs (fcov.h). */
#define _POSIX_C_SOURCE 200809L /* open, write, close */
#include "run/fcov.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw/npu_defs.h"

/* How far past a WAVE (DRAIN) to look for the DRAIN (STORE) that moves its results on. */
#define FCOV_LOOKAHEAD 8192

static const char *const k_pass[NPU_FCOV_PASSES] = {"fwd", "dx", "dw"};
static const int k_fan[NPU_FCOV_FANS] = {1, 2, 4};
static const char *const k_mode[4] = {"FW", "VSW", "HSW", "ISW"};

const char *npu_fcov_pass_name(int pass)
{
    return pass >= 0 && pass < NPU_FCOV_PASSES ? k_pass[pass] : "?";
}

int npu_fcov_valid(unsigned mode, int fan)
{
    switch (mode) {
    case NPU_MODE_FW:
    case NPU_MODE_VSW: return fan == NPU_FCOV_FAN2;
    case NPU_MODE_HSW: return fan == NPU_FCOV_FAN4;
    case NPU_MODE_ISW: return fan == NPU_FCOV_FAN4 || fan == NPU_FCOV_FAN1;
    default: return 0;
    }
}

static int pass_of_tag(unsigned tag)
{
    return tag == NPU_TAG_Y ? NPU_FCOV_FWD : tag == NPU_TAG_DX ? NPU_FCOV_DX
                                                : tag == NPU_TAG_DW ? NPU_FCOV_DW : -1;
}

/* Pass of the results a DRAIN wrote: the first later STORE reading its first SPM word. */
static int drain_pass(const npu_insn_t *prog, size_t n, size_t d, unsigned B)
{
    npu_fields_t f;
    unsigned w;
    npu_decode(&prog[d], &f);
    w = f.spm_addr;
    for (size_t i = d + 1; i < n && i < d + FCOV_LOOKAHEAD; i++) {
        npu_fields_t s;
        unsigned words;
        if (npu_decode(&prog[i], &s) != 0 || s.op != NPU_OP_STORE)
            continue;
        words = (s.row_bytes + B - 1) / B;
        for (unsigned r = 0; r < s.rows; r++) {
            unsigned a = s.spm_addr + r * s.spm_stride;
            if (w >= a && w < a + words)
                return pass_of_tag(s.tag);
        }
    }
    return -1;
}

void npu_fcov_program(const npu_cfg_t *cfg, const npu_insn_t *prog, size_t n, int stalled,
                      npu_fcov_t *c)
{
    unsigned S = (unsigned)cfg->s, B = (unsigned)npu_cfg_word(cfg);
    int bank_fan[2] = {NPU_FCOV_FAN2, NPU_FCOV_FAN2};
    int *dpass = malloc(n * sizeof *dpass); /* per DRAIN, its pass (-2: not computed yet) */
    if (!dpass)
        return;
    for (size_t i = 0; i < n; i++)
        dpass[i] = -2;
    for (size_t i = 0; i < n; i++) {
        npu_fields_t f;
        if (npu_decode(&prog[i], &f) != 0)
            continue;
        if (f.op == NPU_OP_LDW) {
            bank_fan[f.wbank] = f.core_mask ? NPU_FCOV_FAN1
                                : (f.mode == NPU_MODE_FW || f.mode == NPU_MODE_VSW) ? NPU_FCOV_FAN2
                                                                                    : NPU_FCOV_FAN4;
            continue;
        }
        if (f.op != NPU_OP_WAVE)
            continue;
        {
            unsigned kcap = (f.mode == NPU_MODE_FW || f.mode == NPU_MODE_VSW) ? 2 * S : S;
            unsigned ncap = (f.mode == NPU_MODE_FW || f.mode == NPU_MODE_HSW) ? 2 * S : S;
            int edge = f.k < kcap || f.n < ncap || f.k_lo > 0, pass = -1;
            for (size_t j = i + 1; j < n && j < i + FCOV_LOOKAHEAD; j++) {
                npu_fields_t d;
                if (npu_decode(&prog[j], &d) != 0 || d.op != NPU_OP_DRAIN)
                    continue;
                if (f.obuf_addr >= d.obuf_addr && f.obuf_addr < d.obuf_addr + d.rows) {
                    if (dpass[j] == -2)
                        dpass[j] = drain_pass(prog, n, j, B);
                    pass = dpass[j];
                    break;
                }
            }
            if (pass >= 0 && f.mode < 4)
                c->hits[f.mode][pass][edge][bank_fan[f.wbank]][stalled ? 1 : 0]++;
        }
    }
    free(dpass);
}

int npu_fcov_points(void)
{
    int n = 0;
    for (unsigned m = 0; m < 4; m++)
        for (int fan = 0; fan < NPU_FCOV_FANS; fan++)
            n += npu_fcov_valid(m, fan) ? NPU_FCOV_PASSES * 2 * 2 : 0;
    return n;
}

int npu_fcov_hit_points(const npu_fcov_t *c)
{
    int n = 0;
    for (unsigned m = 0; m < 4; m++)
        for (int p = 0; p < NPU_FCOV_PASSES; p++)
            for (int e = 0; e < 2; e++)
                for (int fan = 0; fan < NPU_FCOV_FANS; fan++)
                    for (int st = 0; st < 2; st++)
                        n += npu_fcov_valid(m, fan) && c->hits[m][p][e][fan][st] > 0;
    return n;
}

int npu_fcov_append(const char *path, const npu_fcov_t *c)
{
    char buf[8192];
    size_t len = 0;
    int fd, rc = 0;
    for (unsigned m = 0; m < 4; m++)
        for (int p = 0; p < NPU_FCOV_PASSES; p++)
            for (int e = 0; e < 2; e++)
                for (int fan = 0; fan < NPU_FCOV_FANS; fan++)
                    for (int st = 0; st < 2; st++)
                        if (c->hits[m][p][e][fan][st] && len + 80 < sizeof buf)
                            len += (size_t)snprintf(buf + len, sizeof buf - len,
                                                    "fcov %s %s %d %d %d %llu\n", k_mode[m],
                                                    k_pass[p], e, k_fan[fan], st,
                                                    (unsigned long long)c->hits[m][p][e][fan][st]);
    if (!len)
        return 0;
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return -1;
    if (write(fd, buf, len) != (ssize_t)len) /* one write: lines of parallel jobs do not mix */
        rc = -1;
    close(fd);
    return rc;
}

static int index_of(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

int npu_fcov_read(const char *path, npu_fcov_t *c)
{
    FILE *f = fopen(path, "r");
    char line[256];
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char ms[16], ps[16];
        int e, fan, st, m, p, fi;
        unsigned long long cnt;
        if (sscanf(line, "fcov %15s %15s %d %d %d %llu", ms, ps, &e, &fan, &st, &cnt) != 6 ||
            (m = index_of(k_mode, 4, ms)) < 0 || (p = index_of(k_pass, NPU_FCOV_PASSES, ps)) < 0 ||
            e < 0 || e > 1 || st < 0 || st > 1) {
            fclose(f);
            return -1;
        }
        fi = fan == 1 ? NPU_FCOV_FAN1 : fan == 2 ? NPU_FCOV_FAN2 : fan == 4 ? NPU_FCOV_FAN4 : -1;
        if (fi < 0 || !npu_fcov_valid((unsigned)m, fi)) {
            fclose(f);
            return -1;
        }
        c->hits[m][p][e][fi][st] += cnt;
    }
    fclose(f);
    return 0;
}

void npu_fcov_print(const npu_fcov_t *c, FILE *f)
{
    int holes = 0;
    fprintf(f, "functional coverage: WAVEs per mode x fan-out x pass x edge x DRAM stall\n");
    fprintf(f, "%-4s %-4s | %-27s | %-27s | %-27s\n", "mode", "fan", "fwd (full/edge, -/stall)",
            "dx", "dw");
    for (unsigned m = 0; m < 4; m++)
        for (int fan = 0; fan < NPU_FCOV_FANS; fan++) {
            if (!npu_fcov_valid(m, fan))
                continue;
            fprintf(f, "%-4s %-4d", k_mode[m], k_fan[fan]);
            for (int p = 0; p < NPU_FCOV_PASSES; p++) {
                fprintf(f, " |");
                for (int e = 0; e < 2; e++)
                    for (int st = 0; st < 2; st++)
                        fprintf(f, " %6llu", (unsigned long long)c->hits[m][p][e][fan][st]);
            }
            fprintf(f, "\n");
        }
    for (unsigned m = 0; m < 4; m++)
        for (int fan = 0; fan < NPU_FCOV_FANS; fan++)
            for (int p = 0; p < NPU_FCOV_PASSES; p++)
                for (int e = 0; e < 2; e++)
                    for (int st = 0; st < 2; st++)
                        if (npu_fcov_valid(m, fan) && !c->hits[m][p][e][fan][st]) {
                            if (!holes++)
                                fprintf(f, "holes:");
                            fprintf(f, " %s/fan%d/%s/%s/%s", k_mode[m], k_fan[fan], k_pass[p],
                                    e ? "edge" : "full", st ? "stall" : "nostall");
                        }
    if (holes)
        fprintf(f, "\n");
    fprintf(f, "%d of %d functional cover points hit\n", npu_fcov_hit_points(c), npu_fcov_points());
}
