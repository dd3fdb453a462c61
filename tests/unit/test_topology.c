/* test_topology.c - SCALE-Sim topology CSV parsing (sw/model/topology.c), both formats, the
 * workloads of tests/topologies/scalesim/ (SCALE-Sim's own files), GEMM shapes and layer scaling. */
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
    const char *xhdr = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                       "Channels, Num Filter, Strides, Padding, Dilation, Depthwise\n";
    char buf[512];
    bad("", "no layers");
    bad(hdr, "no layers");
    bad("a,b,c\n", "header with 3 columns");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4\n", hdr);
    bad(buf, "line 2: 7 fields");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4, 1\nc2, 8, x, 3, 3, 4, 4, 1\n", hdr);
    bad(buf, "line 3: IFMAP Width 'x'");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 0, 1\n", hdr);
    bad(buf, "Num Filter '0'");
    snprintf(buf, sizeof buf, "%sc1, 2, 2, 3, 3, 4, 4, 1\n", hdr);
    bad(buf, "layer 'c1'"); /* kernel larger than the input: npu_conv_check's reason */
    snprintf(buf, sizeof buf, "%sdw, 8, 8, 3, 3, 4, 8, 1, 0, 1, 1\n", xhdr);
    bad(buf, "line 2: layer 'dw'"); /* depthwise needs F == C */
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4, 1, 0, 0\n", xhdr);
    bad(buf, "line 2: Dilation '0'");
    snprintf(buf, sizeof buf, "%sc1, 8, 8, 3, 3, 4, 4, 1, 0, 1, 2\n", xhdr);
    bad(buf, "line 2: Depthwise '2' is not an integer in 0..1");
    bad("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
        "Strides, Padding, Padding\n", "line 1: column 'Padding' named twice");
    bad("c1, 8, 8, 3, 3, 4, 4, 1,\nc2, 8, 8, 3, 3, 4, 4, 1,\n", "line 1: no header");
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

