/*
 * prog_time.h - an analytical timing model of one NPU program (issue 16, docs/estimator.md
 * section 7): the decoupled LOAD / EXEC / STORE queues of docs/isa.md section 3 replayed as a
 * dataflow over the program's own instructions, each timed by the slicing stage's cost
 * primitives (compile/slice/slice_cost.h) and the vector unit's model:
 *  - LOAD / STORE: its DMA bursts and beats by the ISA's rule (npu_dma_bursts_of: normal, transposed
 *    LOAD or transposed STORE;
 *    the expected counters' functions), costed by npu_slice_xfer_cost with at least one beat per
 *    SPM word (rows that are not beat-aligned: the realigner / packer stream a word a cycle, the
 *    bursts' cost on top; measured, step_fidelity --micro);
 *  - WAVE: max(r, P) of its slots' cycles r (its longest row set, plus a cycle for each slot
 *    whose rows fall in one SPM sub-bank, rtl/npu_spm.v, when the wave streamer's reads are late:
 *    it reads up to LBUF_H_DEPTH slots ahead of the array; a weight bank turns around in a cycle;
 *    P = S + 1 a LDW / WAVE pair's least, 2S + 1 after a mono LDW (1G1C): measured, prog_time.c) on
 *    the array, which streams the WAVEs in order; WAVEs on one stationary tile (the same bank, no
 *    LDW between) pay that form once over the tile's rows, each right behind the one before; a
 *    tile's first WAVE streams once its LDW's weights are in, the LDW's read steps + 6 cycles after it
 *    issued (S steps; 2S for a mono FW / VSW tile). The EXEC head issues 3 cycles after it arrives and
 *    once what it waits for is ready; a WAVE enters the wave queue (it holds two) once the one two
 *    before has its rows in, and streams 5 cycles later at the earliest; it needs its OBUF rows
 *    drained and a free completion record of 8; its results reach the OBUF 4S + 2 cycles after
 *    its own last row; LDW, VSET, SYNC: 0 on their queue's time line;
 *  - DRAIN: drain_fixed + rows x drain_row on the drain unit, in order, streaming behind the
 *    WAVEs into its rows (it ends a cycle after their results at the earliest); an accumulating
 *    DRAIN 2 cycles a row from its first row's results; the EXEC queue only issues it (4 cycles);
 *  - VEC: npu_vec_busy (prog_expect.h); FILL: its words, one per cycle, plus 2, holding one of the
 *    LOAD engine's two descriptor slots like a LOAD;
 *  - a WAVE ends (pushes its tokens) when it retires, its last row's results in the OBUF, or when
 *    the array is free for the next tile, whichever is later;
 *  - an instruction starts when its queue is free, the tokens it pops are pushed (the k-th pop
 *    of a channel takes the k-th push, pushed when that instruction ends) and the in-order
 *    fetcher has dispatched it: after the previous instruction, after its bytes are read and
 *    once its queue has room (the instruction QUEUE_DEPTH before it in its queue has started);
 *  - the DRAM bus is shared (one credit bucket for reads and writes): a transfer's bus time fills
 *    the gaps the transfers that asked before it left (instructions start in time order), and a
 *    LOAD and a STORE in flight together take turns (the DRAM model's contested credit goes to
 *    the read and write ports in turn): of the two, the one with less bus time left ends at twice
 *    that, the other once both are done, whichever asked first; the fetch reads bursts of MAX_BURST_BEATS into a buffer of
 *    two (burst m once burst m - 2's instructions are dispatched), each behind at most
 *    MAX_OUTSTANDING bursts of the reads in flight (reads return in order) and one of a STORE's
 *    (the DRAM model gives contested credit to reads and writes in turn);
 *  - the program ends when its last instruction does, and takes at least its bus time.
 * Under NOBURST constants (the bytes-only cost the conv slicing compares, compile/conv/conv_slice.h)
 * a transfer is its payload bytes over the bandwidth: no fixed cost, no lead, no bursts.
 *  - a DRAIN writes two OBUF rows a cycle into four SPM words, one per sub-bank, on ports before
 *    the LOAD engine's: a LOAD into a bank a DRAIN writes meanwhile ends the DRAIN's write cycles
 *    (rows / 2, an accumulating one rows) later, in proportion to the part of the DRAIN's time on
 *    the drain unit its data moves in.
 * Not modelled: the other SPM bank conflicts (a STORE's or an LDW's reads refused by the wave's).
 * A fetch burst that cuts in while a LOAD's or STORE's data
 * moves delays that transfer by its bus time (the transfers that ask after it wait for it).
 */
#ifndef NPU_MODEL_PROG_TIME_H
#define NPU_MODEL_PROG_TIME_H

#include <stddef.h>
#include <stdint.h>

#include "compile/slice/slice_cost.h"
#include "hw/isa.h"
#include "hw/npu_cfg.h"

/* A LOAD_SPM's cycles on the LOAD engine (docs/isa.md "LOAD_SPM"; no DRAM, so no cost k): the
 * SPM burst server (rtl/npu_spm_burst.v) reads its source runs one word a cycle (the runs' beats x
 * BEAT_WORDS words, npu_prog_expect's spm_rd_words) behind a fixed lead (PT_SPM_LEAD: the
 * descriptor's three check stages, the server's request FIFO, the SPM read and output register,
 * the holding register); a plain copy writes a chunk a cycle meanwhile, so it takes the lead plus
 * the more of reads and chunks; a transposed one fills a group (2S rows x up to two source words)
 * while it writes the last group's columns: per group the more of the two, group by group.
 * Against the RTL (tests/rtl/test_spm_copy.c cycles):
 * exact at tiny and small (7 shapes each), at small-w2 within 12 cycles (5 %, the transposed
 * 33 x 96 B: fills in proportion to the reads, not by their runs). */
uint64_t npu_load_spm_cycles(const npu_cfg_t *cfg, const npu_fields_t *f);

/* Predicted cycles of prog (n instructions) on cfg under cost k. 0, or -1 with the reason (an
 * instruction that does not decode, tokens popped that no instruction pushes, out of memory). */
int npu_prog_time(const npu_cfg_t *cfg, const npu_slice_cost_t *k, const npu_insn_t *prog, size_t n,
                  uint64_t *cycles, char *why, size_t wn);

#endif
