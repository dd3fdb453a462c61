/* vk_golden.c - golden model of a vector kernel (vk_golden.h). */
#include "ref/vk_golden.h"

#include <stdlib.h>
#include <string.h>

#include "hw/npu_defs.h"
#include "ref/vec_golden.h"

static size_t t_rows(const npu_vkern_t *k, int t) { return k->t[t].one_row ? 1 : (size_t)k->rows; }

/* Byte offset of element e of tensor t (rows at its pitch). */
static size_t el_at(const npu_vkern_t *k, int t, size_t e)
{
    size_t r = e / (size_t)k->len, c = e % (size_t)k->len;
    return r * npu_vk_row_pitch(k, t) + c * (k->t[t].width / 8);
}

/* Element e of tensor t in the image, and its inverse (little-endian). */
static uint32_t get_el(const npu_vkern_t *k, int t, const uint8_t *image, size_t e)
{
    uint32_t v = 0;
    memcpy(&v, image + k->t[t].dram + el_at(k, t, e), k->t[t].width / 8);
    return v;
}

static void put_el(const npu_vkern_t *k, int t, uint8_t *image, size_t e, uint32_t v)
{
    memcpy(image + k->t[t].dram + el_at(k, t, e), &v, k->t[t].width / 8);
}

/* Op o over rows [r0, r0 + rows) (one row for a one-row result other than SUM). */
static int run_rows(unsigned dtype, const npu_vkern_t *k, const npu_vk_op_t *o, uint32_t **el,
                    size_t r0, size_t rows, uint32_t *a, uint32_t *b)
{
    int nb = NPU_VOP_READS_B(o->vop);
    int one = k->t[o->d].one_row && o->vop != NPU_VOP_SUM;
    npu_vec_regs_t regs = {o->alpha, o->beta, o->shift};
    uint32_t *src[2] = {el[o->a], nb ? el[o->b] : NULL};
    for (int s = 0; s < 1 + nb; s++) /* a one-row source is the row repeated */
        for (size_t r = 0; r < rows; r++)
            memcpy((s ? b : a) + r * k->len,
                   src[s] + (k->t[s ? o->b : o->a].one_row ? 0 : (r0 + r) * k->len), k->len * sizeof *a);
    /* d may be a or b: the golden model reads its copies, so in-place is the plain result */
    return npu_vec_golden(dtype, o->vop, (int)o->wide, &regs, (unsigned)rows, (unsigned)k->len, a,
                          nb ? b : NULL, el[o->d] + (one || o->vop == NPU_VOP_SUM ? 0 : r0 * k->len));
}

/* Op o over the kernel's rows; a SUM with a scratch and sum_chunk in blocks: the first block into
 * d, each later one into the scratch, then d += scratch (the emitter's chunks, vkern.h). */
static int run_op(unsigned dtype, const npu_vkern_t *k, const npu_vk_op_t *o, uint32_t **el,
                  uint32_t *a, uint32_t *b)
{
    size_t rows = k->t[o->d].one_row && o->vop != NPU_VOP_SUM ? 1 : (size_t)k->rows;
    size_t blk = o->vop == NPU_VOP_SUM && o->b >= 0 && k->sum_chunk > 0 ? (size_t)k->sum_chunk : rows;
    if (run_rows(dtype, k, o, el, 0, blk < rows ? blk : rows, a, b))
        return -1;
    for (size_t r0 = blk; r0 < rows; r0 += blk) {
        npu_vk_op_t part = *o, add = {NPU_VOP_ADD, 1, o->d, o->b, o->d, 0, 0, 0};
        part.d = o->b;
        if (run_rows(dtype, k, &part, el, r0, rows - r0 < blk ? rows - r0 : blk, a, b) ||
            run_rows(dtype, k, &add, el, 0, 1, a, b))
            return -1;
    }
    return 0;
}

int npu_vk_golden(unsigned dtype, const npu_vkern_t *k, uint8_t *image, size_t size)
{
    uint32_t *el[NPU_VK_MAX_T] = {0}, *a = NULL, *b = NULL;
    size_t all = (size_t)k->rows * k->len;
    int rc = -1;
    if (k->nt > NPU_VK_MAX_T || k->nop > NPU_VK_MAX_OPS)
        return -1;
    for (int t = 0; t < k->nt; t++) {
        size_t n = t_rows(k, t) * k->len;
        if (!(el[t] = calloc(all, sizeof **el)))
            goto out;
        if (k->t[t].dram + (t_rows(k, t) - 1) * npu_vk_row_pitch(k, t) + npu_vk_row_bytes(k, t) > size)
            goto out;
        for (size_t e = 0; k->t[t].load && e < n; e++)
            el[t][e] = get_el(k, t, image, e);
    }
    if (!(a = malloc(all * sizeof *a)) || !(b = malloc(all * sizeof *b)))
        goto out;
    for (int i = 0; i < k->nop; i++)
        if (run_op(dtype, k, &k->op[i], el, a, b))
            goto out;
    for (int t = 0; t < k->nt; t++)
        for (size_t e = 0; k->t[t].store && e < t_rows(k, t) * k->len; e++)
            put_el(k, t, image, e, el[t][e]);
    rc = 0;
out:
    for (int t = 0; t < k->nt; t++)
        free(el[t]);
    free(a);
    free(b);
    return rc;
}

int npu_vk_xpose_golden(const npu_vk_xpose_t *x, uint8_t *image, size_t size)
{
    uint64_t T = (uint64_t)x->taps;
    if (x->src + (T * x->rows - 1) * x->src_pitch + 2u * x->cols > size ||
        x->dst + (T * x->cols - 1) * x->dst_pitch + 2u * x->rows > size)
        return -1;
    for (uint64_t t = 0; t < T; t++)
        for (int r = 0; r < x->rows; r++)
            for (int c = 0; c < x->cols; c++)
                memcpy(image + x->dst + (t * x->cols + (uint64_t)c) * x->dst_pitch + 2u * (unsigned)r,
                       image + x->src + (t * x->rows + (uint64_t)r) * x->src_pitch + 2u * (unsigned)c, 2);
    return 0;
}
