//===- Candidates.cpp - The schedules mxfp4-tune measures -----------------===//
//
// The search space per target, the cost model that orders it, and the
// pruning to a few candidates per family (Tuning/Candidates.h).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Tuning/Candidates.h"

#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Kernels/TargetInfo.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace mxfp4 {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t nextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p *= 2;
  return p;
}

/// Every override combination of `arch`'s schedule space worth planning
/// for M rows: tiles above twice M only pad, so they are left out.
std::vector<experimental::GemmA4W4Overrides> searchSpace(Arch arch, int64_t k, int64_t m) {
  using O = experimental::GemmA4W4Overrides;
  std::vector<O> out;
  const TargetInfo &t = targetInfo(arch);
  const int64_t cap = std::max<int64_t>(16, nextPow2(m));
  if (t.isAmd()) {
    // gemm_a4w4 alone: BM 16 or 64, BN 256, both K steps K allows.
    for (int64_t bm : {16, 64})
      for (int64_t bk : {t.defaultBk, t.smallKBk}) {
        if (bm > cap || k % bk != 0)
          continue;
        O o;
        o.bm = bm;
        o.bk = bk;
        out.push_back(o);
      }
    return out;
  }
  // sm_90a, quantizing inline: BM, split-K, BN, the decode variant and
  // its warpgroups.
  for (int64_t bm : {8, 16, 32, 64, 128})
    for (int64_t splitK : {1, 2, 3, 4, 6, 7, 8, 12, 14, 16})
      for (int64_t bn : {128, 64})
        for (int decode = 0; decode < 2; ++decode)
          for (int64_t groups : {1, 2, 4}) {
            if (bm > cap || (!decode && groups > 1) || (decode && bm >= 128))
              continue;
            O o;
            o.preQuantize = false;
            o.bm = bm;
            o.splitK = splitK;
            o.bn = bn;
            o.decode = decode != 0;
            o.decodeGroups = groups;
            o.warpSplitK = 0;
            o.stages = 0;
            out.push_back(o);
          }
  // The warp-split variant for M <= 8.
  if (m <= 8)
    for (int64_t warps : {2, 4, 6, 8})
      for (int64_t bn : {16, 32}) {
        O o;
        o.preQuantize = false;
        o.warpSplitK = warps;
        o.bn = bn;
        out.push_back(o);
      }
  // On the activation image: BM, split-K, BN, warpgroups, the grid's
  // kind (plain, persistent, stream-K, streamed image) and the stages.
  enum Grid { Plain, Persistent, StreamK, Streamed2, Streamed4 };
  for (int64_t bm : {16, 32, 64, 128, 256})
    for (int64_t splitK : {1, 2, 4, 6, 8})
      for (int64_t bn : {128, 64, 192})
        for (int wg2 = 0; wg2 < 2; ++wg2)
          for (Grid grid : {Plain, Persistent, StreamK, Streamed2, Streamed4})
            for (int64_t stages : {0, 3, 4, 5}) {
              if (bm > std::max<int64_t>(cap, 128) || (wg2 && bm >= 128) ||
                  (grid != Plain && splitK > 1 && grid != Streamed2 && grid != Streamed4) ||
                  ((grid == StreamK || grid == Streamed2 || grid == Streamed4) && bm < 128) ||
                  (grid >= Streamed2 && bm != 128))
                continue;
              O o;
              o.preQuantize = true;
              o.bm = bm;
              o.splitK = splitK;
              o.bn = bn;
              o.twoWarpgroups = wg2 != 0;
              o.persistent = grid == Persistent;
              o.streamK = grid == StreamK;
              o.imageStream = grid == Streamed2 ? 2 : grid == Streamed4 ? 4 : 0;
              o.stages = stages;
              o.splitM = 0;
              out.push_back(o);
            }
  return out;
}

std::string familyOf(const GemmA4W4Plan &p) {
  const KernelSpec &g = p.gemms.front();
  switch (p.path) {
  case GemmA4W4Plan::Path::Inline:
    return g.warpSplitK ? "warp-split" : g.decode ? "decode" : "inline";
  case GemmA4W4Plan::Path::MxActivations:
    return "prequant";
  case GemmA4W4Plan::Path::StreamedImage:
    return "streamed";
  case GemmA4W4Plan::Path::Image:
    break;
  }
  return p.splitM ? "split-m" : g.persistent ? "persistent" : g.streamK ? "stream-k" : "image";
}

