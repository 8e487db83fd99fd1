//===- GemmA4W4LaunchTest.cpp - Eager calls reuse their resolved launches -===//
//
// An eager gemmA4W4 call that finds the launches resolved for its M (the
// plan, its kernels and their geometry; PreparedWeightImpl.h) launches
// them without planning or asking the JIT again. On a fake host device
// (TestUtil/FakeDevice.h, launches recorded), these tests pin that the
// reused launches are exactly what a fresh plan gives for every M, that
// the rounding, the entry point, overrides and dumps keep their own
// launches, and that calls past the limit of remembered Ms still run.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/FakeDevice.h"
#include "mxfp4/Format/Layout.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/PreparedWeightImpl.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace mxfp4;
using test::FakeDevice;

namespace {

// The kernels this file gets are compiled into memory only.
const bool kMemoryOnly = [] { return ::setenv("MXFP4_DISABLE_CACHE", "1", 1) == 0; }();

/// What one call launched: each kernel's symbol and geometry.
using Launches = std::vector<std::string>;

std::string describe(const FakeDevice::Launch &l) {
  const LaunchGeometry &g = l.geometry;
  return l.symbol + " grid " + std::to_string(g.grid[0]) + "x" + std::to_string(g.grid[1]) + "x" +
         std::to_string(g.grid[2]) + " block " + std::to_string(g.block[0]) + " smem " +
         std::to_string(g.sharedBytes) + " persistent " + std::to_string(g.persistentPerSm) +
         (g.programmaticDependent ? " pdl" : "");
}

class GemmLaunch : public ::testing::TestWithParam<Arch> {
protected:
  void SetUp() override {
    ASSERT_TRUE(kMemoryOnly);
    dev.launchSucceeds = true;
    std::vector<uint8_t> codes(kN * kK / 2, 0x21), scales(kN * kK / 32, 120);
    Expected<std::unique_ptr<PreparedWeight>> pw =
        prepareGemmA4W4Weight(dev, codes, scales, kN, kK);
    ASSERT_TRUE(bool(pw)) << pw.takeError().message();
    w = std::move(*pw);
    a = *dev.alloc(size_t(kMaxM) * kK * 2);
    out = *dev.alloc(size_t(kMaxM) * kN * 2);
  }
  void TearDown() override {
    dev.free(a);
    dev.free(out);
    w.reset();
    EXPECT_EQ(dev.liveAllocations(), 0u) << "the weights or their scratch leaked";
    EXPECT_EQ(dev.badFrees, 0u);
  }

  /// Runs one call and returns what it launched.
  Launches call(int64_t m, const GemmA4W4Options &options = {}) {
    const size_t before = dev.launches.size();
    Error e = gemmA4W4(dev, nullptr, a, m, *w, out, options);
    EXPECT_FALSE(e) << "M = " << m << ": " << e.message();
    Launches got;
    for (size_t i = before; i < dev.launches.size(); ++i)
      got.push_back(describe(dev.launches[i]));
    return got;
  }
  /// The same call planned afresh: ignoreTunedCsv keeps it off the
  /// remembered launches and changes nothing else here (no tuned row has
  /// this shape).
  Launches fresh(int64_t m, GemmA4W4Options options = {}) {
    options.overrides.ignoreTunedCsv = true;
    return call(m, options);
  }

