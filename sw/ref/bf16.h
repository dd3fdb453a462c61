/*
 * bf16.h - bit-exact C model of the bf16 datapath's arithmetic (docs/datapath.md, "bf16
 * arithmetic"): the same four operations as rtl/npu_bf16_mul.v, npu_fp32_add.v,
 * npu_fp32_to_bf16.v and the MAC of npu_pe.v with BF16 = 1, on raw bit patterns, in integer
 * arithmetic only (the host FPU's rounding mode, denormal handling and NaN payloads never enter
 * the result).
 *
 * Semantics, in short: denormal inputs read as zero of their sign and denormal results flush to
 * zero of their sign (FTZ); every NaN result is the one quiet NaN NPU_FP32_NAN / NPU_BF16_NAN;
 * 0 x Inf and Inf + -Inf are NaN; overflow gives Inf of the result's sign; fp32 addition rounds
 * to nearest, ties to even; an exact-zero sum is +0 unless both addends are -0.
 */
#ifndef NPU_BF16_H
#define NPU_BF16_H

#include <stdint.h>

#define NPU_FP32_NAN 0x7FC00000u /* the canonical quiet NaN of every fp32 result */
#define NPU_BF16_NAN 0x7FC0u     /* its bf16 form */

/* bf16 x bf16 -> fp32, exact (8-bit x 8-bit significands fit fp32's 24); FTZ, overflow -> Inf. */
uint32_t npu_bf16_mul(uint16_t a, uint16_t b);

/* fp32 + fp32 -> fp32, round to nearest even; FTZ on inputs and result. */
uint32_t npu_fp32_add(uint32_t a, uint32_t b);

/* fp32 x fp32 -> fp32, round to nearest even; FTZ on inputs and on a result whose rounded value
 * (exponent unbounded) is below 2^-126; overflow -> Inf. The vector unit's scaling
 * (rtl/npu_fp32_mul.v). */
uint32_t npu_fp32_mul(uint32_t a, uint32_t b);

/* fp32 -> bf16, round to nearest even; overflow -> Inf, NaN -> NPU_BF16_NAN, denormal -> zero. */
uint16_t npu_fp32_to_bf16(uint32_t x);

/* One bf16 PE step: psum + a * w, with the product exact and one RNE rounding (the add). */
uint32_t npu_bf16_mac(uint32_t psum, uint16_t a, uint16_t w);

#endif
