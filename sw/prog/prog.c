#include "prog/prog.h"

#include <stdlib.h>
#include <string.h>

void npu_prog_init(npu_prog_t *p)
{
    p->insn = NULL;
    p->n = p->cap = 0;
}

int npu_prog_push(npu_prog_t *p, const npu_insn_t *in)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        npu_insn_t *q = realloc(p->insn, cap * sizeof *q);
        if (!q)
            return -1;
        p->insn = q;
        p->cap = cap;
    }
    p->insn[p->n++] = *in;
    return 0;
}

void npu_prog_free(npu_prog_t *p)
{
    free(p->insn);
    npu_prog_init(p);
}

int npu_prog_keep_queues(const npu_insn_t *in, size_t n, const char *queues, npu_prog_t *out)
{
    if (!queues || (n && !in))
        return -1;
    for (size_t i = 0; i < n; i++) {
        char q = npu_op_queue(npu_insn_op(&in[i]));
        npu_insn_t c;
        if (!q || !strchr(queues, q)) /* strchr would match the terminator for q == 0 */
            continue;
        c = in[i];
        c.w[0] &= ~NPU_TOK_MASK;
        if (npu_prog_push(out, &c) != 0)
            return -1;
    }
    return 0;
}
