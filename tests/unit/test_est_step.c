/* test_est_step.c - the estimator's step plan mode (model/est_step.h) and the program timing
 * model (model/prog_time.h): every kernel of several MLP steps at S = 2 and 8 timed at or above
 * its roofline by the timing model itself (issue 16, acceptance 5), the kernels in the step
 * plan's order with its MACs, a hand-built program's tokens and DMA, refusals. */
#include <criterion/criterion.h>
#include <string.h>

#include "compile/slice/slice_cost.h"
#include "hw/isa.h"
#include "model/est_step.h"
#include "model/prog_time.h"
#include "test_cfgs.h"

static npu_est_kplan_t e; /* large */

Test(est_step, every_kernel_at_or_above_its_roofline)
{
    static const int nets[][6] = {{3, 64, 128, 10}, {4, 64, 256, 256, 10}, {5, 32, 64, 64, 64, 10},
                                  {4, 24, 37, 20, 10}, {3, 100, 50, 10}};
    static const int batches[] = {7, 19, 32};
    char why[256];
    int timed = 0;
    for (int s = 2; s <= 8; s += 6)
        for (size_t i = 0; i < sizeof nets / sizeof *nets; i++)
            for (size_t b = 0; b < sizeof batches / sizeof *batches; b++) {
                npu_cfg_t c = bf16_cfg(s);
                uint64_t pes = 4u * (uint64_t)s * (uint64_t)s;
                if (npu_estimate_step(&c, &nets[i][1], nets[i][0] - 1, batches[b], NPU_EMIT_FW, &e, why, sizeof why)) {
                    cr_assert(strstr(why, "SUM"), "%s", why); /* the step engine's one refusal here */
                    continue;
                }
                timed++;
                for (int k = 0; k < e.nk; k++) {
                    const npu_est_kernel_t *x = &e.k[k];
                    uint64_t roof = (x->macs + pes - 1) / pes, dma = (x->bytes + c.dram_bw - 1) / c.dram_bw;
                    roof = roof > dma ? roof : dma;
                    cr_assert_eq(x->roof, roof, "%s", x->name);
                    cr_assert_geq(x->timed, roof, "S=%d net %zu batch %d %s: the timing model's %llu cycles below the "
                                  "roofline %llu", s, i, batches[b], x->name, (unsigned long long)x->timed,
                                  (unsigned long long)roof);
                    cr_assert_geq(x->cycles, x->timed);
                }
            }
    cr_assert_geq(timed, 25, "%d steps estimated", timed);
}

Test(est_step, the_step_plans_kernels_in_order)
{
    npu_cfg_t c = bf16_cfg(8);
    int dims[] = {64, 128, 10};
    char why[256];
    cr_assert_eq(npu_estimate_step(&c, dims, 2, 32, NPU_EMIT_FW, &e, why, sizeof why), 0, "%s", why);
    cr_assert_eq(e.nk, 7 * 2 - 2);
    cr_assert_str_eq(e.k[0].name, "fwd L1 gemm");
    cr_assert_str_eq(e.k[11].name, "update L1 sgd");
    cr_assert_eq(e.k[0].macs, 32u * 64 * 128);
    cr_assert_eq(e.macs, 32u * 64 * 128 * 2 + 32u * 128 * 10 * 3, "layer 1 has no dX");
    cr_assert_eq(e.k[1].macs, 0u, "a vector kernel");
    cr_assert_gt(e.k[1].vec_busy, 0u);
    uint64_t sum = 0;
    for (int k = 0; k < e.nk; k++)
        sum += e.k[k].cycles;
    cr_assert_eq(e.cycles, sum, "the kernels run one after another");
    uint64_t macs = e.macs, bytes = 0;
    for (int k = 0; k < e.nk; k++)
        bytes += e.k[k].bytes;
    npu_cfg_t i16 = test_cfg(8); /* the int16 step: the same kernels and DRAM bytes */
    cr_assert_eq(npu_estimate_step(&i16, dims, 2, 32, NPU_EMIT_FW, &e, why, sizeof why), 0, "%s", why);
    cr_assert_eq(e.nk, 7 * 2 - 2);
    cr_assert_eq(e.macs, macs);
    for (int k = 0; k < e.nk; k++)
        bytes -= e.k[k].bytes;
    cr_assert_eq(bytes, 0u);
}

