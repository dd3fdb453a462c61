/*
 * queue_machine.h - the token discipline of a program on an abstract machine (host unit tests):
 * an in-order fetcher fills LOAD/EXEC/STORE queues of `depth` entries; a queue head executes
 * (pops, then pushes, atomically) when its tokens are there. A program passes when it finishes
 * (no deadlock at this depth) and no instruction uses a channel its queue does not have.
 */
#ifndef QUEUE_MACHINE_H
#define QUEUE_MACHINE_H

#include <stdio.h>
#include <stdlib.h>

#include "hw/isa.h"

typedef struct queue_machine {
    int pushes[4], pops[4]; /* per channel l2e, e2l, e2s, s2e */
    int max_tok[4];         /* highest count a channel reached */
    char msg[160];          /* why it failed */
} queue_machine_t;

/* Channels an instruction pops / pushes (-1: none); -1 when it names a missing channel. */
static inline int qm_channels(const npu_fields_t *f, int pop[2], int push[2])
{
    char q = npu_op_queue(f->op);
    pop[0] = pop[1] = push[0] = push[1] = -1;
    if (q == 'L') {
        if (f->pop_prev || f->push_prev)
            return -1;
        if (f->pop_next) pop[1] = 1;
        if (f->push_next) push[1] = 0;
    } else if (q == 'E') {
        if (f->pop_prev) pop[0] = 0;
        if (f->pop_next) pop[1] = 3;
        if (f->push_prev) push[0] = 1;
        if (f->push_next) push[1] = 2;
    } else {
        if (f->pop_next || f->push_next)
            return -1;
        if (f->pop_prev) pop[0] = 2;
        if (f->push_prev) push[0] = 3;
    }
    return 0;
}

/* Runs prog[0..n) at queue depth `depth`. Returns 0, or -1 with the reason in m->msg. */
static inline int queue_machine_run(const npu_insn_t *prog, size_t n, int depth, queue_machine_t *m)
{
    int tok[4] = {0, 0, 0, 0}, rc = 0;
    size_t fetched = 0, finished = 0;
    size_t *qbuf = malloc(3 * (n + 1) * sizeof *qbuf);
    size_t head[3] = {0, 0, 0}, tail[3] = {0, 0, 0};
    for (int c = 0; c < 4; c++)
        m->pushes[c] = m->pops[c] = m->max_tok[c] = 0;
    m->msg[0] = '\0';
    if (!qbuf) {
        snprintf(m->msg, sizeof m->msg, "out of memory");
        return -1;
    }
    while (finished < n && !rc) {
        int progress = 0;
        for (int qi = 0; qi < 3 && !rc; qi++) {
            while (head[qi] != tail[qi]) {
                npu_fields_t f;
                int pop[2], push[2], ok = 1;
                size_t i = qbuf[(size_t)qi * (n + 1) + head[qi]];
                if (npu_decode(&prog[i], &f) != 0 || qm_channels(&f, pop, push) != 0) {
                    snprintf(m->msg, sizeof m->msg, "instruction %zu: bad opcode or token channel", i);
                    rc = -1;
                    break;
                }
                for (int k = 0; k < 2; k++)
                    if (pop[k] >= 0 && tok[pop[k]] == 0)
                        ok = 0;
                if (!ok)
                    break;
                for (int k = 0; k < 2; k++)
                    if (pop[k] >= 0) {
                        tok[pop[k]]--;
                        m->pops[pop[k]]++;
                    }
                for (int k = 0; k < 2; k++)
                    if (push[k] >= 0) {
                        if (++tok[push[k]] > m->max_tok[push[k]])
                            m->max_tok[push[k]] = tok[push[k]];
                        m->pushes[push[k]]++;
                    }
                head[qi]++;
                finished++;
                progress = 1;
            }
        }
        while (!rc && fetched < n) {
            char q = npu_op_queue(npu_insn_op(&prog[fetched]));
            int qi = q == 'L' ? 0 : q == 'E' ? 1 : 2;
            if (tail[qi] - head[qi] >= (size_t)depth)
                break;
            qbuf[(size_t)qi * (n + 1) + tail[qi]++] = fetched++;
            progress = 1;
        }
        if (!rc && !progress) {
            snprintf(m->msg, sizeof m->msg, "deadlock at queue depth %d: fetched %zu of %zu, done %zu",
                     depth, fetched, n, finished);
            rc = -1;
        }
    }
    free(qbuf);
    return rc;
}

/* A program at queue depths 1, 2, 4 and 8: no deadlock, no counter above max_tok, l2e and e2s
 * balanced (the convolution emitters' discipline). 0, or -1 with the reason in msg. */
static inline int queue_machine_check_depths(const npu_insn_t *insn, size_t n, int max_tok, char *msg,
                                             size_t mn)
{
    for (int depth = 1; depth <= 8; depth *= 2) {
        queue_machine_t m;
        if (queue_machine_run(insn, n, depth, &m) != 0) {
            snprintf(msg, mn, "depth %d: %s", depth, m.msg);
            return -1;
        }
        for (int ch = 0; ch < 4; ch++)
            if (m.max_tok[ch] > max_tok) {
                snprintf(msg, mn, "depth %d: channel %d reaches %d", depth, ch, m.max_tok[ch]);
                return -1;
            }
        if (m.pushes[0] != m.pops[0] || m.pushes[2] != m.pops[2]) {
            snprintf(msg, mn, "depth %d: l2e %d/%d or e2s %d/%d pushes/pops", depth, m.pushes[0], m.pops[0],
                     m.pushes[2], m.pops[2]);
            return -1;
        }
    }
    return 0;
}

#endif
