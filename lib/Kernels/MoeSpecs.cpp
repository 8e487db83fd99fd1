//===- MoeSpecs.cpp - The kernels of a MoE layer --------------------------===//

#include "mxfp4/Kernels/MoeSpecs.h"

#include <algorithm>

namespace mxfp4 {

int64_t moeExpectedBlocks(int64_t tokens, int64_t topk, int64_t experts, int64_t blockM) {
  const int64_t entries = tokens * topk, active = std::min(entries, experts);
  if (active <= 0 || blockM <= 0)
    return 0;
  const int64_t perExpert = (entries + active - 1) / active;
  return active * ((perExpert + blockM - 1) / blockM);
}

int64_t moeScaleRep(Arch arch, int64_t blockM) {
  return arch == Arch::GFX1250 && isGfx1250MoeScaleRep(blockM / 16) && blockM % 16 == 0
             ? blockM / 16
             : 1;
}

/// The K splits that bring `tiles` workgroups up to `wanted`, each split
/// at least two of the `steps` K steps, at most 8.
static int64_t moeSplitK(int64_t tiles, int64_t wanted, int64_t steps) {
  constexpr int64_t kMaxSplits = 8, kMinStepsPerSplit = 2;
  int64_t splits = 1;
  while (tiles * splits < wanted && splits < kMaxSplits &&
         steps / (splits + 1) >= kMinStepsPerSplit)
    ++splits;
  return splits;
}

Expected<KernelSpec> makeMoeGemmSpec(Arch arch, int64_t n, int64_t k, int64_t blockM,
                                     int64_t blocks, bool scalesBelow128) {
  KernelSpec s;
  s.op = OpKind::MoeGemm;
  s.arch = arch;
  s.n = n;
  s.k = k;
  s.bm = blockM;
  const TargetInfo &target = targetInfo(arch);
  s.bn = target.defaultBn;
  s.bk = target.bkFor(k);
  if (s.bm * s.bk > 128 * 128 || (s.bk > 0 && k / s.bk < 2))
    s.bk = 128;
  s.weightLayout = target.weightLayout;
  s.scaleLayout = target.scaleLayout;
  s.moeScaleRep = moeScaleRep(arch, blockM);
  s.foldedScales = scalesBelow128 && !target.mma.scaledFp4;
  // Split-K sums partial tiles through a global workspace; BM 128's splits
  // would be a cluster's, which the grouped GEMM does not take.
  if (target.moeSplitKWorkgroups > 0 && blocks > 0 && s.bm < 128)
    s.splitK = moeSplitK(n / s.bn * blocks, target.moeSplitKWorkgroups, k / s.bk);
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeStage1FusedSpec(Arch arch, const MoeKernelShape &s, bool debug) {
  const int64_t hp = moePaddedRow(arch, s.hidden), ip = moePaddedRow(arch, s.inter);
  const int64_t blocks = s.tokens ? moeExpectedBlocks(s.tokens, s.topk, s.experts, s.blockM) : 0;
  Expected<KernelSpec> spec = makeMoeGemmSpec(arch, 2 * ip, hp, s.blockM, blocks, s.scalesBelow128);
  if (!spec)
    return spec.takeError();
  spec->epilogue = debug ? Epilogue::ActMxDebug : Epilogue::ActMx;
  spec->activation = s.activation;
  spec->rounding = s.rounding;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  return spec;
}

Expected<KernelSpec> makeMoeStage2AtomicSpec(Arch arch, const MoeKernelShape &s) {
  const int64_t hp = moePaddedRow(arch, s.hidden), ip = moePaddedRow(arch, s.inter);
  const int64_t blocks = s.tokens ? moeExpectedBlocks(s.tokens, s.topk, s.experts, s.blockM) : 0;
  Expected<KernelSpec> spec = makeMoeGemmSpec(arch, hp, ip, s.blockM, blocks, s.scalesBelow128);
  if (!spec)
    return spec.takeError();
  spec->epilogue = Epilogue::Scatter;
  if (Error e = verifyKernelSpec(*spec))
    return e;
  return spec;
}

Expected<std::vector<KernelSpec>> makeMoeStageSpecs(Arch arch, int stage, const MoeKernelShape &s) {
  if (stage != 1 && stage != 2)
    return makeError("makeMoeStageSpecs: the stage is 1 or 2, got ", stage);
  const int64_t hp = moePaddedRow(arch, s.hidden), ip = moePaddedRow(arch, s.inter);
  std::vector<Expected<KernelSpec>> made;
  const int64_t blocks = s.tokens ? moeExpectedBlocks(s.tokens, s.topk, s.experts, s.blockM) : 0;
  if (stage == 1) {
    made.push_back(makeMoeQuantSpec(arch, s.hidden, s.rounding, moeScaleRep(arch, s.blockM)));
    Expected<KernelSpec> fused = makeMoeStage1FusedSpec(arch, s);
    if (fused && s.fuseActivation) {
      made.push_back(*fused);
    } else {
      made.push_back(makeMoeGemmSpec(arch, 2 * ip, hp, s.blockM, blocks, s.scalesBelow128));
      made.push_back(makeMoeActQuantSpec(arch, s.inter, s.activation, s.rounding,
                                         moeScaleRep(arch, s.blockM)));
    }
  } else if (Expected<KernelSpec> atomic = makeMoeStage2AtomicSpec(arch, s);
             atomic && s.atomicStage2) {
    made.push_back(*atomic);
    made.push_back(makeMoeCastSpec(arch, s.hidden));
  } else {
    made.push_back(makeMoeGemmSpec(arch, hp, ip, s.blockM, blocks, s.scalesBelow128));
    made.push_back(makeMoeReduceSpec(arch, s.hidden, s.topk));
  }
  std::vector<KernelSpec> specs;
  for (Expected<KernelSpec> &spec : made) {
    if (!spec)
      return spec.takeError();
    specs.push_back(*spec);
  }
  return specs;
}

} // namespace mxfp4
