/* step_tags.c - the tensor behind each DMA tag of a step kernel (step_tags.h). */
#include "compile/step/step_tags.h"

#include "hw/isa.h"

static int tensor_at(const npu_step_plan_t *p, uint32_t dram)
{
    for (int t = 0; t < p->nt; t++)
        if (p->t[t].dram == dram)
            return t;
    return -1;
}

/* Tensor t under tag g in the directions rd / wr; 0, or -1 when another holds one of them. */
static int put(npu_step_tagmap_t *m, unsigned g, int t, int rd, int wr)
{
    int clash = 0;
    if (t < 0 || g == 0 || g >= NPU_NUM_TAGS)
        return t < 0 ? 0 : -1;
    if (rd) {
        clash |= m->rd[g] >= 0 && m->rd[g] != t;
        m->rd[g] = m->rd[g] >= 0 ? m->rd[g] : t;
    }
    if (wr) {
        clash |= m->wr[g] >= 0 && m->wr[g] != t;
        m->wr[g] = m->wr[g] >= 0 ? m->wr[g] : t;
    }
    return clash ? -1 : 0;
}

/* A convolution kernel's tensors under their role tags, both directions. */
static int conv_tags(const npu_step_plan_t *p, const npu_step_kernel_t *k, npu_step_tagmap_t *m)
{
    const npu_step_conv_t *c = &k->cv;
    int rc = put(m, NPU_TAG_X, tensor_at(p, c->x), 1, 1) | put(m, NPU_TAG_W, tensor_at(p, c->w), 1, 1);
    if (k->kind == NPU_SK_CONV_FWD)
        return rc | put(m, NPU_TAG_Y, tensor_at(p, c->y), 1, 1);
    rc |= put(m, NPU_TAG_DY, tensor_at(p, c->dy), 1, 1) | put(m, NPU_TAG_DW, tensor_at(p, c->dwt), 1, 1);
    return c->no_dx ? rc : rc | put(m, NPU_TAG_DX, tensor_at(p, c->dx), 1, 1);
}

int npu_step_tagmap(const npu_step_plan_t *p, const npu_step_kernel_t *k, npu_step_tagmap_t *m)
{
    int rc = 0;
    for (int g = 0; g < NPU_NUM_TAGS; g++)
        m->rd[g] = m->wr[g] = -1;
    switch (k->kind) {
    case NPU_SK_GEMM: {
        const npu_gemm_args_t *a = &k->g.args;
        rc = put(m, a->tag_a, tensor_at(p, a->a), 1, 1) | put(m, a->tag_b, tensor_at(p, a->b), 1, 1) |
             put(m, a->tag_c, tensor_at(p, a->c), 1, 1);
        break;
    }
    case NPU_SK_VEC:
        for (int i = 0; i < k->v.nt; i++)
            if (!k->v.t[i].resident && (k->v.t[i].load || k->v.t[i].store))
                rc |= put(m, k->v.t[i].tag, tensor_at(p, k->v.t[i].dram), k->v.t[i].load, k->v.t[i].store);
        break;
    case NPU_SK_XPOSE:
        rc = put(m, k->xp.tag, tensor_at(p, k->xp.src), 1, 0) | put(m, k->xp.tag, tensor_at(p, k->xp.dst), 0, 1);
        break;
    default:
        rc = conv_tags(p, k, m);
    }
    return rc ? -1 : 0;
}

uint64_t npu_step_tag_split(const npu_step_tagmap_t *m, const uint64_t *rd, const uint64_t *wr, uint64_t *in,
                            uint64_t *out)
{
    uint64_t lost = 0;
    for (int g = 1; g < NPU_NUM_TAGS; g++) {
        if (m->rd[g] >= 0)
            in[m->rd[g]] += rd[g];
        else
            lost += rd[g];
        if (m->wr[g] >= 0)
            out[m->wr[g]] += wr[g];
        else
            lost += wr[g];
    }
    return lost;
}
