//===- Sm90Geometry.cpp - What an sm_90a kernel occupies ------------------===//

#include "mxfp4/Kernels/Sm90Geometry.h"

namespace mxfp4 {

int64_t sm90StepsPerWorkgroup(const KernelSpec &spec) {
  return gemmWeightK(spec.arch, spec.k) / spec.bk / spec.splitK;
}

int64_t sm90WorkgroupThreads(const KernelSpec &spec) {
  if (spec.warpSplitK)
    return 32 * spec.warpSplitK;
  return 128 * sm90::gemmWarpgroups(spec.bm, spec.twoWarpgroups, spec.bn) *
         (spec.decode ? spec.decodeGroups : 1);
}

sm90::SharedLayout sm90SharedLayout(const KernelSpec &s) {
  if (s.warpSplitK)
    return sm90::warpSplitKSharedLayout(s.bn, s.warpSplitK);
  if (s.decode)
    return sm90::decodeSharedLayout(s.bm, s.bk, sm90StepsPerWorkgroup(s), s.bn);
  return sm90::sharedLayout(s.bm, s.bk, s.op == OpKind::GemmQdqA4W4, s.stages, s.persistent, s.bn);
}

int64_t streamKIterations(const KernelSpec &spec, int64_t m) {
  return (m + spec.bm - 1) / spec.bm * (spec.n / spec.bn) * (spec.k / spec.bk);
}

int64_t streamKWorkspaceBytes(const KernelSpec &spec, int64_t workgroups) {
  return 2 * workgroups * spec.bm * spec.bn * 4;
}

} // namespace mxfp4
