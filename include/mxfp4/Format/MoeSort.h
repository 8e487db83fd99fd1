//===- MoeSort.h - MoE token sorting: sizes and the CPU reference -*- C++ -*-===//
//
// moe_sorting as AITER defines it (reference/semantics.md 6.1): the (token,
// slot) pairs of a routing grouped by expert, in token order inside each
// expert, each expert's list padded to a multiple of block_m, so a grouped
// GEMM can take one expert per block of block_m sorted rows.
//
//   id       = (slot << 24) | token        padding: (topk << 24) | T
//   weights  = topk_weights[token, slot]   padding: 0
//   experts  = the (local) expert of each block; blocks past the valid
//              length: -1
//   valid[0] = the padded length (sum of the per-expert padded counts),
//   valid[1] = T
//   positions[token, slot] = where the entry went (-1: dropped or masked)
//
// Ids outside [0, E) are dropped (never read past an array) and counted in
// `dropped`. With an expert mask (expert parallelism), masked-out experts
// are skipped and the others renumbered to local ids 0, 1, ... in order.
// The device kernels (Ops/MoeSort.h) must match this byte for byte.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_MOESORT_H
#define MXFP4_FORMAT_MOESORT_H

#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"

#include <cstdint>
#include <vector>

namespace mxfp4 {

/// The token field of a sorted id is 24 bits, the slot field 8.
inline constexpr int64_t kMoeMaxTokens = int64_t(1) << 24;
inline constexpr int64_t kMoeMaxTopk = 255;

/// The sizes of the sorting outputs for T tokens (AITER's bounds).
struct MoeSortSizes {
  /// sorted ids and weights: T * topk + E * block_m - topk entries.
  int64_t paddedEntries = 0;
  /// expert ids: ceil(paddedEntries / block_m) blocks.
  int64_t blocks = 0;
};
MoeSortSizes moeSortSizes(int64_t tokens, int64_t topk, int64_t experts, int64_t blockM);

/// The problem of one sorting: T tokens routed to topk of E experts.
struct MoeSortShape {
  int64_t tokens = 0, topk = 0, experts = 0, blockM = 0;
};
/// Checks the shape: T in [1, 2^24), topk in [1, 255], E in [1, 65536],
/// block_m in [1, 256].
Error checkMoeSortShape(const MoeSortShape &s);

struct MoeSortResult {
  std::vector<int32_t> sortedIds;   ///< [paddedEntries]
  std::vector<float> sortedWeights; ///< [paddedEntries]
  std::vector<int32_t> expertIds;   ///< [blocks]
  std::vector<int32_t> positions;   ///< [T * topk]: sorted position, -1 if not placed
  int32_t numValid[2] = {0, 0};
  int32_t dropped = 0; ///< ids outside [0, E)
};

/// The reference: `topkIds` and `topkWeights` are [T, topk] row-major;
/// `expertMask`, when not empty, is [E] (nonzero: the expert is local).
Expected<MoeSortResult> moeSortReference(const MoeSortShape &shape, Span<int32_t> topkIds,
                                         Span<float> topkWeights, Span<int32_t> expertMask = {});

} // namespace mxfp4

#endif // MXFP4_FORMAT_MOESORT_H
