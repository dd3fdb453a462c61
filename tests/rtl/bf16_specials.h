/*
 * bf16_specials.h - special-value cases of one bf16 psum chain (issue 15; docs/datapath.md
 * section 6), each with its hand-derived fp32 result: shared by tests/rtl/test_bf16.c (a GEMM
 * output each) and tests/rtl/test_conv_bf16.c (an output of each conv kernel).
 */
#ifndef BF16_SPECIALS_H
#define BF16_SPECIALS_H

#include <stdint.h>

/* One output each: C[i][i] = sum_k a[k] * b[k] over K = 4 lanes (one wave), expected bits. */
typedef struct special {
    const char *what;
    uint16_t a[4], b[4];
    uint32_t c;
} special_t;

/* bf16 patterns: 1 0x3F80, 2 0x4000, 3 0x4040, -1 0xBF80, Inf 0x7F80, 2^-12 0x3980, 2^120
 * 0x7B80, 2^127 0x7F00, 2^-70 0x1C80, smallest denormal 0x0001. */
static const special_t k_bf16[] = {
    {"1*1 + 2*1 + 3*1 = 6", {0x3F80, 0x4000, 0x4040, 0}, {0x3F80, 0x3F80, 0x3F80, 0}, 0x40C00000u},
    {"-1 * 3 = -3", {0xBF80, 0, 0, 0}, {0x4040, 0, 0, 0}, 0xC0400000u},
    {"-0 * 1 + -0 * 1: the chain starts at +0", {0x8000, 0x8000, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x00000000u},
    {"Inf * 1 + 1 = Inf", {0x7F80, 0x3F80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7F800000u},
    {"-Inf * 1 + 1 = -Inf", {0xFF80, 0x3F80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0xFF800000u},
    {"Inf + -Inf = NaN", {0x7F80, 0xFF80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7FC00000u},
    {"0 * Inf = NaN", {0, 0x3F80, 0, 0}, {0x7F80, 0x3F80, 0, 0}, 0x7FC00000u},
    {"negative NaN input -> the canonical NaN", {0xFFC1, 0x3F80, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7FC00000u},
    {"signalling NaN weight -> the canonical NaN", {0x3F80, 0, 0, 0}, {0x7F81, 0, 0, 0}, 0x7FC00000u},
    {"denormal * 2^120 flushed: 0 + 1 = 1", {0x0001, 0x3F80, 0, 0}, {0x7B80, 0x3F80, 0, 0}, 0x3F800000u},
    {"denormal * Inf = 0 * Inf = NaN", {0x8001, 0, 0, 0}, {0x7F80, 0, 0, 0}, 0x7FC00000u},
    {"2^127 * 2 overflows to Inf", {0x7F00, 0, 0, 0}, {0x4000, 0, 0, 0}, 0x7F800000u},
    {"-2^127 * 2 overflows to -Inf", {0xFF00, 0, 0, 0}, {0x4000, 0, 0, 0}, 0xFF800000u},
    {"2^127 + 2^127 overflows to Inf", {0x7F00, 0x7F00, 0, 0}, {0x3F80, 0x3F80, 0, 0}, 0x7F800000u},
    {"2^-70 * 2^-70 flushes to +0", {0x1C80, 0, 0, 0}, {0x1C80, 0, 0, 0}, 0x00000000u},
    {"(1 + 2^-24) + 2^-24: two ties to even = 1", {0x3F80, 0x3980, 0x3980, 0}, {0x3F80, 0x3980, 0x3980, 0}, 0x3F800000u},
    {"(2^-24 + 2^-24) + 1 = 1 + 2^-23, exact", {0x3980, 0x3980, 0x3F80, 0}, {0x3980, 0x3980, 0x3F80, 0}, 0x3F800001u},
};

#endif
