//===- TargetInfo.cpp - A GPU target as data ------------------------------===//

#include "mxfp4/Kernels/TargetInfo.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

namespace mxfp4 {

const TargetInfo kTargets[3] = {
    {Arch::GFX950,
     /*name=*/"gfx950",
     /*waveSize=*/64,
     /*wavesPerWorkgroup=*/4,
     {"v_mfma_scale_f32_16x16x128_f8f6f4", 16, 16, 128, /*scaledFp4=*/true},
     /*sharedBytes=*/163840,
     /*registersPerLane=*/512,
     WeightLayout::Gfx950Mfma16,
     ScaleLayout::Gfx950Mfma16,
     /*fp4Conversion=*/"v_cvt_scalef32_pk_fp4_bf16",
     /*defaultBn=*/256,
     /*defaultBk=*/256,
     /*smallKBk=*/128,
     /*minGemmK=*/128,
     /*moeRowAlign=*/256,
     /*maxMoeBlockM=*/64,
     /*moeSplitKWorkgroups=*/0,
     // MI355X.
     /*computeUnits=*/256,
     /*maxSplitK=*/16},
    {Arch::GFX1250,
     /*name=*/"gfx1250",
     /*waveSize=*/32,
     /*wavesPerWorkgroup=*/4,
     {"v_wmma_scale_f32_16x16x128_f8f6f4", 16, 16, 128, /*scaledFp4=*/true},
     /*sharedBytes=*/327680,
     /*registersPerLane=*/256,
     WeightLayout::Gfx950Mfma16,
     ScaleLayout::Gfx1250Wmma,
     /*fp4Conversion=*/"v_cvt_scalef32_pk8_fp4_bf16",
     /*defaultBn=*/256,
     /*defaultBk=*/256,
     /*smallKBk=*/128,
     /*minGemmK=*/128,
     /*moeRowAlign=*/256,
     /*maxMoeBlockM=*/64,
     /*moeSplitKWorkgroups=*/0,
     // Not published for gfx1250: the tuner's model has assumed 64.
     /*computeUnits=*/64,
     /*maxSplitK=*/16},
    {Arch::SM90A,
     /*name=*/"sm_90a",
     /*waveSize=*/32,
     /*wavesPerWorkgroup=*/4,
     {"wgmma.mma_async.m64nNk16.f32.bf16.bf16", 64, 0, 16, /*scaledFp4=*/false},
     /*sharedBytes=*/sm90::kMaxSharedBytes,
     /*registersPerLane=*/255,
     WeightLayout::Sm90Mma16,
     ScaleLayout::Sm90Mma16,
     /*fp4Conversion=*/"",
     /*defaultBn=*/sm90::kTileRows,
     /*defaultBk=*/128,
     /*smallKBk=*/128,
     /*minGemmK=*/256,
     /*moeRowAlign=*/128,
     /*maxMoeBlockM=*/128,
     // Two per SM of the H100 and H200 (132 SMs).
     /*moeSplitKWorkgroups=*/2 * 132,
     // H100 and H200.
     /*computeUnits=*/132,
     /*maxSplitK=*/16},
};

std::string_view toString(Arch arch) {
  return static_cast<size_t>(arch) < std::size(kTargets) ? targetInfo(arch).name : "invalid";
}

std::optional<Arch> parseArch(std::string_view name) {
  for (const TargetInfo &t : kTargets)
    if (name == t.name)
      return t.arch;
  return std::nullopt;
}

} // namespace mxfp4
