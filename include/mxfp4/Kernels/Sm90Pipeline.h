//===- Sm90Pipeline.h - Shared memory and TMA boxes of sm_90a GEMMs -*- C++ -*-===//
//
// The one description of an sm_90a GEMM workgroup's shared memory, used by
// the lowering (offsets), the runtime (the launch's dynamic shared memory)
// and prepareGemmA4W4Weight (the TMA descriptors' boxes):
//
//   [activations: 2 buffers of BM x BK bf16]
//   [weight stages: S x (BK/128 weight boxes of 8 KiB, then BK/128 scale boxes of 512 B)]
//   [S mbarriers of 8 bytes]
//
// Weights reach shared memory by TMA (cp.async.bulk.tensor), one stage per K
// step, S steps in flight. The descriptors view the sm90_mma16 layouts
// (Format/Layout.h) as 3-D arrays of 32-bit words:
//   weights [N/16 tiles][K/128 chunks][256 words]  box {256, 1, 8}: 128 rows of one chunk
//   scales  [N/32 groups][K/128 chunks][32 words]  box {32, 1, 4}
// so a box lands in shared memory exactly as the rows' global bytes, and a
// thread reads its 16 weight bytes / scale word at the same offsets it would
// read in global memory.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_SM90PIPELINE_H
#define MXFP4_KERNELS_SM90PIPELINE_H

#include <cstdint>

namespace mxfp4::sm90 {

/// Rows of weights per workgroup (the N tile).
inline constexpr int64_t kTileRows = 128;
/// Bytes of one weight box (128 rows x 128 K of E2M1) and one scale box.
inline constexpr int64_t kWeightBoxBytes = kTileRows * 128 / 2;
inline constexpr int64_t kScaleBoxBytes = kTileRows * 128 / 32;
/// The descriptors' innermost extents: 32-bit words of one 16-row tile's
/// 128-K chunk (16 rows x 64 bytes) and of one 32-row group's scale chunk.
inline constexpr int64_t kTileChunkWords = 16 * 64 / 4;
inline constexpr int64_t kGroupScaleWords = 32 * 4 / 4;
/// Bytes of one TMA descriptor (CUtensorMap); the weights' comes first.
inline constexpr int64_t kDescriptorBytes = 128;

struct SharedLayout {
  int64_t activationBytes; ///< both activation buffers, at offset 0
  int64_t stages;          ///< weight stages (K steps in flight)
  int64_t chunks;          ///< 128-K chunks per stage (BK / 128)
  /// One stage: its weight boxes, then its scale boxes.
  int64_t stageBytes() const { return chunks * (kWeightBoxBytes + kScaleBoxBytes); }
  int64_t scalesInStage() const { return chunks * kWeightBoxBytes; }
  int64_t stagesOffset() const { return activationBytes; }
  int64_t barriersOffset() const { return activationBytes + stages * stageBytes(); }
  int64_t totalBytes() const { return barriersOffset() + stages * 8; }
};

/// The layout of a BM x BK GEMM workgroup. Four steps of 128 K (three of
/// 256) keep 34-51 KiB of weights in flight per workgroup, so four or five
/// BM <= 32 workgroups share an SM; BM 128 keeps five steps, the most with
/// which two of its workgroups still share an SM.
constexpr SharedLayout sharedLayout(int64_t bm, int64_t bk) {
  const int64_t chunks = bk / 128;
  int64_t stages = bm == 128 ? 5 : (chunks == 1 ? 4 : 3);
  return {2 * bm * bk * 2, stages, chunks};
}

} // namespace mxfp4::sm90

#endif // MXFP4_KERNELS_SM90PIPELINE_H