  static constexpr int64_t kN = 256, kK = 512, kMaxM = 8192;
  FakeDevice dev{GetParam(), 132};
  std::unique_ptr<PreparedWeight> w;
  void *a = nullptr, *out = nullptr;
};

TEST_P(GemmLaunch, RemembersWhatAFreshPlanLaunchesForEveryM) {
  // Each M twice, out of order, so a launch kept for one M but used for
  // another would show.
  const int64_t ms[] = {1, 16, 3, 64, 17, 128, 100, 256, 513, 2048, 2047, 4096, 1};
  for (int64_t m : ms) {
    const Launches planned = fresh(m);
    ASSERT_FALSE(planned.empty()) << "M = " << m;
    EXPECT_EQ(call(m), planned) << "M = " << m << ", first call";
    EXPECT_EQ(call(m), planned) << "M = " << m << ", remembered";
  }
}

TEST_P(GemmLaunch, RememberedCallsSkipTheJit) {
  call(48);
  const Jit::Stats &s = Jit::global().stats();
  const uint64_t hits = s.memoryHits, compiles = s.compiles;
  for (int i = 0; i < 10; ++i)
    call(48);
  EXPECT_EQ(s.memoryHits, hits) << "a remembered call asked the JIT";
  EXPECT_EQ(s.compiles, compiles);
  fresh(48); // a planned call does ask it
  EXPECT_GT(s.memoryHits, hits);
}

TEST_P(GemmLaunch, RoundingOverridesAndDumpsKeepTheirOwnLaunches) {
  GemmA4W4Options even;
  even.rounding = ScaleRounding::Even;
  const Launches up = call(32), evenLaunches = call(32, even);
  ASSERT_FALSE(evenLaunches.empty());
  EXPECT_NE(up, evenLaunches) << "the rounding is part of the kernels";
  EXPECT_EQ(call(32, even), evenLaunches);
  EXPECT_EQ(call(32), up);
  // An override plans every call, and the remembered launches stay.
  GemmA4W4Options forced;
  forced.overrides.bm = 64;
  const Launches overridden = call(32, forced);
  EXPECT_NE(overridden, up);
  EXPECT_EQ(call(32, forced), overridden);
  EXPECT_EQ(call(32), up);
  if (GetParam() != Arch::SM90A)
    return; // the quantization dump is sm_90a's
  GemmA4W4Options dump;
  dump.dumpCodes = *dev.alloc(32 * kK / 2);
  dump.dumpScales = *dev.alloc(32 * kK / 32);
  const Launches dumped = call(32, dump);
  EXPECT_NE(dumped, up);
  EXPECT_EQ(call(32), up);
  dev.free(dump.dumpCodes);
  dev.free(dump.dumpScales);
}

TEST_P(GemmLaunch, CallsPastTheRememberedLimitStillRun) {
  // Distinct Ms beyond the limit: each still launches what a fresh plan
  // does (they are planned every time instead).
  const int64_t first = 1, last = int64_t(PreparedWeight::Impl::kMaxResolved) + 40;
  ASSERT_LE(last, kMaxM);
  for (int64_t m = first; m <= last; ++m)
    call(m);
  for (int64_t m : {int64_t(1), last - 41, last - 1, last})
    EXPECT_EQ(call(m), fresh(m)) << "M = " << m;
}

TEST_P(GemmLaunch, ThreadsShareTheLaunchesOfOneWeight) {
  std::vector<std::thread> threads;
  std::vector<std::string> errors(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int64_t m = 1 + (t * 37 + i * 11) % 300;
        if (Error e = gemmA4W4(dev, nullptr, a, m, *w, out))
          errors[t] = e.message();
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (const std::string &e : errors)
    EXPECT_EQ(e, "");
  for (int64_t m : {1, 150, 300})
    EXPECT_EQ(call(m), fresh(m)) << "M = " << m;
}

// Any N and K % 32: the prepared weights are the caller's padded with zero
// codes (scale 0x7F) to whole tiles and then shuffled, the calls launch
// grids of those tiles, and the padding scratch is not leaked.
TEST_P(GemmLaunch, PadsRaggedWeightsToWholeTiles) {
  const Arch arch = GetParam();
  const int64_t n = 200, k = 288;
  const int64_t rows = gemmWeightRows(arch, n), kw = gemmWeightK(arch, k);
  ASSERT_GT(rows, n);
  ASSERT_GT(kw, k);
  std::vector<uint8_t> codes(size_t(n * k / 2)), scales(size_t(n * k / 32));
  for (size_t i = 0; i < codes.size(); ++i)
    codes[i] = uint8_t(i * 37 + 11);
  for (size_t i = 0; i < scales.size(); ++i)
    scales[i] = uint8_t(100 + i % 40);
  Expected<std::unique_ptr<PreparedWeight>> pw = prepareGemmA4W4Weight(dev, codes, scales, n, k);
  ASSERT_TRUE(bool(pw)) << pw.takeError().message();
  EXPECT_EQ((*pw)->n(), n);
  EXPECT_EQ((*pw)->k(), k);
  std::vector<uint8_t> paddedCodes(size_t(rows * kw / 2), 0),
      paddedScales(size_t(rows * kw / 32), 0x7F);
  for (int64_t r = 0; r < n; ++r) {
    std::copy_n(&codes[size_t(r * k / 2)], k / 2, &paddedCodes[size_t(r * kw / 2)]);
    std::copy_n(&scales[size_t(r * k / 32)], k / 32, &paddedScales[size_t(r * kw / 32)]);
  }
  const TargetInfo &t = targetInfo(arch);
  Expected<std::vector<uint8_t>> wantCodes =
      shuffleWeight(t.weightLayout, paddedCodes, rows, kw / 2);
  Expected<std::vector<uint8_t>> wantScales =
      shuffleScales(t.scaleLayout, paddedScales, rows, kw / 32);
  ASSERT_TRUE(wantCodes && wantScales);
  const PreparedWeight::Impl &impl = (*pw)->impl();
  EXPECT_EQ(0, std::memcmp(impl.data, wantCodes->data(), wantCodes->size()));
  EXPECT_EQ(0, std::memcmp(impl.scales, wantScales->data(), wantScales->size()));
  for (int64_t m : {1, 77}) {
    const size_t before = dev.launches.size();
    ASSERT_FALSE(gemmA4W4(dev, nullptr, a, m, **pw, out)) << "M = " << m;
    ASSERT_GT(dev.launches.size(), before);
    const FakeDevice::Launch &gemm = dev.launches.back();
    EXPECT_NE(gemm.symbol.find("_n200_k288_"), std::string::npos) << gemm.symbol;
    EXPECT_EQ(int64_t(gemm.geometry.grid[0]) * parseKernelName(gemm.symbol)->bn, rows)
        << describe(gemm);
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, GemmLaunch, ::testing::Values(Arch::SM90A, Arch::GFX950),
                         [](const auto &info) { return std::string(toString(info.param)); });

} // namespace
