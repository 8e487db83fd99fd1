//===- MoeSpecs.cpp - The kernels of a MoE layer --------------------------===//

#include "mxfp4/Kernels/MoeSpecs.h"

namespace mxfp4 {

Expected<KernelSpec> makeMoeGemmSpec(Arch arch, int64_t n, int64_t k, int64_t blockM) {
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
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<std::vector<KernelSpec>> makeMoeStageSpecs(Arch arch, int stage, const MoeKernelShape &s) {
  if (stage != 1 && stage != 2)
    return makeError("makeMoeStageSpecs: the stage is 1 or 2, got ", stage);
  const int64_t hp = moePaddedRow(arch, s.hidden), ip = moePaddedRow(arch, s.inter);
  std::vector<Expected<KernelSpec>> made;
  if (stage == 1) {
    made.push_back(makeMoeQuantSpec(arch, s.hidden, s.rounding));
    made.push_back(makeMoeGemmSpec(arch, 2 * ip, hp, s.blockM));
    made.push_back(makeMoeActQuantSpec(arch, s.inter, s.activation, s.rounding));
  } else {
    made.push_back(makeMoeGemmSpec(arch, hp, ip, s.blockM));
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
