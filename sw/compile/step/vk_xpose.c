/* vk_xpose.c - the transpose kernel's emitter (vkern.h npu_vk_xpose_t). */
#include "compile/step/vkern.h"

#include <stdio.h>

#include "hw/isa.h"
#include "prog/prog_builder.h"

/* Step i: taps [t0, t0 + g) by transposed LOADs into buffer half i % 2, one STORE of their g x cols
 * rows. The tokens are the vector kernel's (vkern.c chunk_step) with a SYNC for the EXEC work: the
 * loads of step i + 1 run while step i stores; step i + 2 reuses the half once step i's STOREs
 * are done. */
static void xpose_step(npu_pb_t *b, const npu_vk_xpose_t *x, unsigned words, unsigned half, int i, int g,
                       npu_pb_step_t *s)
{
    npu_insn_t in;
    int t0 = i * g, nt = x->taps - t0 < g ? x->taps - t0 : g;
    unsigned spm = (unsigned)(i % 2) * half;
    npu_pb_context(b, "transpose, taps %d..%d", t0, t0 + nt - 1);
    for (int t = t0; t < t0 + nt; t++) {
        uint32_t a = npu_pb_dram(b, (uint64_t)x->src + (uint64_t)t * x->rows * x->src_pitch);
        npu_pb_put(b, &s->ld[0], npu_enc_load(&in, x->tag, 1, (unsigned)x->rows, a,
                                              spm + (unsigned)((t - t0) * x->cols) * words, words,
                                              2u * (unsigned)x->cols, x->src_pitch), &in, 0);
    }
    npu_pb_or_sync(b, &s->ld[0], NPU_OP_SYNC_L);
    npu_pb_or_sync(b, &s->ex, NPU_OP_SYNC_E);
    s->push_e2s = s->push_e2l = 0;
    uint32_t d = npu_pb_dram(b, (uint64_t)x->dst + (uint64_t)t0 * x->cols * x->dst_pitch);
    npu_pb_put(b, &s->st, npu_enc_store(&in, x->tag, (unsigned)(nt * x->cols), d, spm, words,
                                        2u * (unsigned)x->rows, x->dst_pitch), &in, 0);
    npu_pb_wait_chunk(b, s, i);
}

int npu_vk_xpose_emit(const npu_cfg_t *cfg, const npu_vk_xpose_t *x, npu_prog_t *out, char *why, size_t n)
{
    unsigned L = 2u * (unsigned)cfg->s, words = ((unsigned)x->rows + L - 1) / L;
    unsigned half = (x->spm_limit ? x->spm_limit : (unsigned)npu_cfg_spm_words(cfg)) / 2;
    npu_pb_t b;
    if (x->taps < 1 || x->rows < 1 || x->cols < 1) {
        snprintf(why, n, "transpose: taps, rows and cols must be positive");
        return -1;
    }
    long per = (long)x->cols * words, g = per ? (long)half / per : 0;
    if (g < 1) {
        snprintf(why, n, "transpose: one tap (%d x %d) does not fit half the SPM", x->cols, x->rows);
        return -1;
    }
    g = g < x->taps ? g : x->taps;
    int steps = (int)((x->taps + g - 1) / g);
    npu_pb_init(&b, cfg);
    npu_pb_step_t *s = npu_pb_steps(&b, steps);
    for (int i = 0; s && i < steps && !b.err; i++)
        xpose_step(&b, x, words, half, i, (int)g, &s[i]);
    if (s) {
        npu_pb_stitch(&b, s, steps);
        npu_pb_order(&b, s, steps, 1, 0, out);
        npu_pb_steps_free(s, steps);
    }
    return npu_pb_finish(&b, why, n);
}
