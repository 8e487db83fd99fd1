//===- Layout.h - Preshuffled weight and scale layouts ----------*- C++ -*-===//
//
// Kernels read weights and scales in the order their matrix instructions want
// them. A layout is a pure index function (logical (row, col) -> byte offset in
// its padded storage) plus the alignment it needs; whole-tensor shuffles and
// their inverses are built on it. Adding a layout is one table entry and one
// offset function in Layout.cpp.
//
//   weights  RowMajor        [N, K/2] as given
//            Gfx950Mfma16    AITER shuffle_weight (16,16): per 16 rows and 64 bytes,
//                            lane l reads 16 B at l*16 = row l%16, K 32*(l/16)..+31
//                            (semantics.md 3.1; gfx1250 uses the same byte order)
//            Sm90Mma16       per 16 rows and 128 K, 1 KiB in two 512 B halves (rows
//                            0-7, 8-15); lane g*4+t reads 16 B = row g, K 32t..+31,
//                            the wgmma register-A fragment (= mma.sync m16n8k16 A)
//                            under the K permutation of docs/Architecture.md; the
//                            bits of each 32-bit word then reordered for the
//                            kernel's conversion (Sm90WeightBits.h), which the
//                            byte offsets below do not show
//   scales   RowMajor        [rows, K/32] as given
//            Gfx950Mfma16    AITER e8m0_shuffle: 32 rows x 8 K-blocks per 256 B,
//                            dword = MFMA lane, byte = opsel (semantics.md 3.2)
//            Gfx1250Wmma     AITER shuffle_scale_n32k4: per 32 rows, one dword =
//                            the 4 scales of one row for one 128-K WMMA step (3.4)
//            Sm90Mma16       per 32 rows and 128 K, 128 B: lane g*4+t's dword holds
//                            K-block t of rows g, g+8, g+16, g+24 (byte 2*(n%32/16) + n%16/8)
//
// Padding is deterministic: padded scale bytes are kScalePadByte.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_FORMAT_LAYOUT_H
#define MXFP4_FORMAT_LAYOUT_H

#include "mxfp4/Support/Error.h"
#include "mxfp4/Support/Span.h"
#include <string_view>

#include <cstdint>
#include <optional>
#include <vector>

namespace mxfp4 {

enum class WeightLayout : uint8_t { RowMajor, Gfx950Mfma16, Sm90Mma16 };
enum class ScaleLayout : uint8_t { RowMajor, Gfx950Mfma16, Gfx1250Wmma, Sm90Mma16 };

/// Value of padded scale bytes: E8M0 1.0, harmless against zero data.
inline constexpr uint8_t kScalePadByte = 0x7F;

/// Storage extent of a layout: rows x cols bytes after padding.
struct StorageShape {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t bytes() const { return rows * cols; }
  bool operator==(const StorageShape &o) const { return rows == o.rows && cols == o.cols; }
};

std::string_view toString(WeightLayout layout);
std::string_view toString(ScaleLayout layout);
std::optional<WeightLayout> parseWeightLayout(std::string_view name);
std::optional<ScaleLayout> parseScaleLayout(std::string_view name);

//===----------------------------------------------------------------------===//
// Weights: packed E2M1 bytes, [n, kBytes] logical. No padding; shapes must fit.
//===----------------------------------------------------------------------===//

/// Checks that an [n, kBytes] packed weight fits `layout` (divisibility).
Error checkWeightShape(WeightLayout layout, int64_t n, int64_t kBytes);

/// Byte offset of logical byte (row, kb). Requires checkWeightShape to pass.
/// (Sm90Mma16: of the 32-bit word's byte before its bits are reordered.)
int64_t weightOffset(WeightLayout layout, int64_t kBytes, int64_t row, int64_t kb);

/// Logical [n, kBytes] -> `layout` (Sm90Mma16: bytes moved to weightOffset,
/// then each 32-bit word's bits reordered, Sm90WeightBits.h).
Expected<std::vector<uint8_t>> shuffleWeight(WeightLayout layout, Span<uint8_t> w, int64_t n,
                                             int64_t kBytes);
/// `layout` -> logical [n, kBytes]; the inverse of shuffleWeight.
Expected<std::vector<uint8_t>> unshuffleWeight(WeightLayout layout, Span<uint8_t> w, int64_t n,
                                               int64_t kBytes);

//===----------------------------------------------------------------------===//
// Scales: E8M0 bytes, [rows, kBlocks] logical, padded per layout.
//===----------------------------------------------------------------------===//

/// Padded storage of [rows, kBlocks] scales in `layout`.
StorageShape scaleStorageShape(ScaleLayout layout, int64_t rows, int64_t kBlocks);

/// Byte offset of logical scale (row, kblock), given the padded storage.
int64_t scaleOffset(ScaleLayout layout, StorageShape storage, int64_t row, int64_t kblock);

/// Logical [rows, kBlocks] -> `layout`, padding with kScalePadByte.
Expected<std::vector<uint8_t>> shuffleScales(ScaleLayout layout, Span<uint8_t> s, int64_t rows,
                                             int64_t kBlocks);
/// `layout` -> logical [rows, kBlocks]; drops the padding.
Expected<std::vector<uint8_t>> unshuffleScales(ScaleLayout layout, Span<uint8_t> s, int64_t rows,
                                               int64_t kBlocks);

//===----------------------------------------------------------------------===//
// Sorted MoE activation scales on gfx1250 (seed 002; AITER PR #4607's
// grouped TDM GEMM): what stage 1's fused epilogue writes and stage 2's
// WMMA reads, for R = quant_wmma_rep = stage 2's M tile / 16 per wave
// (AITER's kernels use 1, 4 and 8; ours, whose waves each take all BM rows,
// R = block_m / 16, so also 2).
// Row r = 16 R t + 16 w + l (tile t, WMMA row block w, lane l) goes to
// storage row 16 t + l, where the dwords (4 K-blocks, one 128-K step) of
// the R row blocks sit side by side per K step:
//   byte(r, kb) = 4 ((16 t + l) (K/128) R + (kb/4) R + w) + kb % 4
// R = 1 is row-major. Rows are a multiple of 16 R, K-blocks of 4.
//===----------------------------------------------------------------------===//

/// Whether `rep` is a quant_wmma_rep of the layout (1, 2, 4 or 8).
bool isGfx1250MoeScaleRep(int64_t rep);
/// Byte offset of scale (row, kblock) of [rows, kBlocks] sorted-row scales.
int64_t gfx1250MoeScaleOffset(int64_t rep, int64_t kBlocks, int64_t row, int64_t kblock);
/// Logical [rows, kBlocks] -> the layout of `rep`, same size.
Expected<std::vector<uint8_t>> shuffleGfx1250MoeScales(int64_t rep, Span<uint8_t> s, int64_t rows,
                                                       int64_t kBlocks);

} // namespace mxfp4

#endif // MXFP4_FORMAT_LAYOUT_H
