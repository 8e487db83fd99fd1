//===- TileDialect.h - The mxtile dialect ------------------------*- C++ -*-===//
#ifndef MXFP4_DIALECT_TILE_TILEDIALECT_H
#define MXFP4_DIALECT_TILE_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dialect.h"

#include "mxfp4/Dialect/Tile/TileDialect.h.inc"

namespace mxfp4::tile {
/// A unit attribute on a kernel: every weight scale its load_scales reads is
/// below 128 (scale <= 1), which lets a lowering fold constants into the
/// scale (sm_90a: one multiply per dequantized pair).
inline constexpr llvm::StringLiteral kWeightScalesBelow128Attr = "mxtile.weight_scales_below_128";
/// On an sm_90a GEMM kernel: its TMA stage count (KernelSpec::stages; i64).
inline constexpr llvm::StringLiteral kStagesAttr = "mxtile.stages";
/// On an sm_90a GEMM kernel below BM 128: two warpgroups (KernelSpec::twoWarpgroups).
inline constexpr llvm::StringLiteral kTwoWarpgroupsAttr = "mxtile.two_warpgroups";
/// On an sm_90a GEMM kernel: a persistent grid (KernelSpec::persistent); the
/// value (i64) is the number of N tiles, tile t being N tile t % that and M
/// tile t / that.
inline constexpr llvm::StringLiteral kPersistentAttr = "mxtile.persistent";
/// On an sm_90a GEMM kernel that quantizes inline: the decode variant
/// (KernelSpec::decode); the value (i64) is its K steps per workgroup.
inline constexpr llvm::StringLiteral kDecodeStepsAttr = "mxtile.decode_steps";
/// The decode variant's warpgroups splitting a workgroup's K steps (> 1;
/// KernelSpec::decodeGroups).
inline constexpr llvm::StringLiteral kDecodeGroupsAttr = "mxtile.decode_groups";
/// On an sm_90a GEMM kernel: stream-K (KernelSpec::streamK); the value
/// (i64) is the number of N tiles, as for kPersistentAttr. Its store
/// reduces with splits = 0: the partial sums are the kernel's stream-K
/// segments of the tile.
inline constexpr llvm::StringLiteral kStreamKAttr = "mxtile.stream_k";
/// On an sm_90a GEMM kernel that quantizes inline: the warp-split decode
/// variant (KernelSpec::warpSplitK); the value (i64) is its warps, which
/// split the K loop among themselves (mma.sync, Sm90WarpSplitK.cpp).
inline constexpr llvm::StringLiteral kWarpSplitKAttr = "mxtile.warp_split_k";
/// The streamed activation image (KernelSpec::imageStream); the flags are
/// the kernel's buffer argument right after M. On qdq_mxfp4 the value (i64)
/// is the GEMM's split count, whose K order its pieces follow; on
/// gemm_qdqa4w4 the quantizer's rows per piece (Sm90ImageStream.cpp).
inline constexpr llvm::StringLiteral kImageStreamAttr = "mxtile.image_stream";
} // namespace mxfp4::tile

#endif // MXFP4_DIALECT_TILE_TILEDIALECT_H
