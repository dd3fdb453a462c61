/* cmd_info.c - `npu info`: the configuration of this build (text, or --json); `npu --version`. */
#include <stdio.h>

#include "cli/commands.h"
#include "hw/isa.h"

/* Every parameter of the configuration under "config", beside the metadata. */
static int print_json(const npu_cfg_t *c, const npu_args_t *a)
{
    cJSON *root = npu_cli_json_new(c, a), *j = root ? cJSON_GetObjectItem(root, "config") : NULL;
    if (!j) {
        cJSON_Delete(root);
        return NPU_EXIT_FAIL;
    }
    cJSON_AddStringToObject(j, "dtype", npu_dtype_name((unsigned)c->dtype));
    cJSON_AddNumberToObject(j, "pes", 4 * c->s * c->s);
    cJSON_AddNumberToObject(j, "word_bytes", npu_cfg_word(c));
    cJSON_AddNumberToObject(j, "beat_bytes", npu_cfg_beat(c));
    cJSON_AddNumberToObject(j, "beat_words", npu_cfg_beat(c) / npu_cfg_word(c));
    cJSON_AddNumberToObject(j, "lanes", npu_cfg_f(c));
    cJSON_AddNumberToObject(j, "spm_bytes", (double)c->spm_banks * c->spm_bank_words * npu_cfg_word(c));
    cJSON_AddNumberToObject(j, "lbuf_h_depth", c->lbuf_h_depth);
    cJSON_AddNumberToObject(j, "lbuf_v_depth", c->lbuf_v_depth);
    cJSON_AddNumberToObject(j, "queue_depth", c->queue_depth);
    cJSON_AddNumberToObject(j, "token_max", c->token_max);
    cJSON_AddNumberToObject(j, "dram_addr_bits", c->dram_addr_bits);
    cJSON_AddNumberToObject(j, "max_burst_beats", c->max_burst_beats);
    cJSON_AddNumberToObject(j, "max_outstanding", c->max_outstanding);
    cJSON_AddNumberToObject(j, "load_pipeline", c->load_pipeline);
    cJSON_AddNumberToObject(j, "store_pipeline", c->store_pipeline);
    cJSON_AddNumberToObject(j, "dram_bw", c->dram_bw);
    cJSON_AddNumberToObject(j, "dram_latency", c->dram_latency);
    cJSON_AddNumberToObject(j, "dram_burst_cost", c->dram_burst_cost);
    cJSON_AddNumberToObject(j, "watchdog_cycles", c->watchdog_cycles);
    return npu_cli_json_print(root) == 0 ? NPU_EXIT_PASS : NPU_EXIT_FAIL;
}

int npu_cmd_info(const npu_cfg_t *c, const npu_args_t *a)
{
    if (a->json)
        return print_json(c, a);
    printf("config          %s\n", c->name);
    printf("S               %d (fused array %dx%d, %d PEs)\n", c->s, 2 * c->s, 2 * c->s,
           4 * c->s * c->s);
    printf("element type    %s (%s accumulation)\n", npu_dtype_name((unsigned)c->dtype),
           npu_cfg_bf16(c) ? "fp32" : "int32");
    printf("SPM word        %d bytes (%d 16-bit lanes)\n", npu_cfg_word(c), npu_cfg_f(c));
    printf("DRAM beat       %d bytes (%d SPM word%s)\n", npu_cfg_beat(c), npu_cfg_beat(c) / npu_cfg_word(c),
           npu_cfg_beat(c) > npu_cfg_word(c) ? "s" : "");
    printf("SPM             %d banks x %d words = %d KiB\n", c->spm_banks, c->spm_bank_words,
           c->spm_banks * c->spm_bank_words * npu_cfg_word(c) / 1024);
    printf("OBUF            2 halves x %d rows of %d %s\n", c->obuf_rows, npu_cfg_f(c),
           npu_cfg_bf16(c) ? "fp32" : "int32");
    printf("LBUF H / V      %d / %d words per core\n", c->lbuf_h_depth, c->lbuf_v_depth);
    printf("queues          %d instructions each, tokens up to %d\n", c->queue_depth, c->token_max);
    printf("DRAM            2^%d bytes, bursts up to %d beats, %d outstanding\n",
           c->dram_addr_bits, c->max_burst_beats, c->max_outstanding);
    printf("LOAD engine     %s\n", c->load_pipeline ? "pipelined (two descriptors in flight)" : "one descriptor at a time");
    printf("STORE engine    %s\n", c->store_pipeline ? "pipelined (the next descriptor while the last one's B responses are due)"
                                                      : "one descriptor at a time");
    printf("DRAM timing     %d B/cycle, latency %d, burst cost %d (defaults)\n", c->dram_bw,
           c->dram_latency, c->dram_burst_cost);
    printf("watchdog        %d cycles\n", c->watchdog_cycles);
    return NPU_EXIT_PASS;
}

int npu_cmd_version(const npu_cfg_t *c, const npu_args_t *a)
{
    npu_out_meta_t m = npu_cli_meta(c, a);
    printf("npu %s\n", m.rev);
    printf("config %s: S=%d (%d PEs), %d-byte words, SPM %d KiB, DRAM 2^%d bytes\n", c->name,
           c->s, 4 * c->s * c->s, npu_cfg_word(c),
           c->spm_banks * c->spm_bank_words * npu_cfg_word(c) / 1024, c->dram_addr_bits);
    return NPU_EXIT_PASS;
}
