//===- TargetInfo.h - A GPU target as data -----------------------*- C++ -*-===//
//
// What the kernels need to know of a target, in one row per target: its
// name, wave (warp) size, the scaled MMA the GEMM is built on, the shared
// memory and registers a workgroup may plan for, the weight and scale
// layouts its MMA reads, the conversion instruction its inline quantizer
// uses, and its default tile. Specs (makeGemmA4W4Spec, verifyKernelSpec),
// the lowerings and the tools read these instead of branching on the
// target; a new target (sm_100a) is a row here, its Arch value and its
// lowering.
//
// Sources: the AMD rows' LDS sizes are LLVM's addressable local memory of
// each chip (AMDGPU getAddressableLocalMemorySize: gfx950 163840, gfx1250
// 327680 bytes); the MMA shapes are the intrinsics' (IntrinsicsAMDGPU.td,
// Conversion/LaneLayout.h); sm_90a's shared memory is the opt-in maximum
// of a Hopper block (Kernels/Sm90Pipeline.h, kMaxSharedBytes).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_TARGETINFO_H
#define MXFP4_KERNELS_TARGETINFO_H

#include "mxfp4/Format/Layout.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace mxfp4 {

/// The GPU targets.
enum class Arch : uint8_t { GFX950, GFX1250, SM90A };

/// The MMA instruction a target's GEMM runs: M x N x K per instruction.
struct TargetMma {
  std::string_view instruction;
  int64_t m, n, k;
  /// Whether it takes E2M1 operands with E8M0 block scales itself (AMD), or
  /// the kernel dequantizes to its BF16 operands first (sm_90a: N is the
  /// token tile BM, 8..256).
  bool scaledFp4;
};

struct TargetInfo {
  Arch arch;
  /// The name users and tools give (--arch=, MXFP4 caches).
  std::string_view name;
  /// Lanes per wave (AMD) or warp (NVIDIA).
  int64_t waveSize;
  /// Waves (warps) of the GEMM's basic workgroup: 4 on AMD, one warpgroup
  /// of 4 warps on sm_90a (more for its larger tiles).
  int64_t wavesPerWorkgroup;
  TargetMma mma;
  /// Shared memory (LDS) one workgroup may use, bytes.
  int64_t sharedBytes;
  /// 32-bit registers one lane may use (gfx950: 256 VGPRs and 256 AGPRs;
  /// gfx1250: the VGPRs the lowering plans for; sm_90a: ptxas' limit).
  int64_t registersPerLane;
  /// The preshuffled layouts its GEMM reads weights and weight scales in.
  WeightLayout weightLayout;
  ScaleLayout scaleLayout;
  /// The instruction that packs BF16 into E2M1 with a scale, as the inline
  /// quantizer uses it; empty where the quantizer computes the codes with
  /// integer and float operations (sm_90a).
  std::string_view fp4Conversion;
  /// The default tile: BN, and BK (the larger when K allows it).
  int64_t defaultBn;
  int64_t defaultBk, smallKBk;
  /// The dense GEMM's shortest K as its kernels read it: weights of a
  /// shorter K are padded to it (gemmWeightK; sm_90a pipelines at least
  /// two 128-K steps).
  int64_t minGemmK;
  /// The MoE GEMMs' row alignment: hidden and inter are padded to a
  /// multiple of it (the N tile, and a multiple of the K step), so the
  /// grouped GEMM needs no column tails (moePaddedRow).
  int64_t moeRowAlign;
  /// The largest row block (block_m) of the MoE GEMMs.
  int64_t maxMoeBlockM;
  /// The workgroups a MoE GEMM should have to keep every SM streaming
  /// weights: with fewer row blocks x N tiles, moe_gemm splits K
  /// (makeMoeGemmSpec). 0 where it takes no split-K.
  int64_t moeSplitKWorkgroups;
  /// Compute units (SMs) dispatch plans the dense GEMM's grid for.
  int64_t computeUnits;
  /// The most K splits of a dense GEMM (workgroups per output tile).
  int64_t maxSplitK;

  /// The default K step for rows of K elements.
  int64_t bkFor(int64_t k) const { return k % defaultBk == 0 ? defaultBk : smallKBk; }
  bool isAmd() const { return mma.scaledFp4; }
};

/// Every target, in Arch order.
extern const TargetInfo kTargets[3];

inline const TargetInfo &targetInfo(Arch arch) { return kTargets[static_cast<int>(arch)]; }
std::string_view toString(Arch arch);
/// The target of a name ("gfx950", "gfx1250", "sm_90a").
std::optional<Arch> parseArch(std::string_view name);

} // namespace mxfp4

#endif // MXFP4_KERNELS_TARGETINFO_H
