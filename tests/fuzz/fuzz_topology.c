/* fuzz_topology.c - libFuzzer harness: the SCALE-Sim topology parser (sw/model/topology.c) and the
 * --conv layer parser (sw/compile/conv/conv_layer.c) on arbitrary text. Checks: no crash, no sanitizer report;
 * an accepted file has 1..NPU_TOPO_MAX_LAYERS layers; conv layers all pass npu_conv_check and have
 * an output of at least 1 x 1, GEMM layers have M, N, K in 1..NPU_TOPO_MAX_GEMM_DIM; every layer's
 * GEMM shape (npu_topo_gemm_shape) is in range or refused with a reason; a rejected file has a
 * "line N: ..." message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/conv/conv_layer.h"
#include "model/topology.h"

static npu_topology_t g_t;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), msg[200];
    npu_conv_t c;
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    msg[0] = 0;
    if (npu_topo_parse(text, 1, &g_t, msg, sizeof msg) == 0) {
        if (g_t.n < 1 || g_t.n > NPU_TOPO_MAX_LAYERS)
            abort();
        for (int i = 0; i < g_t.n; i++) {
            npu_conv_t s = g_t.layer[i].conv;
            int M = 0, N = 0, K = 0;
            msg[0] = 0;
            if (npu_topo_gemm_shape(&g_t, i, &M, &N, &K, msg, sizeof msg) == 0) {
                if (M < 1 || N < 1 || K < 1 || M > NPU_TOPO_MAX_GEMM_DIM ||
                    N > NPU_TOPO_MAX_GEMM_DIM || K > NPU_TOPO_MAX_GEMM_DIM)
                    abort();
            } else if (!msg[0] || g_t.format == NPU_TOPO_GEMM) {
                abort();
            }
            if (g_t.format == NPU_TOPO_GEMM)
                continue;
            if (npu_conv_check(&s, msg, sizeof msg) != 0 || npu_conv_oh(&s) < 1 || npu_conv_ow(&s) < 1)
                abort();
            npu_topo_scale(&s, 1 + (int)(size % 7), 1 + (int)(size % 5));
            if (npu_conv_check(&s, msg, sizeof msg) != 0)
                abort(); /* scaling keeps a legal layer legal */
        }
    } else if (strncmp(msg, "line ", 5) != 0) {
        abort();
    }
    msg[0] = 0;
    if (npu_conv_parse(text, &c, msg, sizeof msg) == 0) {
        if (npu_conv_check(&c, msg, sizeof msg) != 0)
            abort();
    } else if (!msg[0]) {
        abort();
    }
    free(text);
    return 0;
}
