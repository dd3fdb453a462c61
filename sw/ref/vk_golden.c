/* vk_golden.c - golden model of a vector kernel (vk_golden.h). */
#include "ref/vk_golden.h"

#include <stdlib.h>
#include <string.h>

#include "hw/npu_defs.h"
#include "ref/vec_golden.h"

static size_t t_rows(const npu_vkern_t *k, int t) { return k->t[t].one_row ? 1 : (size_t)k->rows; }

/* Element e of a little-endian array of `width`-bit elements, and its inverse. */
static uint32_t get_el(const uint8_t *p, unsigned width, size_t e)
{
    uint32_t v = 0;
    memcpy(&v, p + e * (width / 8), width / 8);
    return v;
}

static void put_el(uint8_t *p, unsigned width, size_t e, uint32_t v)
{
    memcpy(p + e * (width / 8), &v, width / 8);
}

/* Source x of an op over `rows` rows: the tensor, a one-row tensor repeated. */
static void gather(const npu_vkern_t *k, uint32_t *const *el, int t, size_t rows, uint32_t *x)
{
    for (size_t r = 0; r < rows; r++)
        memcpy(x + r * k->len, el[t] + (k->t[t].one_row ? 0 : r * k->len), k->len * sizeof *x);
}

static int run_op(unsigned dtype, const npu_vkern_t *k, const npu_vk_op_t *o, uint32_t **el,
                  uint32_t *a, uint32_t *b)
{
    size_t rows = k->t[o->d].one_row && o->vop != NPU_VOP_SUM ? 1 : (size_t)k->rows;
    int nb = o->vop == NPU_VOP_ADD || o->vop == NPU_VOP_AXPBY || o->vop == NPU_VOP_RELU_BWD;
    npu_vec_regs_t regs = {o->alpha, o->beta, o->shift};
    gather(k, el, o->a, rows, a);
    if (nb)
        gather(k, el, o->b, rows, b);
    /* d may be a or b: the golden model reads its copies, so in-place is the plain result */
    return npu_vec_golden(dtype, o->vop, (int)o->wide, &regs, (unsigned)rows, (unsigned)k->len, a,
                          nb ? b : NULL, el[o->d]);
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
        if (k->t[t].dram + n * k->t[t].width / 8 > size)
            goto out;
        for (size_t e = 0; k->t[t].load && e < n; e++)
            el[t][e] = get_el(image + k->t[t].dram, k->t[t].width, e);
    }
    if (!(a = malloc(all * sizeof *a)) || !(b = malloc(all * sizeof *b)))
        goto out;
    for (int i = 0; i < k->nop; i++)
        if (run_op(dtype, k, &k->op[i], el, a, b))
            goto out;
    for (int t = 0; t < k->nt; t++)
        for (size_t e = 0; k->t[t].store && e < t_rows(k, t) * k->len; e++)
            put_el(image + k->t[t].dram, k->t[t].width, e, el[t][e]);
    rc = 0;
out:
    for (int t = 0; t < k->nt; t++)
        free(el[t]);
    free(a);
    free(b);
    return rc;
}
