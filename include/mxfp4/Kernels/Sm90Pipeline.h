//===- Sm90Pipeline.h - Shared memory and TMA boxes of sm_90a GEMMs -*- C++ -*-===//
//
// The one description of an sm_90a GEMM workgroup's shared memory, used by
// the lowering (offsets), the runtime (the launch's dynamic shared memory)
// and prepareGemmA4W4Weight (the TMA descriptors' boxes):
//
//   [activations: 2 buffers of BM x BK bf16]      (none with staged activations)
//   [stages: S x ([BM x BK bf16 activations, staged kernels only],
//                 BK/128 weight boxes of 8 KiB, then BK/128 scale boxes of 512 B)]
//   [persistent kernels: the output tile, BM x stagedRowBytes(BN)]
//   [S mbarriers of 8 bytes]
//
// Kernels that quantize (or dequantize MXFP4) in the K loop write the
// activations into the two buffers themselves. Kernels on activations that
// qdq_mxfp4 already dequantized into the activation image (below) have
// them copied into each stage with the weights, by cp.async.bulk.
//
// Weights reach shared memory by TMA (cp.async.bulk.tensor), one stage per K
// step, S steps in flight. The descriptors view the sm90_mma16 layouts
// (Format/Layout.h) as 3-D arrays of 32-bit words:
//   weights [N/16 tiles][K/128 chunks][256 words]  box {256, 1, BN/16}: BN rows of one chunk
//   scales  [N/32 groups][K/128 chunks][32 words]  box {32, 1, BN/32}
// so a box lands in shared memory exactly as the rows' global bytes, and a
// thread reads its 16 weight bytes / scale word at the same offsets it would
// read in global memory. BN is 128, or 64 where N / 128 tiles would leave
// most SMs idle (each has its own pair of descriptors).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_SM90PIPELINE_H
#define MXFP4_KERNELS_SM90PIPELINE_H

#include <cstdint>

