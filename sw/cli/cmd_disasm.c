/* cmd_disasm.c - `npu disasm`: the compiled program of a GEMM, with its plan and layout. */
#include <stdio.h>

#include "cli/commands.h"
#include "hw/isa.h"
#include "run/runtime.h"

int npu_cmd_disasm(const npu_cfg_t *cfg, const npu_args_t *a)
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