Test(topology, gemm_format)
{
    /* SCALE-Sim's GEMM files: CR LF line ends, a trailing comma, no final line end */
    const char *csv = "Layer,M,N,K,\r\n"
                      "1,256,128,2048,\r\n"
                      "\r\n"
                      "FF_B_0, 128, 2048 ,2048,";
    char msg[200], why[160];
    int M, N, K;
    cr_assert_eq(npu_topo_parse(csv, 3, &g_t, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(g_t.format, NPU_TOPO_GEMM);
    cr_assert_eq(g_t.n, 2);
    cr_assert_str_eq(g_t.layer[0].name, "1");
    cr_assert(g_t.layer[0].M == 256 * 3 && g_t.layer[0].N == 128 && g_t.layer[0].K == 2048,
              "the batch multiplies M");
    cr_assert_str_eq(g_t.layer[1].name, "FF_B_0");
    cr_assert_eq(npu_topo_gemm_shape(&g_t, 1, &M, &N, &K, why, sizeof why), 0);
    cr_assert(M == 384 && N == 2048 && K == 2048);
    cr_assert_str_eq(g_t.warn, "");
}

Test(topology, gemm_errors_name_the_line)
{
    const char *hdr = "Layer, M, N, K,\n";
    char buf[256];
    snprintf(buf, sizeof buf, "%sfc1, 8, 8, 8,\n# c\nfc2, 8, x, 8,\n", hdr);
    bad(buf, "line 4: N 'x' is not an integer in 1..");
    snprintf(buf, sizeof buf, "%sfc1, 8, 8,\n", hdr);
    bad(buf, "line 2: 3 fields; a GEMM layer has 4 (Layer, M, N, K)");
    snprintf(buf, sizeof buf, "%sfc1, 0, 8, 8,\n", hdr);
    bad(buf, "line 2: M '0'");
    snprintf(buf, sizeof buf, "%sfc1, 8, 8, 2000000000,\n", hdr);
    bad(buf, "line 2: K '2000000000'");
    bad(hdr, "no layers");
    cr_assert_eq(npu_topo_parse("Layer, M, N, K,\nbig, 1073741824, 1, 1,\n", 2, &g_t, buf,
                                sizeof buf), -1);
    cr_assert(strstr(buf, "line 2: M x batch = 2147483648 exceeds") != NULL, "%s", buf);
}

Test(topology, tolerated_lines_and_columns)
{
    /* a line of only commas before and after the header, blanks, unknown columns named and
     * unnamed, values past the header */
    const char *csv = " , ,,\n"
                      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                      "Channels, Num Filter, Strides,,Note, Padding\n"
                      ",,,,,,,,,,\n"
                      "  c1 , 9 , 9 , 3 , 3 , 4 , 8 , 1 , , hello, 1 ,\n"
                      "c2,9,9,3,3,4,8,1,,,,7\n";
    char msg[200];
    cr_assert_eq(npu_topo_parse(csv, 1, &g_t, msg, sizeof msg), 0, "%s", msg);
    cr_assert_eq(g_t.n, 2);
    cr_assert_str_eq(g_t.layer[0].name, "c1");
    cr_assert(g_t.layer[0].conv.pad == 1 && g_t.layer[1].conv.pad == 0);
    cr_assert_str_eq(g_t.warn, "warning: ignored 2 columns not in SCALE-Sim's convolution format: "
                               "column 9 (unnamed), column 10 'Note'; values past the header's "
                               "11 columns ignored (first on line 5)\n");
}

Test(topology, depthwise_as_scalesim_writes_it)
{
    const char *csv = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                      "Channels, Num Filter, Strides,\n"
                      "dw, 112, 112, 3, 3, 32, 1, 1,\n"  /* depthwise over 32 channels */
                      "pw, 7, 7, 1, 1, 32, 1, 1,\n"      /* 1x1 to one channel: a real conv */
                      "one, 7, 7, 3, 3, 1, 1, 1,\n";     /* one channel: a real conv */
    const char *col = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                      "Channels, Num Filter, Strides, Depthwise\n"
                      "head, 9, 9, 3, 3, 32, 1, 1, 0\n";
    char msg[200], why[160];
    int M, N, K;
    cr_assert_eq(npu_topo_parse(csv, 1, &g_t, msg, sizeof msg), 0, "%s", msg);
    cr_assert(g_t.layer[0].conv.depthwise && g_t.layer[0].conv.F == 32 &&
              g_t.layer[0].conv.C == 32);
    cr_assert(!g_t.layer[1].conv.depthwise && g_t.layer[1].conv.F == 1);
    cr_assert(!g_t.layer[2].conv.depthwise && g_t.layer[2].conv.F == 1);
    cr_assert_str_eq(g_t.warn, "note: 1 layer with Num Filter 1, Channels > 1 and a filter larger "
                               "than 1x1 read as depthwise convolutions over their channels "
                               "(SCALE-Sim's way of writing them; first 'dw'); a Depthwise column "
                               "decides instead\n");
    cr_assert_eq(npu_topo_gemm_shape(&g_t, 0, &M, &N, &K, why, sizeof why), -1);
    cr_assert(strstr(why, "depthwise") != NULL && strstr(why, "npu conv") != NULL, "%s", why);
    cr_assert_eq(npu_topo_gemm_shape(&g_t, 1, &M, &N, &K, why, sizeof why), 0);
    cr_assert(M == 49 && N == 1 && K == 32);
    cr_assert_eq(npu_topo_parse(col, 1, &g_t, msg, sizeof msg), 0, "%s", msg);
    cr_assert(!g_t.layer[0].conv.depthwise && g_t.layer[0].conv.F == 1, "the column decides");
    cr_assert_str_eq(g_t.warn, "");
}

/* SCALE-Sim's workload files as given (tests/topologies/scalesim/, copied from
 * ../shared/workloads): format, layer count, warnings, a few exact layers. */
static void load(const char *file, int batch, int format, int nlayers)
{
    char path[160], msg[200];
    snprintf(path, sizeof path, "tests/topologies/scalesim/%s", file);
    cr_assert_eq(npu_topo_load(path, batch, &g_t, msg, sizeof msg), 0, "%s: %s", file, msg);
    cr_assert_eq(g_t.format, format, "%s", file);
    cr_assert_eq(g_t.n, nlayers, "%s: %d layers", file, g_t.n);
}

static void conv_is(int i, const char *name, int H, int W, int KH, int KW, int C, int F, int s,
                    int dw)
{
    const npu_conv_t *c = &g_t.layer[i].conv;
    cr_assert_str_eq(g_t.layer[i].name, name);
    cr_assert(c->H == H && c->W == W && c->KH == KH && c->KW == KW && c->C == C && c->F == F &&
              c->stride == s && c->pad == 0 && c->dil == 1 && c->depthwise == dw, "layer %s", name);
}

static void gemm_is(int i, const char *name, int M, int N, int K)
{
    int m, n, k;
    char why[160];
    cr_assert_str_eq(g_t.layer[i].name, name);
    cr_assert_eq(npu_topo_gemm_shape(&g_t, i, &m, &n, &k, why, sizeof why), 0, "%s", why);
    cr_assert(m == M && n == N && k == K, "layer %s: %d x %d x %d", name, m, n, k);
}

Test(topology, scalesim_conv_workloads)
{
    load("alexnet.csv", 1, NPU_TOPO_CONV, 5);
    conv_is(0, "Conv1", 224, 224, 11, 11, 3, 96, 4, 0);
    conv_is(4, "Conv5", 13, 13, 3, 3, 384, 256, 1, 0);
    gemm_is(0, "Conv1", 54 * 54, 96, 3 * 11 * 11); /* im2col: (224 - 11) / 4 + 1 = 54 */
    cr_assert_str_eq(g_t.warn, "");

    load("Resnet50.csv", 2, NPU_TOPO_CONV, 54); /* its line of only commas skipped */
    conv_is(0, "Conv1", 224, 224, 7, 7, 3, 64, 2, 0);
    conv_is(14, "CB3s", 56, 56, 1, 1, 256, 512, 2, 0);
    conv_is(53, "FC6", 1, 1, 1, 1, 2048, 1000, 1, 0);
    gemm_is(0, "Conv1", 2 * 109 * 109, 64, 147);
    gemm_is(53, "FC6", 2, 1000, 2048);
    cr_assert_str_eq(g_t.warn, "warning: ignored 5 columns not in SCALE-Sim's convolution format: "
                               "column 9 (unnamed), column 10 (unnamed), column 11 'Eh', "
                               "column 12 'Ew', column 13 'e2'\n");

    load("mobilenet.csv", 1, NPU_TOPO_CONV, 27);
    conv_is(0, "Conv1", 224, 224, 3, 3, 3, 32, 2, 0);
    conv_is(1, "Conv2", 112, 112, 3, 3, 32, 32, 1, 1); /* "Channels 32, Num Filter 1" */
    conv_is(25, "Conv26", 7, 7, 3, 3, 1024, 1024, 2, 1);
    conv_is(26, "Conv27", 7, 7, 1, 1, 1024, 1024, 1, 0);
    cr_assert(strstr(g_t.warn, "note: 13 layers with Num Filter 1") != NULL, "%s", g_t.warn);

    load("yolo_tiny.csv", 1, NPU_TOPO_CONV, 9);
    conv_is(0, "Conv1", 416, 416, 3, 3, 3, 4, 1, 0); /* 4 filters, as the file says */
    conv_is(8, "Conv9", 7, 7, 1, 1, 1024, 125, 1, 0);
    cr_assert_str_eq(g_t.warn, "");
}

Test(topology, scalesim_gemm_workloads)
{
    load("NCF.csv", 1, NPU_TOPO_GEMM, 12);
    gemm_is(0, "1", 256, 128, 2048);
    gemm_is(11, "12", 2048, 128, 1);
    load("gnmt.csv", 1, NPU_TOPO_GEMM, 17);
    gemm_is(12, "13", 1024, 36548, 1632);
    gemm_is(16, "17", 1600, 1024, 1024);
    load("transformer_partial.csv", 4, NPU_TOPO_GEMM, 6);
    gemm_is(0, "MH_FC_DimReduce_VKQ_0", 4 * 128, 512, 1536);
    gemm_is(5, "FF_B_0", 4 * 128, 2048, 2048); /* the last line has no line end */
    cr_assert_str_eq(g_t.warn, "");
}
