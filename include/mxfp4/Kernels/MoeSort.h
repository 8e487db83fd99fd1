//===- MoeSort.h - The MoE sorting kernels ------------------------*- C++ -*-===//
//
// moe_sorting (Format/MoeSort.h) on the device, in two SIMT kernels written
// once with the upstream gpu, scf, arith and memref dialects, which every
// target lowers as they are (Conversion/SimtOutlining.h). BN = 256 threads
// per workgroup, no atomics, no state between launches, so the outputs are
// the same bits on every run:
//
//   moe_count (ids, mask, counts, status, positions, T, masked), grid
//   ceil(E / kMoeCountGroup): workgroup w counts the entries of experts
//     [w G, w G + G) in one read of the ids (0 for a masked-out expert);
//     workgroup 0 also writes status[0] = the ids outside [0, E) and -1 as
//     the position of every entry no expert places.
//   moe_place (ids, weights, mask, counts, sorted_ids, sorted_weights,
//              expert_ids, num_valid, positions, T, masked), grid E:
//     e's offset is the sum of the padded counts before it; its entries go
//     there in token order (passes of 256 x BK ids staged in shared memory,
//     each thread ranking its run of BK by a prefix sum over the
//     workgroup), positions[entry] = where it went, then its padding; the
//     last workgroup writes num_valid and the tail past it.
//
// `masked` (i32) says whether `mask` ([E] i32, nonzero: local) is read.
// N = E, K = topk, BM = block_m; T is a run-time argument.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_MOESORT_H
#define MXFP4_KERNELS_MOESORT_H

#include "mxfp4/Kernels/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"

namespace mxfp4 {

/// Appends moe_count or moe_place (by spec.op) to `module`; the spec must be
/// verified.
void buildMoeSort(mlir::ModuleOp module, const KernelSpec &spec);

} // namespace mxfp4

#endif // MXFP4_KERNELS_MOESORT_H
