/* cmd_disasm.c - `npu disasm`: the compiled program of a GEMM, with its plan and layout. */
#include <stdio.h>

#include "cli/commands.h"
#include "hw/isa.h"
#include "run/progfile.h"
#include "run/report.h"
#include "run/runtime.h"

static int disasm_compiled(const npu_cfg_t *cfg, const npu_args_t *a);

/* The plan, the DRAM layout and the program's instructions as text, one JSON line. */
static int print_json(const npu_cfg_t *cfg, const npu_args_t *a, const npu_gemm_report_t *rep)
{
    char line[256];
    cJSON *root = npu_cli_json_new(cfg, a), *j;
    if (!root)
        return NPU_EXIT_FAIL;
    npu_report_json_workload(root, rep, NULL);
    j = cJSON_AddObjectToObject(root, "dram");
    cJSON_AddNumberToObject(j, "program", (double)rep->prog_base);
    cJSON_AddNumberToObject(j, "a", rep->args.a);
    cJSON_AddNumberToObject(j, "b", rep->args.b);
    cJSON_AddNumberToObject(j, "c", rep->args.c);
    cJSON_AddNumberToObject(j, "pitch_a", rep->args.pitch_a);
    cJSON_AddNumberToObject(j, "pitch_b", rep->args.pitch_b);
    cJSON_AddNumberToObject(j, "pitch_c", rep->args.pitch_c);
    cJSON_AddNumberToObject(root, "instructions", (double)rep->prog.n);
    j = cJSON_AddArrayToObject(root, "program");
    for (size_t i = 0; i < rep->prog.n; i++) {
        npu_disasm(&rep->prog.insn[i], line, sizeof line);
        cJSON_AddItemToArray(j, cJSON_CreateString(line));
    }
    return npu_cli_json_print(root) == 0 ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}

/* A recorded program's instructions: "program" of o (--json) or lines. */
static void rec_insns(const npu_progfile_t *p, cJSON *o)
{
    char line[256];
    cJSON *j = o ? cJSON_AddArrayToObject(o, "program") : NULL;
    for (size_t i = 0; i < p->gemm.prog.n; i++) {
        npu_disasm(&p->gemm.prog.insn[i], line, sizeof line);
        if (o)
            cJSON_AddItemToArray(j, cJSON_CreateString(line));
        else
            printf("%6zu  %s\n", i, line);
    }
}

/* Recorded programs (kind 2): each one's label, window and instructions (text or JSON). */
static int disasm_rec(const npu_cfg_t *cfg, const npu_args_t *a, const npu_progset_t *s)
{
    char err[600];
    cJSON *root = NULL, *arr = NULL;
    if (a->json) {
        if (!(root = npu_cli_json_new(cfg, a)))
            return NPU_EXIT_FAIL;
        cJSON_AddNumberToObject(root, "programs_saved", (double)s->n);
        arr = cJSON_AddArrayToObject(root, "programs");
    } else {
        printf("# %s: %zu program%s recorded for config %s%s\n", a->prog_file, s->n,
               s->n == 1 ? "" : "s", s->config,
               npu_progfile_check_cfg(&s->p[0], cfg, err, sizeof err) ? " (not this build's)" : "");
    }
    for (size_t i = 0; i < s->n; i++) {
        const npu_progfile_t *p = &s->p[i];
        cJSON *o = arr ? cJSON_CreateObject() : NULL;
        if (o) {
            cJSON_AddNumberToObject(o, "index", (double)(i + 1));
            cJSON_AddStringToObject(o, "label", p->rec.label);
            cJSON_AddNumberToObject(o, "instructions", (double)p->gemm.prog.n);
            cJSON_AddNumberToObject(o, "cycles", (double)(p->rec.ncnt > NPU_CNT_cycles
                                                          ? p->rec.cnt[NPU_CNT_cycles] : 0));
            cJSON_AddItemToArray(arr, o);
        } else if (!a->json) {
            printf("# program %zu/%zu %s: %zu instructions at 0x%llx%s; DRAM window %zu bytes at "
                   "0x%llx, %llu simulator cycles from cycle %llu\n", i + 1, s->n, p->rec.label,
                   p->gemm.prog.n, (unsigned long long)p->rec.base,
                   p->fresh ? ", a new simulator" : "", p->rec.len, (unsigned long long)p->rec.lo,
                   (unsigned long long)p->rec.cycles, (unsigned long long)p->start_cycle);
        }
        if (o || !a->json)
            rec_insns(p, o);
    }
    return root && npu_cli_json_print(root) != 0 ? NPU_EXIT_FAIL : NPU_EXIT_PASS;
}

