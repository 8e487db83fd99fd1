//===- CostModel.cpp - mxfp4-bench --model: modelled times, no GPU --------===//
//
// The AMD kernels cannot be timed here, so their expected time comes from
// the tuner's cost model (Tuning/Candidates.h: bytes over the bandwidth
// the resident workgroups reach, padded FLOPs over the MMA rate, waves of
// workgroups over the compute units, a launch) beside what bounds any
// kernel, the bytes it must move over the part's peak HBM bandwidth, and
// what the seed measured. Model figures are estimates, not measurements.
//
//===----------------------------------------------------------------------===//

#include "CostModel.h"

#include "mxfp4/Kernels/TargetInfo.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Tuning/Candidates.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mxfp4::bench {
namespace {

/// Seed 000: FlyDSL's inline-quant A4W4 (AITER PR #4782) on MI355X, median us.
struct SeedFigure {
  int64_t n, k, m;
  double us;
};
constexpr SeedFigure kSeed000[] = {
    {8448, 7168, 1, 23.201},   {8448, 7168, 8, 26.940},   {8448, 7168, 32, 30.240},
    {8448, 7168, 128, 60.121}, {8448, 7168, 512, 89.480}, {8448, 7168, 2048, 237.863},
    {7168, 4224, 1, 15.960},   {7168, 4224, 8, 23.041},   {7168, 4224, 32, 23.520},
    {7168, 4224, 128, 23.280}, {7168, 4224, 512, 50.041}, {7168, 4224, 2048, 107.041},
    {1536, 7168, 1, 18.420},   {1536, 7168, 8, 23.320},   {1536, 7168, 32, 26.181},
    {1536, 7168, 128, 28.300}, {1536, 7168, 512, 29.621}, {1536, 7168, 2048, 65.081},
    {7168, 768, 1, 12.580},    {7168, 768, 8, 11.921},    {7168, 768, 32, 12.120},
    {7168, 768, 128, 12.380},  {7168, 768, 512, 15.520},  {7168, 768, 2048, 31.700},
};

/// Peak HBM bandwidth of the part, bytes/s: MI355X 8 TB/s; gfx1250 and
/// sm_90a as their models assume (the floor is then only indicative).
double peakBytesPerS(Arch arch) {
  switch (arch) {
  case Arch::GFX950:
    return 8.0e12;
  case Arch::GFX1250:
    return 6.4e12;
  case Arch::SM90A:
    return 4.8e12;
  }
  return 1;
}

} // namespace

int runCostModel(Arch arch) {
  llvm::raw_ostream &os = llvm::outs();
  const DeviceModel device = deviceModel(arch);
  const double peak = peakBytesPerS(arch);
  os << "modelled times on " << toString(arch) << " (" << device.computeUnits
     << " compute units; model: " << llvm::format("%.1f", device.bytesPerS / 1e12) << " TB/s, "
     << llvm::format("%.1f", device.flopsPerS / 1e15) << " PFLOP/s; floor: bytes at "
     << llvm::format("%.1f", peak / 1e12) << " TB/s). Estimates, not measurements.\n";
  os << llvm::format("%-12s %5s  %-16s %9s %9s %9s %7s %9s\n", "N x K", "M", "plan", "model us",
                     "no-split", "floor us", "/floor", "seed us");
  for (auto [n, k] : kSeedDenseShapes)
    for (int64_t m : kPresetMs) {
      const GemmWeightFacts w{arch, n, k, true};
      Expected<GemmA4W4Plan> plan = planGemmA4W4(w, m);
      if (!plan) {
        llvm::errs() << "mxfp4-bench: " << plan.takeError().message() << "\n";
        return 1;
      }
      GemmA4W4Options unsplit;
      unsplit.overrides.splitK = 1;
      unsplit.overrides.bm = plan->gemms.front().bm;
      Expected<GemmA4W4Plan> one = planGemmA4W4(w, m, unsplit);
      const double modelUs = estimateUs(*plan, n, k, m, device);
      const double oneUs = one ? estimateUs(*one, n, k, m, device) : 0;
      // Weights and scales once, the activations and the output.
      const double bytes = double(n) * double(k) * (0.5 + 1.0 / 32) + double(m) * double(k) * 2 +
                           double(m) * double(n) * 2;
      const double floorUs = bytes / peak * 1e6;
      std::optional<double> seed;
      if (arch == Arch::GFX950)
        for (const SeedFigure &f : kSeed000)
          if (f.n == n && f.k == k && f.m == m)
            seed = f.us;
      const KernelSpec &g = plan->gemms.front();
      std::string tile = "bm" + std::to_string(g.bm) + " bk" + std::to_string(g.bk) + " ks" +
                         std::to_string(g.splitK);
      if (plan->quantizer)
        tile = "q+" + tile;
      os << llvm::format("%5lld x %-5lld %5lld  %-16s %9.1f %9.1f %9.1f %7.2f ", (long long)n,
                         (long long)k, (long long)m, tile.c_str(), modelUs, oneUs, floorUs,
                         modelUs / floorUs);
      if (seed)
        os << llvm::format("%9.1f", *seed);
      else
        os << llvm::format("%9s", "-");
      os << "\n";
    }
  return 0;
}

} // namespace mxfp4::bench
