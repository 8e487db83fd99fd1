//===- MoeSort.cpp - MoE token sorting: the CPU reference -----------------===//

#include "mxfp4/Format/MoeSort.h"

namespace mxfp4 {

MoeSortSizes moeSortSizes(int64_t tokens, int64_t topk, int64_t experts, int64_t blockM) {
  MoeSortSizes s;
  s.paddedEntries = tokens * topk + experts * blockM - topk;
  s.blocks = (s.paddedEntries + blockM - 1) / blockM;
  return s;
}

Error checkMoeSortShape(const MoeSortShape &s) {
  if (s.tokens < 1 || s.tokens >= kMoeMaxTokens)
    return makeError("moe sort: T (tokens) must be in [1, 2^24), got ", s.tokens);
  if (s.topk < 1 || s.topk > kMoeMaxTopk)
    return makeError("moe sort: topk must be in [1, ", kMoeMaxTopk, "], got ", s.topk);
  if (s.experts < 1 || s.experts > 65536)
    return makeError("moe sort: E (experts) must be in [1, 65536], got ", s.experts);
  if (s.blockM < 1 || s.blockM > 256)
    return makeError("moe sort: block_m must be in [1, 256], got ", s.blockM);
  // Every output is indexed with 32 bits.
  if (moeSortSizes(s.tokens, s.topk, s.experts, s.blockM).paddedEntries >= (int64_t(1) << 31))
    return makeError("moe sort: T * topk + E * block_m is too large for 32-bit indexing");
  return Error::success();
}

Expected<MoeSortResult> moeSortReference(const MoeSortShape &shape, Span<int32_t> topkIds,
                                         Span<float> topkWeights, Span<int32_t> expertMask) {
  if (Error e = checkMoeSortShape(shape))
    return e;
  const int64_t t = shape.tokens, topk = shape.topk, e = shape.experts, bm = shape.blockM;
  if (int64_t(topkIds.size()) != t * topk || int64_t(topkWeights.size()) != t * topk)
    return makeError("moe sort: topk_ids and topk_weights must hold T * topk = ", t * topk,
                     " entries, got ", topkIds.size(), " and ", topkWeights.size());
  if (!expertMask.empty() && int64_t(expertMask.size()) != e)
    return makeError("moe sort: the expert mask must hold E = ", e, " entries, got ",
                     expertMask.size());
  const MoeSortSizes sizes = moeSortSizes(t, topk, e, bm);
  const int32_t sentinel = int32_t((topk << 24) | t);
  MoeSortResult r;
  r.sortedIds.assign(size_t(sizes.paddedEntries), sentinel);
  r.sortedWeights.assign(size_t(sizes.paddedEntries), 0.0f);
  r.expertIds.assign(size_t(sizes.blocks), -1);
  r.positions.assign(size_t(t * topk), -1);
  // Entries per expert, in (token, slot) order.
  std::vector<std::vector<int64_t>> entries(static_cast<size_t>(e));
  for (int64_t i = 0; i < t * topk; ++i) {
    const int32_t id = topkIds[size_t(i)];
    if (id < 0 || id >= e) {
      ++r.dropped;
      continue;
    }
    if (expertMask.empty() || expertMask[size_t(id)] != 0)
      entries[size_t(id)].push_back(i);
  }
  int64_t offset = 0, local = 0;
  for (int64_t x = 0; x < e; ++x) {
    if (!expertMask.empty() && expertMask[size_t(x)] == 0)
      continue;
    const std::vector<int64_t> &list = entries[size_t(x)];
    for (size_t j = 0; j < list.size(); ++j) {
      const int64_t i = list[j];
      r.sortedIds[size_t(offset) + j] = int32_t(((i % topk) << 24) | (i / topk));
      r.sortedWeights[size_t(offset) + j] = topkWeights[size_t(i)];
      r.positions[size_t(i)] = int32_t(offset + int64_t(j));
    }
    const int64_t padded = (int64_t(list.size()) + bm - 1) / bm * bm;
    for (int64_t blk = offset / bm; blk < (offset + padded) / bm; ++blk)
      r.expertIds[size_t(blk)] = int32_t(local);
    offset += padded;
    ++local;
  }
  r.numValid[0] = int32_t(offset);
  r.numValid[1] = int32_t(t);
  return r;
}

} // namespace mxfp4
