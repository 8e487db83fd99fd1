//===- MoeSort.h - MoE token sorting on the device ----------------*- C++ -*-===//
//
// moeSort groups a routing's (token, slot) pairs by expert on the device,
// bit for bit what moeSortReference (Format/MoeSort.h) computes on the CPU:
// two launches (moe_count, moe_place; Kernels/MoeSort.h), no host
// synchronisation, no state kept between calls, so it can be captured in a
// CUDA graph. Ids outside [0, E) are dropped and counted in `status[0]`.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_MOESORT_H
#define MXFP4_OPS_MOESORT_H

#include "mxfp4/Format/MoeSort.h"
#include "mxfp4/Runtime/Device.h"
#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <optional>

namespace mxfp4 {

/// Device pointers of one sorting (sizes from moeSortSizes).
struct MoeSortBuffers {
  const int32_t *topkIds = nullptr;    ///< [T, topk]
  const float *topkWeights = nullptr;  ///< [T, topk]
  const int32_t *expertMask = nullptr; ///< [E], nonzero: local; null: every expert is
  int32_t *sortedIds = nullptr;        ///< [paddedEntries]
  float *sortedWeights = nullptr;      ///< [paddedEntries]
  int32_t *expertIds = nullptr;        ///< [blocks]
  int32_t *numValid = nullptr;         ///< [2]
  int32_t *status = nullptr;           ///< [1]: the ids dropped
  /// [T, topk]: where each entry went in the sorted order, -1 for entries
  /// no expert placed (dropped or masked out); what moeReduce reads.
  int32_t *positions = nullptr;
  int32_t *workspace = nullptr;        ///< moeSortWorkspaceBytes: per-expert counts
};

/// The scratch moeSort needs between its two launches.
inline int64_t moeSortWorkspaceBytes(const MoeSortShape &shape) { return shape.experts * 4; }

/// Sorts on `stream`; every pointer 4-byte aligned, none null but the mask.
/// `arch` defaults to the device's target.
Error moeSort(Device &dev, void *stream, const MoeSortShape &shape, const MoeSortBuffers &buffers,
              std::optional<Arch> arch = std::nullopt);

} // namespace mxfp4

#endif // MXFP4_OPS_MOESORT_H