/// One kernel of a plan over `rows` rows, us.
double kernelUs(const KernelSpec &s, int64_t rows, int64_t n, int64_t k, const DeviceModel &d) {
  const double launchUs = 2.0;
  const double cu = double(std::max<int64_t>(d.computeUnits, 1));
  if (isQuantizer(s.op)) {
    const double out = s.op == OpKind::QdqMx ? 2.0 : 0.5 + 1.0 / 32;
    const double bytes = double(rows) * double(k) * (2.0 + out);
    const double wgs = double(ceilDiv(rows, s.bm));
    return bytes / (d.bytesPerS * std::min(1.0, wgs / cu)) * 1e6 + launchUs;
  }
  const int64_t tilesM = ceilDiv(rows, s.bm), tilesN = ceilDiv(n, s.bn);
  const double wgs = double(tilesM * tilesN * s.splitK);
  // Small tiles fit two workgroups a SM.
  const double slots = cu * (s.bm <= 32 ? 2.0 : 1.0);
  const double waves = std::ceil(wgs / slots);
  const double fill =
      s.persistent || s.streamK ? std::min(1.0, wgs / slots) : wgs / (waves * slots);
  const double weightBytes = double(n) * double(k) * (0.5 + 1.0 / 32);
  const double act = s.op == OpKind::GemmMxA4W4 ? 0.5 + 1.0 / 32 : 2.0;
  // Weights come from HBM once and mostly from the L2 for later M tiles.
  const double weightReads = 1.0 + 0.25 * double(tilesM - 1);
  double bytes = weightBytes * weightReads + double(rows) * double(k) * act * double(tilesN) / 8.0 +
                 double(rows) * double(n) * 2.0;
  if (s.splitK > 1)
    bytes += double(tilesM * s.bm) * double(n) * 4.0 * 2.0 * double(s.splitK);
  const double flops = 2.0 * double(tilesM * s.bm) * double(n) * double(k);
  const double memUs = bytes / (d.bytesPerS * std::min(1.0, wgs / cu)) * 1e6;
  const double mmaUs = flops / (d.flopsPerS * fill) * 1e6;
  return std::max(memUs, mmaUs) + launchUs;
}

} // namespace

DeviceModel deviceModel(Arch arch, int64_t computeUnits) {
  // Achievable rather than peak rates (the kernels dequantize in the K loop
  // on sm_90a): they only order candidates.
  const int64_t cus = computeUnits ? computeUnits : targetInfo(arch).computeUnits;
  switch (arch) {
  case Arch::SM90A:
    return {cus, 3.8e12, 4.0e14};
  case Arch::GFX950:
    return {cus, 6.4e12, 4.6e15};
  case Arch::GFX1250:
    return {cus, 3.2e12, 1.2e15};
  }
  return {};
}

double estimateUs(const GemmA4W4Plan &plan, int64_t n, int64_t k, int64_t m,
                  const DeviceModel &device) {
  double us = 0;
  if (plan.quantizer)
    us += kernelUs(*plan.quantizer, m, n, k, device);
  if (plan.gemms.size() == 2) {
    us += kernelUs(plan.gemms[0], plan.splitM, n, k, device);
    us += kernelUs(plan.gemms[1], m - plan.splitM, n, k, device);
  } else {
    us += kernelUs(plan.gemms[0], m, n, k, device);
  }
  // The streamed image overlaps its quantizer with the GEMM.
  if (plan.path == GemmA4W4Plan::Path::StreamedImage && plan.quantizer)
    us -= 0.5 * kernelUs(*plan.quantizer, m, n, k, device);
  return us;
}

std::string DenseCandidate::id() const {
  TunedRow row = tunedRowFromPlan(plan, {}, 1);
  return strCat(row.kernelNames(), "/", plan.splitM, "/", plan.streamWorkgroupsPerSm);
}

/// The distinct plans of the space, by id.
static std::map<std::string, DenseCandidate> plannedSpace(Arch arch, int64_t n, int64_t k,
                                                          int64_t m) {
  std::map<std::string, DenseCandidate> plans;
  const GemmWeightFacts w{arch, n, k, true};
  for (const experimental::GemmA4W4Overrides &o : searchSpace(arch, k, m)) {
    GemmA4W4Options options;
    options.overrides = o;
    Expected<GemmA4W4Plan> plan = planGemmA4W4(nullptr, w, m, options);
    if (!plan) {
      (void)plan.takeError(); // not a schedule this point runs
      continue;
    }
    DenseCandidate c;
    c.overrides = o;
    c.plan = *plan;
    c.family = familyOf(c.plan);
    plans.emplace(c.id(), std::move(c));
  }
  return plans;
}

size_t denseSearchSpaceSize(Arch arch, int64_t n, int64_t k, int64_t m) {
  return plannedSpace(arch, n, k, m).size();
}

Expected<std::vector<DenseCandidate>> denseCandidates(Arch arch, int64_t n, int64_t k, int64_t m,
                                                      const DeviceModel &device,
                                                      const CandidateLimits &limits) {
  DenseCandidate def;
  def.overrides.ignoreTunedCsv = true;
  GemmA4W4Options options;
  options.overrides = def.overrides;
  Expected<GemmA4W4Plan> plan = planGemmA4W4(nullptr, {arch, n, k, true}, m, options);
  if (!plan)
    return plan.takeError();
  def.plan = *plan;
  def.family = familyOf(def.plan);
  def.isDefault = true;
  def.estimateUs = estimateUs(def.plan, n, k, m, device);

  std::vector<DenseCandidate> all;
  for (auto &[id, c] : plannedSpace(arch, n, k, m))
    if (id != def.id()) {
      c.estimateUs = estimateUs(c.plan, n, k, m, device);
      all.push_back(std::move(c));
    }
  std::stable_sort(all.begin(), all.end(), [](const DenseCandidate &a, const DenseCandidate &b) {
    return a.estimateUs < b.estimateUs;
  });
  std::vector<DenseCandidate> out{def};
  std::map<std::string, size_t> perFamily;
  std::vector<bool> taken(all.size(), false);
  for (size_t i = 0; i < all.size() && out.size() < limits.keep + 1; ++i)
    if (perFamily[all[i].family]++ < limits.perFamily) {
      out.push_back(all[i]);
      taken[i] = true;
    }
  for (size_t i = 0; i < all.size() && out.size() < limits.keep + 1; ++i)
    if (!taken[i])
      out.push_back(all[i]);
  return out;
}

} // namespace mxfp4
