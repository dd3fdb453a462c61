/* scalesim.c - SCALE-Sim-shaped per-layer figures from the counters; see scalesim.h. */
#include "run/scalesim.h"

#include <string.h>

#include "hw/npu_defs.h"
#include "run/report.h"

static double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

void npu_scalesim_of(const npu_cfg_t *cfg, const uint64_t *cnt, unsigned tag_a, unsigned tag_b,
                     unsigned tag_c, npu_scalesim_t *o)
{
    double pes = 4.0 * cfg->s * cfg->s, s = cfg->s;
    double useful = (double)npu_report_useful_macs(cnt);
    uint64_t busy = npu_report_array_busy(cnt);
    memset(o, 0, sizeof *o);
    o->total_cycles = cnt[NPU_CNT_cycles];
    o->stall_cycles = o->total_cycles > busy ? o->total_cycles - busy : 0;
    o->overall_util = 100.0 * ratio(useful, pes * (double)o->total_cycles);
    o->mapping_eff = 100.0 * ratio(useful, useful + (double)cnt[NPU_CNT_idle_pe_shape]);
    o->compute_util = 100.0 * ratio(useful, pes * (double)busy);
    o->sram_bw[0] = ratio((double)cnt[NPU_CNT_lbuf_h_words] * s, (double)o->total_cycles);
    o->sram_bw[1] = ratio((double)cnt[NPU_CNT_lbuf_v_words] * s, (double)o->total_cycles);
    o->sram_bw[2] = ratio((double)cnt[NPU_CNT_obuf_drain_rows] * 2 * s, (double)o->total_cycles);
    o->dram_bw[0] = ratio((double)cnt[NPU_CNT_dram_rd_prog + (tag_a & 7u)] / 2, (double)o->total_cycles);
    o->dram_bw[1] = ratio((double)cnt[NPU_CNT_dram_rd_prog + (tag_b & 7u)] / 2, (double)o->total_cycles);
    o->dram_bw[2] = ratio((double)cnt[NPU_CNT_dram_wr_prog + (tag_c & 7u)] / 4, (double)o->total_cycles);
}
