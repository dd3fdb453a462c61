/* cmd_info.c - `npu info`: the configuration of this build. */
#include <stdio.h>

#include "cli/commands.h"

int npu_cmd_info(const npu_cfg_t *c, const npu_args_t *a)
{
    (void)a;
    printf("config          %s\n", c->name);
    printf("S               %d (fused array %dx%d, %d PEs)\n", c->s, 2 * c->s, 2 * c->s,
           4 * c->s * c->s);
    printf("word / beat     %d bytes (%d int16 lanes)\n", npu_cfg_beat(c), npu_cfg_f(c));
    printf("SPM             %d banks x %d words = %d KiB\n", c->spm_banks, c->spm_bank_words,
           c->spm_banks * c->spm_bank_words * npu_cfg_beat(c) / 1024);
    printf("OBUF            2 halves x %d rows of %d int32\n", c->obuf_rows, npu_cfg_f(c));
    printf("LBUF H / V      %d / %d words per core\n", c->lbuf_h_depth, c->lbuf_v_depth);
    printf("queues          %d instructions each, tokens up to %d\n", c->queue_depth, c->token_max);
    printf("DRAM            2^%d bytes, bursts up to %d beats, %d outstanding\n",
           c->dram_addr_bits, c->max_burst_beats, c->max_outstanding);
    printf("DRAM timing     %d B/cycle, latency %d, burst cost %d (defaults)\n", c->dram_bw,
           c->dram_latency, c->dram_burst_cost);
    printf("watchdog        %d cycles\n", c->watchdog_cycles);
    return NPU_EXIT_PASS;
}
