/* test_topology.c - SCALE-Sim topology CSV parsing (sw/model/topology.c) and layer scaling. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/topology.h"

static npu_topology_t g_t;

Test(topology, scalesim_format_with_trailing_commas)
{
    const char *csv =
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
        "Conv1     ,227        ,227        ,11           ,11          ,3       ,96        ,4      ,\n"
        "\n"
        "# a comment\n"
        "Conv2,  31, 31,    5, 5,      96,     256,     1, \r\n"
        "Conv9,  7,   7,    1, 1,      1024,   125,     1\n";
    char msg[160];
    cr_assert_eq(npu_topo_parse(csv, 2, &g_t, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(g_t.n, 3);
    cr_assert_str_eq(g_t.layer[0].name, "Conv1");
    const npu_conv_t *c = &g_t.layer[0].conv;
    cr_assert(c->batch == 2 && c->H == 227 && c->W == 227 && c->KH == 11 && c->KW == 11 &&
              c->C == 3 && c->F == 96 && c->stride == 4 && c->pad == 0 && c->dil == 1 &&
              !c->depthwise);
    cr_assert_eq(npu_conv_oh(c), 55);
    cr_assert_eq(g_t.layer[1].conv.F, 256);
    cr_assert_eq(g_t.layer[2].conv.C, 1024);
    cr_assert_eq(npu_conv_ow(&g_t.layer[2].conv), 7);
}

Test(topology, extension_columns)
{
    const char *csv = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                      "Channels, Num Filter, Strides, Padding, Dilation, Depthwise,\n"
                      "dw, 15, 15, 3, 3, 512, 512, 2, 1, 1, 1,\n"
                      "dil, 16, 16, 3, 3, 4, 8, 1, 2, 2\n"
                      "pad, 9, 9, 3, 3, 4, 8, 1, 1\n";
    char msg[160];
    cr_assert_eq(npu_topo_parse(csv, 1, &g_t, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(g_t.n, 3);
    cr_assert(g_t.layer[0].conv.depthwise && g_t.layer[0].conv.pad == 1);
    cr_assert_eq(npu_conv_oh(&g_t.layer[0].conv), 8);
    cr_assert(g_t.layer[1].conv.dil == 2 && g_t.layer[1].conv.pad == 2);
    cr_assert(g_t.layer[2].conv.pad == 1 && g_t.layer[2].conv.dil == 1);
}

static void bad(const char *csv, const char *want)
{
    char msg[200];
    cr_assert_eq(npu_topo_parse(csv, 1, &g_t, msg, sizeof msg), -1, "accepted: %s", csv);
    cr_assert(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
}

Test(topology, rejects_bad_files_with_the_line)
{
    const char *hdr = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                      "Channels, Num Filter, Strides,\n";
    char buf[512];
    bad("", "no layers");
    bad(hdr, "no layers");
    bad("Layer, M, N, K,\nfc1, 64, 64, 64,\n", "GEMM");
    bad("a,b,c\n", "header with 3 columns");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4\n", hdr);
    bad(buf, "line 2: 7 fields");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4, 1\nc2, 8, x, 3, 3, 4, 4, 1\n", hdr);
    bad(buf, "line 3: IFMAP Width 'x'");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 0, 1\n", hdr);
    bad(buf, "Num Filter '0'");
    snprintf(buf, sizeof buf, "%sc1, 2, 2, 3, 3, 4, 4, 1\n", hdr);
    bad(buf, "layer 'c1'"); /* kernel larger than the input: npu_conv_check's reason */
    snprintf(buf, sizeof buf, "%sdw, 8, 8, 3, 3, 4, 8, 1, 0, 1, 1\n", hdr);
    bad(buf, "layer 'dw'"); /* depthwise needs F == C */
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4, 1, 0, 0\n", hdr);
    bad(buf, "Dilation '0'");
}

Test(topology, files_in_the_repository_parse)
{
    char msg[200];
    cr_assert_eq(npu_topo_load("tests/topologies/ecoflow_layers.csv", 1, &g_t, msg, sizeof msg), 0,
                 "%s", msg);
    cr_assert_eq(g_t.n, 8);
    cr_assert_str_eq(g_t.layer[2].name, "ResNet50_CONV3");
    cr_assert_eq(npu_conv_oh(&g_t.layer[2].conv), 28);
    cr_assert_eq(npu_conv_oh(&g_t.layer[0].conv), 55); /* AlexNet CONV1: 227 -> 55 */
    cr_assert_eq(npu_topo_load("tests/topologies/alexnet_scalesim.csv", 1, &g_t, msg, sizeof msg),
                 0, "%s", msg);
    cr_assert_eq(g_t.n, 5);
    cr_assert_eq(npu_topo_load("tests/topologies/missing.csv", 1, &g_t, msg, sizeof msg), -1);
    cr_assert(strstr(msg, "cannot open") != NULL);
}

Test(topology, scaling_keeps_the_geometry_legal)
{
    npu_conv_t c = {1, 128, 57, 57, 128, 3, 3, 2, 0, 1, 0};
    char msg[160];
    npu_topo_scale(&c, 8, 1);
    cr_assert(c.C == 16 && c.F == 16 && c.H == 57 && npu_conv_oh(&c) == 28);
    npu_conv_t a = {1, 3, 227, 227, 64, 11, 11, 4, 0, 1, 0};
    npu_topo_scale(&a, 4, 4);
    cr_assert(a.C == 1 && a.F == 16 && a.H == 57);
    cr_assert_eq(npu_conv_check(&a, msg, sizeof msg), 0, "%s", msg);
    npu_conv_t k = {1, 4, 12, 12, 4, 11, 11, 1, 0, 1, 1};
    npu_topo_scale(&k, 2, 100); /* never below the kernel */
    cr_assert(k.H == 11 && k.W == 11 && k.C == 2 && k.F == 2);
    cr_assert_eq(npu_conv_check(&k, msg, sizeof msg), 0, "%s", msg);
}
