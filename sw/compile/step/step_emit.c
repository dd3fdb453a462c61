/* step_emit.c - a step plan's vector, convolution and transpose kernels as programs (step_emit.h). */
#include "compile/step/step_emit.h"

#include <stdio.h>
#include <stdlib.h>

#include "compile/conv/conv_bwd.h"
#include "compile/conv/conv_split.h"
#include "compile/step/vkern.h"

int npu_step_emit_other(const npu_cfg_t *cfg, const npu_step_kernel_t *k, npu_prog_t *prog, void **conv, char *why,
                        size_t n)
{
    const npu_step_conv_t *cv = &k->cv;
    npu_cfg_t lo = *cfg; /* residency: a convolution planned on the banks below the resident ones */
    *conv = NULL;
    if (k->kind == NPU_SK_CONV_FWD || k->kind == NPU_SK_CONV_BWD) {
        lo.spm_banks = cv->spm_limit ? (int)(cv->spm_limit / (unsigned)cfg->spm_bank_words) : cfg->spm_banks;
        cfg = &lo;
    }
    if (k->kind == NPU_SK_VEC)
        return npu_vk_emit(cfg, &k->v, prog, why, n);
    if (k->kind == NPU_SK_XPOSE)
        return npu_vk_xpose_emit(cfg, &k->xp, prog, why, n);
    if (k->kind == NPU_SK_CONV_FWD) {
        npu_conv_split_t *sp = calloc(1, sizeof *sp);
        npu_conv_addrs_t ad = {cv->x, cv->w, 0, cv->y};
        if (!(*conv = sp)) {
            snprintf(why, n, "out of memory");
            return -1;
        }
        return npu_conv_split(cfg, &cv->c, NPU_CONV_FWD, NPU_CONV_ECOFLOW, NPU_STEP_CONV_OPTS, sp, why, n) ||
                       (cv->res_y && npu_conv_split_res_out(cfg, sp, cv->spm_y, cv->stride_y, why, n)) ||
                       (cv->res_x && npu_conv_split_res_in(cfg, sp, cv->spm_x, cv->stride_x, why, n)) ||
                       npu_conv_split_emit(cfg, sp, &ad, prog, why, n) ? -1 : 0;
    }
    npu_conv_bwd_plan_t *bp = calloc(1, sizeof *bp);
    npu_conv_bwd_addrs_t ad = {cv->x, cv->w, cv->dy, cv->dx, cv->dwt};
    if (!(*conv = bp)) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    if (npu_conv_bwd_plan(cfg, &cv->c, 1, bp, why, n))
        return -1;
    if (cv->no_dx)
        npu_conv_bwd_drop_dx(bp);
    if ((cv->res_dy && npu_conv_bwd_res_dy(cfg, bp, cv->spm_dy, cv->stride_dy, why, n)) ||
        (cv->res_x && npu_conv_bwd_res_x(cfg, bp, cv->spm_x, cv->stride_x, why, n)) ||
        (cv->res_dx && npu_conv_bwd_res_dx(cfg, bp, cv->spm_dx, cv->stride_dx, why, n)))
        return -1;
    return npu_conv_bwd_emit(cfg, bp, &ad, prog, why, n) ? -1 : 0;
}

void npu_step_conv_free(const npu_step_kernel_t *k, void *conv)
{
    if (conv && k->kind == NPU_SK_CONV_FWD)
        npu_conv_split_free(conv);
    free(conv);
}
