//===- MoeElementwise.h - The MoE elementwise kernels -------------*- C++ -*-===//
//
// The MoE steps around the grouped GEMMs, as SIMT kernels written once with
// upstream dialects (like Kernels/MoeSort.h; every target lowers them as
// they are). Rows are sorted rows (moe_place's order); only rows below
// num_valid[0] are touched. BF16 data is addressed as i32 words; codes as
// i32 words (8 E2M1 each, element 8w + e at bits 4e), scales as bytes:
// codes row-major [rows, Kp/2], scales [rows, Kp/32] in the spec's MoE
// scale layout (KernelSpec::moeScaleRep; row-major unless gfx1250's), every
// intermediate row padded to Kp = moePaddedRow(K) elements (zero codes,
// scale 0x7F past K).
//
//   moe_quant (hidden, sorted_ids, num_valid, codes, scales, T): one thread
//     per 32-element block of a sorted row of K = H: the token's row of
//     `hidden` quantized with the spec's rounding, bit for bit the CPU
//     quantizer; padding rows (token >= T) get zero codes and scale 0x7F.
//   moe_actq (gate_up, sorted_weights, num_valid, codes, scales, debug,
//             p0, p1, doweight, write_debug): one thread per 32-element
//     block of K = inter: gate = columns [0, inter) and up = [Ip, Ip +
//     inter) of a BF16 row [2 Ip] of gate_up, times the row's routing weight
//     when `doweight`, then the spec's gated activation in f32 (p0, p1:
//     swiglu alpha and limit, situv2 beta and linear_beta), quantized;
//     `write_debug` also stores the f32 activations [rows, inter].
//   moe_reduce (y, topk_weights, positions, out, T, use_weights): one thread
//     per 8 columns of a token's output row of N = H: the sum over its K =
//     topk slots, in slot order, of weight x y[position] (f32; rows of y
//     padded to moePaddedRow(H)), rounded to
//     BF16 (slots without a position, -1, are skipped; weights 1 unless
//     `use_weights`).
//   moe_cast (acc, out, T): one thread per 8 columns of a token's output
//     row of N = H: the atomic stage 2's f32 accumulator (rows padded to
//     moePaddedRow(H)) rounded to BF16.
//
// exp is computed with arith only (Cody-Waite reduction and a degree-7
// polynomial, relative error ~1e-7), so every target computes the same.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_MOEELEMENTWISE_H
#define MXFP4_KERNELS_MOEELEMENTWISE_H

#include "mxfp4/Kernels/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"

namespace mxfp4 {

/// Appends moe_quant, moe_actq, moe_reduce or moe_cast (by spec.op) to `module`; the
/// spec must be verified.
void buildMoeElementwise(mlir::ModuleOp module, const KernelSpec &spec);

} // namespace mxfp4

#endif // MXFP4_KERNELS_MOEELEMENTWISE_H