/* npu disasm FILE: the saved programs (progfile.h), whatever configuration they were built for. */
static int disasm_file(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_progset_t s;
    npu_progfile_t *p;
    npu_args_t g = *a;
    char err[600], line[256];
    int rc;
    if (npu_progset_load(a->prog_file, &s, err, sizeof err) != 0) {
        fprintf(stderr, "npu: disasm %s\n", err);
        return NPU_EXIT_USAGE;
    }
    p = &s.p[0];
    if (p->kind == NPU_PROGFILE_REC) {
        rc = disasm_rec(cfg, a, &s);
        npu_progset_free(&s);
        return rc;
    }
    g.m = p->gemm.M, g.n = p->gemm.N, g.k = p->gemm.K;
    g.trans_a = p->gemm.transA, g.trans_b = p->gemm.transB;
    if (a->json) {
        rc = print_json(cfg, &g, &p->gemm);
        npu_progset_free(&s);
        return rc;
    }
    printf("# %s: gemm M=%d N=%d K=%d%s%s saved for config %s%s; DRAM image %zu bytes at 0x%llx, "
           "%s expected results\n", a->prog_file, g.m, g.n, g.k, g.trans_a ? " transA" : "",
           g.trans_b ? " transB" : "", p->config,
           npu_progfile_check_cfg(p, cfg, err, sizeof err) ? " (not this build's)" : "",
           p->image_len, (unsigned long long)p->image_addr, p->expect ? "with" : "without");
    for (size_t i = 0; i < p->gemm.prog.n; i++) {
        npu_disasm(&p->gemm.prog.insn[i], line, sizeof line);
        printf("%6zu  %s\n", i, line);
    }
    npu_progset_free(&s);
    return NPU_EXIT_PASS;
}

int npu_cmd_disasm(const npu_cfg_t *cfg, const npu_args_t *a)
{
    if (a->prog_file)
        return disasm_file(cfg, a);
    return disasm_compiled(cfg, a);
}

/* npu disasm -m -n -k: the program the compiler makes for the GEMM. */
static int disasm_compiled(const npu_cfg_t *cfg, const npu_args_t *a)
{
    npu_gemm_report_t rep;
    char line[256];
    int rc = npu_gemm_compile_modes(cfg, 1ull << cfg->dram_addr_bits, a->m, a->n, a->k,
                                    a->trans_a, a->trans_b, npu_args_gemm_modes(a), &rep);
    if (rc != NPU_GEMM_PASS) {
        fprintf(stderr, "npu: cannot compile gemm M=%d N=%d K=%d: %s\n", a->m, a->n, a->k,
                rep.host_msg);
        npu_gemm_report_free(&rep);
        return NPU_EXIT_FAIL;
    }
    if (a->json) {
        rc = print_json(cfg, a, &rep);
        npu_gemm_report_free(&rep);
        return rc;
    }
    printf("# gemm M=%d N=%d K=%d%s%s, config %s: Mt=%d Nt=%d Kc=%d, %dx%d tiles %s-major x %d chunks%s\n",
           a->m, a->n, a->k, a->trans_a ? " transA" : "", a->trans_b ? " transB" : "", cfg->name,
           rep.plan.Mt, rep.plan.Nt, rep.plan.Kc, rep.plan.m_tiles, rep.plan.n_tiles,
           rep.plan.order ? "n" : "m", rep.plan.k_chunks, npu_gemm_res_text(&rep.plan));
    printf("# DRAM: program 0x%06llx, A 0x%06x (pitch %u bytes), B 0x%06x (pitch %u), C 0x%06x "
           "(pitch %u); SPM A %u/%u B %u/%u C %u/%u\n",
           (unsigned long long)rep.prog_base, (unsigned)rep.args.a, rep.args.pitch_a,
           (unsigned)rep.args.b, rep.args.pitch_b, (unsigned)rep.args.c, rep.args.pitch_c,
           rep.plan.spm_a[0], rep.plan.spm_a[1], rep.plan.spm_b[0], rep.plan.spm_b[1],
           rep.plan.spm_c[0], rep.plan.spm_c[1]);
    for (size_t i = 0; i < rep.prog.n; i++) {
        npu_disasm(&rep.prog.insn[i], line, sizeof line);
        printf("%6zu  %s\n", i, line);
    }
    npu_gemm_report_free(&rep);
    return NPU_EXIT_PASS;
}