namespace mxfp4::sm90 {

/// Rows of weights per workgroup (the N tile): 128, or the narrow tile 64,
/// or the wide tile 192 (gemm_qdqa4w4 at BM 128: three warpgroups of 64
/// rows, each warp converting 16 as at BN 128, so a step's 32 KiB of
/// activations feed 1.5x the MMAs and split-K fills the SMs where 128-row
/// tiles leave them idle: 1536x7168 M = 512 is 8 x 4 tiles x 4 splits).
inline constexpr int64_t kTileRows = 128;
inline constexpr int64_t kNarrowTileRows = 64;
inline constexpr int64_t kWideTileRows = 192;
/// Bytes of one weight box (BN rows x 128 K of E2M1) and one scale box.
constexpr int64_t weightBoxBytes(int64_t bn = kTileRows) { return bn * 128 / 2; }
constexpr int64_t scaleBoxBytes(int64_t bn = kTileRows) { return bn * 128 / 32; }
/// The descriptors' innermost extents: 32-bit words of one 16-row tile's
/// 128-K chunk (16 rows x 64 bytes) and of one 32-row group's scale chunk.
inline constexpr int64_t kTileChunkWords = 16 * 64 / 4;
inline constexpr int64_t kGroupScaleWords = 32 * 4 / 4;
/// Bytes of one TMA descriptor (CUtensorMap). The prepared weights hold
/// four: weights and scales with BN 128 boxes, then with BN 64 boxes (BN
/// 192 copies three of those).
inline constexpr int64_t kDescriptorBytes = 128;
constexpr int64_t descriptorOffset(int64_t bn) {
  return bn == kTileRows ? 0 : 2 * kDescriptorBytes;
}
/// Rows of one weight box of the N tile's descriptors (BN 192: three).
constexpr int64_t boxRows(int64_t bn) { return bn == kWideTileRows ? kNarrowTileRows : bn; }
/// Shared memory one sm_90 workgroup may take (227 KiB), and an SM's (228
/// KiB, 1 KiB of it reserved per resident workgroup).
inline constexpr int64_t kMaxSharedBytes = 227 * 1024;
inline constexpr int64_t kSmSharedBytes = 228 * 1024;
/// Split-K of BM 128 (and 256) tiles with at most this many splits sums them inside a
/// thread-block cluster (the portable cluster size), through distributed
/// shared memory; other tiles go through a global workspace. A cluster's
/// workgroups must share a GPC: clusters of small tiles, several per SM,
/// fit fewer of them at once than the plain grid (8448x7168 M = 1, BM 8 x 8
/// splits, ran slower clustered; BM 128 x 2 splits at M = 128 faster:
/// measured with mxfp4-bench --split-k=, see docs/Performance.md).
/// BN 192 (one workgroup a SM) clusters only pairs: clusters of four fill
/// a GPC's SMs only in fours, and 32 of them (1536x7168 M = 512, 4 splits)
/// ran as two waves.
inline constexpr int64_t kMaxClusterSplits = 8;
constexpr bool clusterSplitK(int64_t bm, int64_t splits, int64_t bn = kTileRows) {
  if (bn == kWideTileRows)
    return bm >= 128 && splits == 2;
  return bm >= 128 && splits > 1 && splits <= kMaxClusterSplits;
}

/// Bytes between the token rows of an output tile staged in shared memory
/// on its way out (Conversion/TileToNVVM/Sm90Store.cpp): 128 bf16 (192 for
/// BN 192) and 16 bytes more, which put the 8 rows of each stmatrix
/// matrix on different banks.
inline constexpr int64_t kStagedRowBytes = 128 * 2 + 16;
constexpr int64_t stagedRowBytes(int64_t bn) {
  return bn > kTileRows ? bn * 2 + 16 : kStagedRowBytes;
}

struct SharedLayout {
  int64_t activationBytes; ///< both activation buffers, at offset 0
  int64_t stages;          ///< weight stages (K steps in flight)
  int64_t chunks;          ///< 128-K chunks per stage (BK / 128)
  int64_t stagedActivationBytes = 0; ///< a step's activations in each stage
  /// The output tile's own region after the stages (persistent kernels,
  /// whose stages already receive the next tile while one is stored);
  /// other kernels stage it from byte 0.
  int64_t outputBytes = 0;
  int64_t bn = kTileRows; ///< weight rows per box
  constexpr int64_t weightBox() const { return weightBoxBytes(bn); }
  constexpr int64_t scaleBox() const { return scaleBoxBytes(bn); }
  /// One stage: its activations (if staged), weight boxes, then scale boxes.
  constexpr int64_t stageBytes() const {
    return stagedActivationBytes + chunks * (weightBox() + scaleBox());
  }
  constexpr int64_t weightsInStage() const { return stagedActivationBytes; }
  constexpr int64_t scalesInStage() const { return stagedActivationBytes + chunks * weightBox(); }
  constexpr int64_t stagesOffset() const { return activationBytes; }
  constexpr int64_t outputOffset() const { return activationBytes + stages * stageBytes(); }
  constexpr int64_t barriersOffset() const { return outputOffset() + outputBytes; }
  constexpr int64_t totalBytes() const { return barriersOffset() + stages * 8; }
};

/// The layout of a BM x BK GEMM workgroup. Four steps of 128 K (three of
/// 256) keep 34-51 KiB of weights in flight per workgroup, so four or five
/// BM <= 32 workgroups share an SM; BM 128 keeps five steps, the most with
/// which two of its workgroups still share an SM.
/// With `stagedActivations` each stage also holds the step's BM x BK bf16
/// activations: BM 256 keeps three (217.5 KiB), BM 192 three (169.5 KiB;
/// 220.5 with the persistent output region), BM 128 five (202.5 KiB,
/// one workgroup per SM;
/// four when `persistent` adds its output region), smaller tiles as many as
/// fit 74 KiB (three workgroups per SM), 3..6 (the staged K loop refills a
/// stage one step after its wgmmas: 3 keep one workgroup busy). `stages`
/// (KernelSpec::stages) overrides the count: 2 stages of BM 128 let two
/// workgroups share an SM and hide each other's waits. BN 64 halves the
/// weight and scale boxes and keeps the counts; BN 192 takes 1.5x and
/// keeps them too (five stages of 44.75 KiB at BM 128).
constexpr SharedLayout sharedLayout(int64_t bm, int64_t bk, bool stagedActivations = false,
                                    int64_t stages = 0, bool persistent = false,
                                    int64_t bn = kTileRows) {
  const int64_t chunks = bk / 128;
  const int64_t output = persistent ? bm * stagedRowBytes(bn) : 0;
  if (stagedActivations) {
    SharedLayout l{0, 0, chunks, bm * bk * 2, output, bn};
    int64_t fit = 74 * 1024 / l.stageBytes();
    l.stages = stages      ? stages
               : bm > 128  ? 3
               : bm == 128 ? (persistent ? 4 : 5)
                           : (fit < 3 ? 3 : (fit > 6 ? 6 : fit));
    return l;
  }
  if (!stages)
    stages = bm == 128 ? 5 : (chunks == 1 ? 4 : 3);
  return {2 * bm * bk * 2, stages, chunks, 0, output, bn};
}

/// The decode variant's layout: the BM x BK bf16 activations of every K
/// step of the workgroup, in turn; no stages (its weights go to registers).
constexpr SharedLayout decodeSharedLayout(int64_t bm, int64_t bk, int64_t steps,
                                          int64_t bn = kTileRows) {
  return {steps * bm * bk * 2, 0, bk / 128, 0, 0, bn};
}

/// The warp-split variant's layout (KernelSpec::warpSplitK): only the
/// warps' partial tiles (BN rows x 8 tokens of f32 each), summed after the
/// K loop; no stages, no activation buffers.
constexpr SharedLayout warpSplitKSharedLayout(int64_t bn, int64_t warps) {
  return {warps * bn * 8 * 4, 0, 1, 0, 0, bn};
}
/// Warps among which the warp-split variant divides a workgroup's K, each
/// at least one 128-K chunk: up to 512 threads, whose ~96 registers still
/// fit an SM (at 28 / 32 warps the caps of 72 / 64 spill).
inline constexpr int64_t kMaxSplitKWarps = 16;

/// Warpgroups among which the decode variant may split a workgroup's K
/// steps (KernelSpec::decodeGroups; one warpgroup each below BM 128): up to
/// 512 threads, whose registers the lowering caps to fit one SM.
inline constexpr int64_t kMaxDecodeGroups = 4;

/// Warpgroups of a GEMM workgroup: BM 128, 192 and 256 have two (each warp
/// converts 16 weight rows, one m64nBM wgmma per warpgroup and
/// MMA step), smaller tiles one (32 rows per warp) unless `twoWarpgroups`
/// asks for two. BN 64 has one at any BM (16 rows per warp), BN 192 three
/// (16 rows per warp, one m64nBM wgmma per warpgroup and MMA step).
constexpr int64_t gemmWarpgroups(int64_t bm, bool twoWarpgroups = false, int64_t bn = kTileRows) {
  if (bn == kWideTileRows)
    return 3;
  return bn == kTileRows && (bm >= 128 || twoWarpgroups) ? 2 : 1;
}

/// Workgroups of this layout that fit one SM's shared memory.
constexpr int64_t workgroupsPerSm(const SharedLayout &l) {
  return kSmSharedBytes / (l.totalBytes() + 1024);
}

/// The activation image: what qdq_mxfp4 writes and staged GEMMs copy into
/// shared memory as they are. Rows go in blocks of 128; inside a block, per
/// 128-K chunk and MMA step s (8 per chunk), a slab of 16 token groups x 2
/// halves h x 8 rows x 16 bytes, the wgmma core matrices of NvLowering.h:
/// word t of (row r, half h, step s) holds K = 32t + 8(s/2) + 2(s%2) + h and
/// that + 4 (low, high bf16). A BM-row tile's slab of a step is BM x 32
/// contiguous bytes, a BM 128 tile's whole step 32 KiB. Rows past M in the
/// last block are zero up to a multiple of 8 (qdq_mxfp4 copies whole
/// token groups) and never written after (their MMA columns are never stored).
inline constexpr int64_t kImageBlockRows = 128;
/// Bf16 elements of the image of M rows of K.
constexpr int64_t activationImageElements(int64_t m, int64_t k) {
  return (m + kImageBlockRows - 1) / kImageBlockRows * kImageBlockRows * k;
}
/// Rows of image scratch for M rows: every tile of an image GEMM reads
/// whole ones, so whole pairs of blocks (BM 256) and whole 192-row tiles
/// (BM 192), rounded to blocks. Rows past M are never written (their
/// outputs are never stored).
constexpr int64_t activationImageScratchRows(int64_t m) {
  auto roundUp = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  const int64_t pairs = roundUp(m, 2 * kImageBlockRows);
  const int64_t tiles192 = roundUp(roundUp(m, 192), kImageBlockRows);
  return pairs > tiles192 ? pairs : tiles192;
}
/// The bf16 element of the image holding (row, col) of a matrix of K columns.
constexpr int64_t activationImageIndex(int64_t row, int64_t col, int64_t k) {
  const int64_t block = row / kImageBlockRows, r = row % kImageBlockRows;
  const int64_t chunk = col / 128, kk = col % 128;
  const int64_t t = kk / 32, p = (kk % 32) / 8, e = kk % 8, w = e % 4;
  const int64_t s = 2 * p + w / 2, h = w % 2;
  const int64_t slab = (block * (k / 128) + chunk) * 8 + s;
  const int64_t word = (((slab * 16 + r / 8) * 2 + h) * 8 + r % 8) * 4 + t;
  return word * 2 + e / 4;
}

} // namespace mxfp4::sm90

#endif // MXFP4_KERNELS_SM90PIPELINE_H
