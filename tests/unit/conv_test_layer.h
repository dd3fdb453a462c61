/* conv_test_layer.h - a convolution layer from its fields, for the conv tests (unit and RTL). */
#ifndef CONV_TEST_LAYER_H
#define CONV_TEST_LAYER_H

#include "compile/conv/conv_layer.h"

/* batch b, C x H x W input, F filters of KH x KW, stride s, padding p, dilation d, not depthwise */
static inline npu_conv_t conv_layer_of(int b, int C, int H, int W, int F, int KH, int KW, int s, int p, int d)
{
    npu_conv_t c = {b, C, H, W, F, KH, KW, s, p, d, 0};
    return c;
}

#endif