/* LOAD -> EXEC (SYNC_E) -> STORE through tokens: they run one after another. */
Test(est_step, prog_time_follows_the_tokens)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    npu_insn_t p[3];
    npu_fields_t f;
    uint64_t alone[3], all, cyc;
    char why[200];
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD, f.rows = 64, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8, f.push_next = 1;
    npu_encode(&f, &p[0]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_SYNC_E, f.pop_prev = 1, f.push_next = 1;
    npu_encode(&f, &p[1]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_STORE, f.rows = 64, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8, f.pop_prev = 1;
    f.dram_addr = 1 << 20;
    npu_encode(&f, &p[2]);
    cr_assert_eq(npu_prog_time(&c, &k, p, 3, &all, why, sizeof why), 0, "%s", why);
    for (int i = 0; i < 3; i++) {
        npu_insn_t q = p[i]; /* the same instruction alone, its tokens cleared */
        npu_decode(&q, &f);
        f.pop_prev = f.pop_next = f.push_prev = f.push_next = 0;
        npu_encode(&f, &q);
        cr_assert_eq(npu_prog_time(&c, &k, &q, 1, &alone[i], why, sizeof why), 0, "%s", why);
    }
    /* one after another: each alone pays the fetch's first burst once (its fixed and burst
     * cost, a beat), the chain once */
    uint64_t fetch = ((k.xfer_fixed + k.burst + (uint64_t)npu_cfg_beat(&c) * k.byte) >> NPU_SLICE_Q) + 1;
    cr_assert_geq(all + 2 * fetch, alone[0] + alone[1] + alone[2], "%llu", (unsigned long long)all);
    cr_assert_gt(all, alone[0] + alone[2] - 2 * fetch, "the store waits for the load");
    /* a token nobody pushes: refused */
    cr_assert_eq(npu_prog_time(&c, &k, p + 1, 2, &cyc, why, sizeof why), -1);
    cr_assert(strstr(why, "tokens"), "%s", why);
}

/* Four LOADs (or STOREs) of rows of row_bytes, 13 rows each, on fresh addresses: their cycles. */
static uint64_t train_time(const npu_cfg_t *c, const npu_slice_cost_t *k, int store, unsigned row_bytes)
{
    npu_insn_t p[4];
    npu_fields_t f;
    uint64_t cyc = 0;
    char why[200];
    for (unsigned i = 0; i < 4; i++) {
        memset(&f, 0, sizeof f);
        f.op = store ? NPU_OP_STORE : NPU_OP_LOAD, f.rows = 13, f.spm_stride = 2, f.spm_addr = 32 * i;
        f.row_bytes = f.dram_stride = row_bytes, f.dram_addr = 4096 * (i + 1);
        npu_encode(&f, &p[i]);
    }
    cr_assert_eq(npu_prog_time(c, k, p, 4, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

/* Rows of 40 B at S = 8 (32 B beats) are two SPM words each, as rows of 64 B: the realigner /
 * packer stream a word a cycle with the bursts' cost on top, so both trains take the same time
 * (measured on the RTL: 318 and 202 cycles, step_fidelity --micro), though 40 B rows are fewer
 * beats. A word rule that overlaps the bursts (max of beats' cost and words) fails this. */
Test(est_step, prog_time_streams_words)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    for (int st = 0; st < 2; st++) {
        uint64_t w40 = train_time(&c, &k, st, 40), w64 = train_time(&c, &k, st, 64);
        uint64_t w32 = train_time(&c, &k, st, 32);
        cr_assert_eq(w40, w64, "%s: 40 B rows %llu, 64 B rows %llu", st ? "STORE" : "LOAD",
                     (unsigned long long)w40, (unsigned long long)w64);
        cr_assert_gt(w40, w32, "two words a row take longer than one");
    }
}

/* One LOAD of rows x row_bytes at pitch row_bytes (transposed or not), alone: its cycles. */
static uint64_t load_time(const npu_cfg_t *c, const npu_slice_cost_t *k, int tr, unsigned rows, unsigned row_bytes)
{
    npu_insn_t in;
    npu_fields_t f;
    uint64_t cyc = 0;
    char why[200];
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD, f.transpose = tr, f.rows = rows, f.row_bytes = f.dram_stride = row_bytes;
    f.dram_addr = 4096, f.spm_stride = tr ? (rows + 2 * c->s - 1) / (2 * c->s) : (row_bytes + 4 * c->s - 1) / (4 * c->s);
    npu_encode(&f, &in);
    cr_assert_eq(npu_prog_time(c, k, &in, 1, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

/* A transposed LOAD fills one group's buffers while it writes the last group's columns
 * (rtl/npu_dma_load.v): 256 rows of 2 words (2S-row blocks of one run each: the bursts and beats
 * of the plain LOAD of the same bytes) take the plain LOAD's cycles plus the last group's 4S
 * columns (measured on the RTL at small: 713 cycles, the plain LOAD of those bytes about 680);
 * the old serial form (every column after its group's beats) added all 512. Rows of a few
 * elements are bound by their columns: 5 rows of 96 B write 48 words from 15 beats (the plain
 * LOAD of those rows writes 15). */
Test(est_step, prog_time_transposed_load_overlaps_fill_and_writes)
{
    npu_cfg_t c = test_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    uint64_t F = 2u * (uint64_t)c.s;
    uint64_t tr = load_time(&c, &k, 1, 256, 8 * (unsigned)c.s), pl = load_time(&c, &k, 0, 256, 8 * (unsigned)c.s);
    cr_assert(tr >= pl + 2 * F - 1 && tr <= pl + 2 * F + 1, "transposed %llu, plain %llu + %llu columns",
              (unsigned long long)tr, (unsigned long long)pl, (unsigned long long)(2 * F));
    uint64_t sk = load_time(&c, &k, 1, 5, 96), sk_pl = load_time(&c, &k, 0, 5, 96);
    cr_assert(sk >= sk_pl + 48 - 15, "5 x 96 B transposed: %llu, plain (15 words) %llu: at least the 48 columns",
              (unsigned long long)sk, (unsigned long long)sk_pl);
}

/* Appends `sync` SYNC_Es to p at *n (the last one popping the LOAD's token when pop_last), then a
 * VSET and a wide VEC of `rows` rows, and times p: the tail of the fetch-beside-a-transfer tests. */
static uint64_t syncs_vec_time(const npu_cfg_t *c, const npu_slice_cost_t *k, npu_insn_t *p, int n, int sync,
                               int pop_last, unsigned rows)
{
    npu_fields_t f;
    uint64_t cyc = 0;
    char why[200];
    for (int i = 0; i < sync; i++) {
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_SYNC_E, f.pop_prev = pop_last && i == sync - 1;
        npu_encode(&f, &p[n++]);
    }
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VSET, f.len = 4;
    npu_encode(&f, &p[n++]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VEC, f.wide = 1, f.rows = rows, f.a_stride = f.b_stride = f.d_stride = 2, f.b_addr = 1024, f.d_addr = 2048;
    npu_encode(&f, &p[n++]);
    cr_assert_eq(npu_prog_time(c, k, p, (size_t)n, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

/* The bus time of one full burst, cycles. */
static uint64_t one_burst(const npu_cfg_t *c, const npu_slice_cost_t *k)
{
    return ((uint64_t)c->max_burst_beats * (uint64_t)npu_cfg_beat(c) * k->byte + k->burst) >> NPU_SLICE_Q;
}

/* A long LOAD, SYNC_Es the EXEC queue runs meanwhile, a SYNC_E waiting for the LOAD and
 * a long VEC. The SYNC_Es' fetch bursts cut in on the read port while the LOAD's data moves, and
 * the LOAD (so the VEC) ends later by their bus time: with 40 SYNC_Es (five bursts of 16 beats
 * and the burst cost at S = 2) the program takes at least three bursts longer than with none.
 * The RTL shows it (tiny-bf16 40,200,10@20 L2 fwd: -8.7% without it); a model that delays only
 * the transfers starting after a burst fails this. */
static uint64_t load_syncs_vec(const npu_cfg_t *c, const npu_slice_cost_t *k, int sync)
{
    npu_insn_t p[48];
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD, f.rows = 64, f.row_bytes = f.dram_stride = 40, f.spm_stride = 5, f.push_next = 1;
    npu_encode(&f, &p[0]);
    return syncs_vec_time(c, k, p, 1, sync + 1, 1, 256);
}

Test(est_step, prog_time_fetch_delays_the_load_in_flight)
{
    npu_cfg_t c = bf16_cfg(2);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    uint64_t none = load_syncs_vec(&c, &k, 0), forty = load_syncs_vec(&c, &k, 40);
    uint64_t burst = one_burst(&c, &k);
    cr_assert_geq(forty, none + 3 * burst, "no SYNC_E %llu, 40 %llu, a burst %llu", (unsigned long long)none,
                  (unsigned long long)forty, (unsigned long long)burst);
}

/* A STORE beside the LOAD the vector unit waits for shares the DRAM bus with it: the LOAD ends
 * about the STORE's bus time later, and so does the program (a long VEC after the LOAD, so the
 * program's total bus time does not decide it). A planted per-engine bus (bus_take returning
 * t + w) fails this. */
Test(est_step, prog_time_shares_the_bus)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    npu_insn_t p[4];
    npu_fields_t f;
    uint64_t chain, beside;
    char why[200];
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD, f.rows = 64, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8, f.push_next = 1;
    npu_encode(&f, &p[0]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VSET, f.len = 64, f.pop_prev = 1;
    npu_encode(&f, &p[1]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VEC, f.wide = 1, f.rows = 1000, f.a_stride = f.b_stride = f.d_stride = 1;
    npu_encode(&f, &p[2]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_STORE, f.rows = 64, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8;
    f.dram_addr = 1u << 20, f.spm_addr = 1024;
    npu_encode(&f, &p[3]);
    cr_assert_eq(npu_prog_time(&c, &k, p, 3, &chain, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_prog_time(&c, &k, p, 4, &beside, why, sizeof why), 0, "%s", why);
    uint64_t bus = 64u * 256u / (uint64_t)c.dram_bw; /* the STORE's bytes over the bandwidth */
    cr_assert_gt(chain, 4 * bus, "%llu: the VEC decides the program", (unsigned long long)chain);
    cr_assert_geq(beside, chain + bus - bus / 8, "%llu, %llu alone: the LOAD waits for the bus",
                  (unsigned long long)beside, (unsigned long long)chain);
    cr_assert_leq(beside, chain + bus + bus / 4, "%llu, %llu alone", (unsigned long long)beside,
                  (unsigned long long)chain);
}

/* A long STORE, then a short LOAD the vector unit waits for (a long VEC after it, so the LOAD's end
 * decides the program): the DRAM model gives contested credit to the read and write ports in turn
 * (tb/dram_model.c), so the LOAD, asking while the STORE's data moves, takes half the bus and ends
 * about twice its bus time after it starts, not after the STORE. The rule before (the transfer
 * that asked first keeps the bus, the later one fills its gaps) puts the LOAD behind the whole
 * STORE, 512 cycles of bus later, and fails this. */
Test(est_step, prog_time_load_and_store_take_turns)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    npu_insn_t p[4];
    npu_fields_t f;
    uint64_t alone, beside;
    char why[200];
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_STORE, f.rows = 64, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8;
    f.dram_addr = 1u << 20, f.spm_addr = 1024;
    npu_encode(&f, &p[0]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD, f.rows = 4, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8, f.push_next = 1;
    npu_encode(&f, &p[1]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VSET, f.len = 64, f.pop_prev = 1;
    npu_encode(&f, &p[2]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VEC, f.wide = 1, f.rows = 1000, f.a_stride = f.b_stride = f.d_stride = 1;
    npu_encode(&f, &p[3]);
    cr_assert_eq(npu_prog_time(&c, &k, p + 1, 3, &alone, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_prog_time(&c, &k, p, 4, &beside, why, sizeof why), 0, "%s", why);
    uint64_t store = 64u * 256u / (uint64_t)c.dram_bw, load = 4u * 256u / (uint64_t)c.dram_bw;
    cr_assert_gt(alone, 2 * store, "%llu: the VEC decides the program", (unsigned long long)alone);
    cr_assert_geq(beside, alone + load / 2, "%llu, %llu without the STORE: the LOAD shares the bus",
                  (unsigned long long)beside, (unsigned long long)alone);
    cr_assert_leq(beside, alone + 2 * load, "%llu, %llu without the STORE: the LOAD waits for the STORE",
                  (unsigned long long)beside, (unsigned long long)alone);
}

/* A LOAD the vector unit waits for, while a WAVE's 128 rows are drained: the drain writes two rows
 * a cycle into four SPM words, one per sub-bank, on ports before the LOAD's (rtl/npu_spm.v), so a
 * DRAIN into the LOAD's bank refuses its SPM writes for 64 cycles and its beats wait; into
 * another bank it costs the LOAD nothing. A model without the refusals times both alike and
 * fails this. */
static uint64_t load_beside_drain(const npu_cfg_t *c, const npu_slice_cost_t *k, unsigned drain_at)
{
    npu_insn_t p[6];
    npu_fields_t f;
    uint64_t cyc = 0;
    char why[200];
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LOAD, f.rows = 32, f.row_bytes = 256, f.dram_stride = 256, f.spm_stride = 8, f.push_next = 1;
    npu_encode(&f, &p[0]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_LDW, f.mode = NPU_MODE_FW, f.k = 16, f.n = 16, f.spm_addr = 2048, f.spm_stride = 1;
    npu_encode(&f, &p[1]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_WAVE, f.mode = NPU_MODE_FW, f.k = 16, f.n = 16, f.m = 128, f.spm_addr = 1024, f.spm_stride = 1;
    npu_encode(&f, &p[2]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_DRAIN, f.rows = 128, f.spm_addr = drain_at, f.spm_stride = 2;
    npu_encode(&f, &p[3]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VSET, f.len = 64, f.pop_prev = 1;
    npu_encode(&f, &p[4]);
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_VEC, f.wide = 1, f.rows = 100, f.a_stride = f.b_stride = f.d_stride = 1, f.a_addr = 3584;
    f.d_addr = 3584;
    npu_encode(&f, &p[5]);
    cr_assert_eq(npu_prog_time(c, k, p, 6, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

Test(est_step, prog_time_a_drain_holds_up_a_load_into_its_bank)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    uint64_t same = load_beside_drain(&c, &k, 512), other = load_beside_drain(&c, &k, 3072);
    cr_assert_geq(same, other + 32, "drain into the LOAD's bank %llu, into another %llu", (unsigned long long)same,
                  (unsigned long long)other);
    cr_assert_leq(same, other + 64 + 8, "drain into the LOAD's bank %llu, into another %llu",
                  (unsigned long long)same, (unsigned long long)other);
}

/* An HSW WAVE reads row t of both sets in one cycle on two SPM read ports; two rows in one
 * sub-bank take a cycle each (rtl/npu_spm.v). Sets 14 words apart at stride 2 (the forward of conv
 * 3,28,28,32,3,3,2,1,1 at small): half the slots collide, so the wave streams 7 slots in 11
 * cycles (measured: 880 cycles of collisions over its 1,764 slots by this count, 847 stall
 * cycles on the RTL); at a stride of 1 word with the sets 8 apart (one address bit) none do. A
 * model without the conflicts times both alike and fails this. */
Test(est_step, prog_time_wave_rows_collide_in_a_sub_bank)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    uint64_t cyc[2];
    char why[200];
    for (int v = 0; v < 2; v++) {
        npu_insn_t p[1 + 20];
        npu_fields_t f;
        int n = 0;
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_LDW, f.mode = NPU_MODE_HSW, f.k = 3, f.n = 16, f.spm_addr = 512, f.spm_stride = 1;
        npu_encode(&f, &p[n++]);
        for (int t = 0; t < 20; t++) { /* one tile's waves, streamed back to back */
            memset(&f, 0, sizeof f);
            f.op = NPU_OP_WAVE, f.mode = NPU_MODE_HSW, f.k = 3, f.n = 16;
            f.m = v ? 16 : 14, f.spm_stride = v ? 1 : 2, f.obuf_addr = 16u * (unsigned)t;
            npu_encode(&f, &p[n++]);
        }
        cr_assert_eq(npu_prog_time(&c, &k, p, (size_t)n, &cyc[v], why, sizeof why), 0, "%s", why);
    }
    /* 20 waves of 7 or 8 slots: 3 or 4 colliding slots a wave at stride 2, none at stride 1 */
    cr_assert_geq(cyc[0], cyc[1] + 20 * 2, "stride 2: %llu, stride 1: %llu", (unsigned long long)cyc[0],
                  (unsigned long long)cyc[1]);
}

/* Tiles of one 14-row HSW wave each, LDWs on alternating banks: the wave streamer reads the
 * wave's rows into the LBUF_H (8 slots deep) while the tile's LDW runs, so rows colliding in a
 * sub-bank (stride 2 from word 0: 4 of 7 slots) cost only what the LDW does not hide against
 * rows that do not (stride 7 from word 16): 29 cycles over the 20 tiles on the RTL at small
 * (step_fidelity --micro "20 lone HSW waves": 296 and 267 cycles; with one LDW at a time they
 * cost nothing). The model charges 37. Charging every collision to the array (2 cycles a tile, 40) or none fails
 * this. */
static uint64_t lone_waves(const npu_cfg_t *c, const npu_slice_cost_t *k, unsigned stride, unsigned at)
{
    npu_insn_t p[2 * 20];
    npu_fields_t f;
    uint64_t cyc = 0;
    char why[200];
    int n = 0;
    for (int t = 0; t < 20; t++) {
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_LDW, f.mode = NPU_MODE_HSW, f.k = 3, f.n = 16, f.spm_addr = 512, f.spm_stride = 1;
        f.wbank = (unsigned)(t % 2);
        npu_encode(&f, &p[n++]);
        memset(&f, 0, sizeof f);
        f.op = NPU_OP_WAVE, f.mode = NPU_MODE_HSW, f.k = 3, f.n = 16, f.m = 14, f.wbank = (unsigned)(t % 2);
        f.spm_addr = at, f.spm_stride = stride, f.obuf_addr = 16u * (unsigned)(t % 8);
        npu_encode(&f, &p[n++]);
    }
    cr_assert_eq(npu_prog_time(c, k, p, (size_t)n, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

Test(est_step, prog_time_a_lone_wave_reads_its_rows_during_its_ldw)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    uint64_t collide = lone_waves(&c, &k, 2, 0), clear = lone_waves(&c, &k, 7, 16);
    cr_assert(collide >= clear + 6 && collide <= clear + 38, "colliding rows %llu, clear rows %llu",
              (unsigned long long)collide, (unsigned long long)clear);
}

/* Two WAVEs into OBUF rows 0..127 and 128..255, then a DRAIN of each: the drain unit drains the
 * first WAVE's rows while the second streams and the second's behind it, so the program ends
 * within a few cycles of the WAVEs alone (which end when they retire: their last results in the
 * OBUF 4S + 2 cycles after their last rows, their records up to 6S - 2), not two DRAINs later (a
 * planted serial EXEC queue, DRAINs held until the WAVEs before them end, fails this). */
Test(est_step, prog_time_drains_behind_the_waves)
{
    npu_cfg_t c = bf16_cfg(8);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    npu_insn_t p[4];
    npu_fields_t f;
    uint64_t waves, all;
    char why[200];
    for (int i = 0; i < 4; i++) {
        memset(&f, 0, sizeof f);
        f.op = i < 2 ? NPU_OP_WAVE : NPU_OP_DRAIN;
        f.obuf_addr = 128u * (unsigned)(i % 2), f.spm_stride = 8, f.spm_addr = 1024u * (unsigned)(i % 2);
        if (i < 2)
            f.m = 128, f.k = 16, f.n = 16, f.wbank = (unsigned)i;
        else
            f.rows = 128, f.spm_addr += 2048;
        npu_encode(&f, &p[i]);
    }
    cr_assert_eq(npu_prog_time(&c, &k, p, 2, &waves, why, sizeof why), 0, "%s", why);
    cr_assert_eq(npu_prog_time(&c, &k, p, 4, &all, why, sizeof why), 0, "%s", why);
    cr_assert_geq(all, waves, "%llu, the WAVEs %llu", (unsigned long long)all, (unsigned long long)waves);
    cr_assert_leq(all, waves + 16, "%llu, the WAVEs %llu: the DRAINs behind them", (unsigned long long)all,
                  (unsigned long long)waves);
}

/* Times LDW, WAVE (5 rows), then two more: on the same bank without an LDW (one stationary tile,
 * as a conv's row blocks on one weight tile) or an LDW into the other bank and a WAVE on it (two
 * tiles). Cycles. */
static uint64_t two_waves(const npu_cfg_t *c, int same_tile)
{
    npu_slice_cost_t k = npu_slice_cost_default(c, NPU_SLICE_BURST);
    npu_insn_t p[4];
    uint64_t cyc;
    char why[200];
    size_t n = 0;
    cr_assert_eq(npu_enc_ldw(&p[n++], 0, NPU_MODE_HSW, 0, 1, 4, 8), 0);
    cr_assert_eq(npu_enc_wave(&p[n++], 0, NPU_MODE_HSW, 0, 5, 64, 1, 4, 8, 0), 0);
    if (!same_tile)
        cr_assert_eq(npu_enc_ldw(&p[n++], 1, NPU_MODE_HSW, 8, 1, 4, 8), 0);
    cr_assert_eq(npu_enc_wave(&p[n++], same_tile ? 0u : 1u, NPU_MODE_HSW, 0, 5, 128, 1, 4, 8, 16), 0);
    cr_assert_eq(npu_prog_time(c, &k, p, n, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

/* Two 5-row HSW WAVEs (3 slots each) on one stationary tile take its least once, not two tiles'
 * max((3 + S + 1) / 2, S + 2) = 10 each (measured on the RTL timeline of a conv: 10 such WAVEs
 * per tile every 5 to 7 cycles). A planted model that charges each WAVE its own turnaround times
 * the two programs alike and fails. */
Test(est_step, prog_time_waves_on_one_tile_share_its_turnaround)
{
    npu_cfg_t c = test_cfg(8);
    uint64_t one = two_waves(&c, 1), two = two_waves(&c, 0);
    uint64_t turn = (uint64_t)c.s + 2; /* a lone 5-row HSW WAVE's tile: 10 at S = 8 */
    cr_assert_geq(two, one + turn / 2, "one tile %llu, two tiles %llu", (unsigned long long)one,
                  (unsigned long long)two);
}

/* Times `tiles` stationary tiles of four 4-row FW WAVEs each (a conv's row blocks), the tiles'
 * LDWs (mono or not) on alternating banks. Cycles. */
static uint64_t conv_tiles(const npu_cfg_t *c, int tiles, int mono)
{
    npu_slice_cost_t k = npu_slice_cost_default(c, NPU_SLICE_BURST);
    npu_insn_t p[16];
    uint64_t cyc;
    char why[200];
    size_t n = 0;
    unsigned F = 2u * (unsigned)c->s;
    for (int t = 0; t < tiles; t++) {
        cr_assert_eq(npu_enc_ldw(&p[n], (unsigned)t & 1u, NPU_MODE_FW, (unsigned)t, 2, F, F), 0);
        if (mono)
            cr_assert_eq(npu_insn_ldw_mono(&p[n]), 0);
        n++;
        for (unsigned w = 0; w < 4; w++)
            cr_assert_eq(npu_enc_wave(&p[n++], (unsigned)t & 1u, NPU_MODE_FW, t > 0, 4, 64 + 8 * w, 2, F, F, 4 * w),
                         0);
    }
    cr_assert_eq(npu_prog_time(c, &k, p, n, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

/* The next tile's LDW waits in the EXEC queue behind the tile's last WAVE (the wave queue holds
 * two) and its weights are in its read steps + 9 cycles after it issues: after a mono LDW (2S
 * rows one a cycle) tiles of four 4-row WAVEs come 34.5 cycles apart at S = 8 (the RTL timeline
 * of the forward of conv 16,8,8,32,3,3,2,1,1 with mono LDWs), not the (16 + 5S + 1) / 2 = 28.5
 * of the alternating-bank form; after an LDW of S steps (the core pairs in parallel) 8 cycles
 * sooner (step_fidelity --micro's "conv tiles"). A planted model without the LDW's latency
 * (PT_LDW_C = -2S, its weights in at its issue) times the second mono tile 29 cycles after the
 * first and fails. */
Test(est_step, prog_time_a_tile_waits_for_its_weights)
{
    npu_cfg_t c = test_cfg(8);
    uint64_t one = conv_tiles(&c, 1, 1), two = conv_tiles(&c, 2, 1);
    cr_assert_geq(two - one, 33, "one tile %llu, two %llu", (unsigned long long)one, (unsigned long long)two);
    cr_assert_leq(two - one, 37, "one tile %llu, two %llu", (unsigned long long)one, (unsigned long long)two);
    one = conv_tiles(&c, 1, 0), two = conv_tiles(&c, 2, 0);
    cr_assert_geq(two - one, 25, "pair: one tile %llu, two %llu", (unsigned long long)one, (unsigned long long)two);
    cr_assert_leq(two - one, 29, "pair: one tile %llu, two %llu", (unsigned long long)one, (unsigned long long)two);
}

/* Times `pairs` LDW / WAVE pairs (12-row WAVEs after LDWs of S rows, HSW, or 2S rows, FW, mono
 * or not) on alternating banks. Cycles. */
static uint64_t ldw_wave_pairs(const npu_cfg_t *c, unsigned mode, int pairs, int mono)
{
    npu_slice_cost_t k = npu_slice_cost_default(c, NPU_SLICE_BURST);
    npu_insn_t p[64];
    uint64_t cyc;
    char why[200];
    size_t n = 0;
    unsigned S = (unsigned)c->s, kk = mode == NPU_MODE_HSW ? S : 2u * S;
    for (int t = 0; t < pairs; t++) {
        cr_assert_eq(npu_enc_ldw(&p[n], (unsigned)t & 1u, mode, 256u + (unsigned)t, 1, kk, 4), 0);
        if (mono)
            cr_assert_eq(npu_insn_ldw_mono(&p[n]), 0);
        n++;
        cr_assert_eq(npu_enc_wave(&p[n++], (unsigned)t & 1u, mode, 0, 12, 0, 1, kk, 4, 16u * (unsigned)t), 0);
    }
    cr_assert_eq(npu_prog_time(c, &k, p, n, &cyc, why, sizeof why), 0, "%s", why);
    return cyc;
}

/* LDW / WAVE pairs on alternating banks take max(rows, P) (a bank turns around in a cycle): HSW
 * pairs of 12 rows (6 a set) P = S + 1 = 9 at S = 8 (the LDW reads S rows while the one before
 * decides; step_fidelity --micro's HSW trains, about 8.4 a pair on the RTL); FW pairs of 12 rows
 * their 12 (the LDW's S steps, both core pairs in parallel, are hidden; 12.0 on the RTL), 2S + 1
 * = 17 after mono LDWs (2S rows one a cycle; 16.7). A planted model that keeps a 2S + 1 turnaround
 * gives 14.5 for FW and fails, one that reads a full tile in 2S steps whatever mono gives 17 for
 * both FW forms and fails. */
Test(est_step, prog_time_ldw_wave_pairs_take_rows_or_the_ldw)
{
    npu_cfg_t c = test_cfg(8);
    uint64_t hsw = ldw_wave_pairs(&c, NPU_MODE_HSW, 24, 0) - ldw_wave_pairs(&c, NPU_MODE_HSW, 8, 0);
    uint64_t fw = ldw_wave_pairs(&c, NPU_MODE_FW, 24, 0) - ldw_wave_pairs(&c, NPU_MODE_FW, 8, 0);
    uint64_t mono = ldw_wave_pairs(&c, NPU_MODE_FW, 24, 1) - ldw_wave_pairs(&c, NPU_MODE_FW, 8, 1);
    cr_assert(hsw >= 16 * 9 && hsw <= 16 * 10, "16 HSW pairs %llu", (unsigned long long)hsw);
    cr_assert(fw >= 16 * 12 && fw <= 16 * 13, "16 FW pairs %llu", (unsigned long long)fw);
    cr_assert(mono >= 16 * 17 && mono <= 16 * 18, "16 mono FW pairs %llu", (unsigned long long)mono);
}

/* Times an optional long STORE (64 rows of 256 B), then 40 SYNC_Es and a long VEC: the SYNC_Es'
 * fetch bursts (five of 16 beats at S = 2) read beside the STORE, which the DRAM model's credit
 * shares with them in turn, so the EXEC queue's instructions arrive about as soon as without the
 * STORE. Cycles. */
static uint64_t store_syncs_vec(const npu_cfg_t *c, const npu_slice_cost_t *k, int store)
{
    npu_insn_t p[48];
    npu_fields_t f;
    memset(&f, 0, sizeof f);
    f.op = NPU_OP_STORE, f.rows = 64, f.row_bytes = f.dram_stride = 256, f.spm_stride = 32;
    npu_encode(&f, &p[0]);
    return syncs_vec_time(c, k, p, store ? 1 : 0, 40, 0, 1024);
}

/* The fetch beside a long STORE: each burst waits at most one of the STORE's bursts (tiny's conv
 * forwards: a 1,024-byte STORE of Y took 317 cycles on the RTL beside the fetch, which the model
 * had wait behind MAX_OUTSTANDING of its bursts, +5.3% on c8,c16s2 L2 fwd). A planted fetch that
 * waits MAX_OUTSTANDING of a STORE's bursts fails this (144 cycles later than without the STORE,
 * against 24). */
Test(est_step, prog_time_fetch_reads_beside_a_store)
{
    npu_cfg_t c = bf16_cfg(2);
    npu_slice_cost_t k = npu_slice_cost_default(&c, NPU_SLICE_BURST);
    uint64_t none = store_syncs_vec(&c, &k, 0), beside = store_syncs_vec(&c, &k, 1);
    uint64_t burst = one_burst(&c, &k);
    cr_assert_leq(beside, none + 4 * burst, "without the STORE %llu, beside it %llu, a burst %llu",
                  (unsigned long long)none, (unsigned long long)beside, (unsigned long long)burst);
}
