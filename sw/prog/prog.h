/*
 * prog.h - a program: the growable instruction array every emitter fills and every runner
 * launches, and the queue filter that derives the compute-only and transfer-only versions of a
 * program (overlap report). The encoding of one instruction is hw/isa.h's.
 */
#ifndef NPU_PROG_H
#define NPU_PROG_H

#include <stddef.h>

#include "hw/isa.h"

/* Growable program array. */
typedef struct npu_prog {
    npu_insn_t *insn;
    size_t n, cap;
} npu_prog_t;
void npu_prog_init(npu_prog_t *p);
int npu_prog_push(npu_prog_t *p, const npu_insn_t *in); /* 0 or -1 (out of memory) */
void npu_prog_free(npu_prog_t *p);

/* Appends to *out (initialised with npu_prog_init) the instructions of in[0..n) whose queue
 * (npu_op_queue) is one of the characters of `queues` ("E": the compute-only version of a program,
 * "LS": the transfer-only version), in program order, with all four token bits cleared so the
 * kept queues run unsynchronised. Unknown opcodes are never kept. Returns 0, or -1 when queues
 * is NULL or memory runs out (out then holds a partial program; the caller frees it). */
int npu_prog_keep_queues(const npu_insn_t *in, size_t n, const char *queues, npu_prog_t *out);

#endif
