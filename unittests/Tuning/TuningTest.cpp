//===- TuningTest.cpp - mxfp4-tune's decision rule and search space -------===//
//
// The A/B rule on synthetic timings (a real gain, noise, ties, one lucky
// round, outliers), and the candidates of a point: the default first,
// every one a verified plan, each once, the families the point allows.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Expected.h"
#include "mxfp4/Tuning/AbDecision.h"
#include "mxfp4/Tuning/Candidates.h"

#include "gtest/gtest.h"

#include <random>
#include <set>

using namespace mxfp4;

namespace {

/// `rounds` rounds of `n` samples a side around the given medians, with
/// uniform jitter of +-`jitter` us.
std::vector<AbRound> synthetic(double incumbent, double candidate, double jitter, int rounds = 3,
                               int n = 10, uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  std::vector<AbRound> out(static_cast<size_t>(rounds));
  for (AbRound &r : out)
    for (int i = 0; i < n; ++i) {
      r.incumbent.push_back(incumbent + u(rng));
      r.candidate.push_back(candidate + u(rng));
    }
  return out;
}

TEST(AbDecision, ARealGainReplaces) {
  AbVerdict v = decideAb(synthetic(20.0, 18.0, 0.2));
  EXPECT_TRUE(v.replace) << v.why;
  EXPECT_GT(v.minGainUs, 1.5);
  EXPECT_LT(v.maxNoiseUs, 0.2);
  EXPECT_NEAR(v.incumbentUs, 20.0, 0.2);
  EXPECT_NEAR(v.candidateUs, 18.0, 0.2);
}

TEST(AbDecision, NoiseTiesAndSlowerKeepTheIncumbent) {
  EXPECT_FALSE(decideAb(synthetic(20.0, 20.0, 0.2)).replace);         // a tie
  EXPECT_FALSE(decideAb(synthetic(20.0, 19.8, 2.0)).replace);         // gain inside the spread
  EXPECT_FALSE(decideAb(synthetic(20.0, 21.0, 0.1)).replace);         // slower
  EXPECT_FALSE(decideAb(synthetic(100.0, 99.5, 0.05)).replace);       // below 1 %
  EXPECT_TRUE(decideAb(synthetic(100.0, 99.5, 0.05), 0.001).replace); // unless asked
}

TEST(AbDecision, EveryRoundMustWin) {
  std::vector<AbRound> rounds = synthetic(20.0, 18.0, 0.1);
  // The second round: the candidate no faster (another process, clocks).
  rounds[1] = synthetic(20.0, 20.1, 0.1, 1, 10, 7)[0];
  AbVerdict v = decideAb(rounds);
  EXPECT_FALSE(v.replace);
  EXPECT_NE(v.why.find("round 2"), std::string::npos) << v.why;
}

TEST(AbDecision, OneOutlierDoesNotDecide) {
  // A single slow incumbent sample in each round moves neither median nor IQR.
  std::vector<AbRound> rounds = synthetic(20.0, 20.0, 0.1);
  for (AbRound &r : rounds)
    r.incumbent[3] = 400.0;
  EXPECT_FALSE(decideAb(rounds).replace);
  std::vector<AbRound> gain = synthetic(20.0, 18.0, 0.1);
  for (AbRound &r : gain)
    r.candidate[5] = 400.0;
  EXPECT_TRUE(decideAb(gain).replace);
}

TEST(AbDecision, TooLittleEvidenceKeepsTheIncumbent) {
  EXPECT_FALSE(decideAb(synthetic(20.0, 10.0, 0.1, 1)).replace);
  EXPECT_FALSE(decideAb(synthetic(20.0, 10.0, 0.1, 3, 2)).replace);
  EXPECT_FALSE(decideAb({}).replace);
  EXPECT_EQ(median({3.0, 1.0, 2.0, 10.0}), 2.5);
  EXPECT_EQ(median({}), 0.0);
}

TEST(Candidates, DefaultFirstThenVerifiedDistinctPlans) {
  for (Arch arch : {Arch::SM90A, Arch::GFX950, Arch::GFX1250})
    for (int64_t m : {1, 8, 32, 128, 512, 2048}) {
      SCOPED_TRACE(std::string(toString(arch)) + " m=" + std::to_string(m));
      CandidateLimits limits;
      limits.keep = 10;
      Expected<std::vector<DenseCandidate>> cs =
          denseCandidates(arch, 8448, 7168, m, deviceModel(arch), limits);
      ASSERT_OK(cs);
      ASSERT_FALSE(cs->empty());
      EXPECT_TRUE(cs->front().isDefault);
      EXPECT_LE(cs->size(), limits.keep + 1);
      Expected<GemmA4W4Plan> table = planGemmA4W4(nullptr, {arch, 8448, 7168, true}, m);
      ASSERT_OK(table);
      EXPECT_EQ(TunedRow{tunedRowFromPlan(*table, {}, m)}.kernelNames(),
                tunedRowFromPlan(cs->front().plan, {}, m).kernelNames());
      std::set<std::string> ids;
      for (const DenseCandidate &c : *cs) {
        EXPECT_TRUE(ids.insert(c.id()).second) << c.id();
        EXPECT_GT(c.estimateUs, 0);
        for (const KernelSpec &s : c.plan.kernels())
          EXPECT_FALSE(verifyKernelSpec(s)) << s.name();
        // The candidate is what its overrides make dispatch run.
        GemmA4W4Options o;
        o.overrides = c.overrides;
        Expected<GemmA4W4Plan> again = planGemmA4W4(nullptr, {arch, 8448, 7168, true}, m, o);
        ASSERT_OK(again);
        EXPECT_EQ(tunedRowFromPlan(*again, {}, m).kernelNames(),
                  tunedRowFromPlan(c.plan, {}, m).kernelNames());
      }
      if (arch != Arch::SM90A)
        EXPECT_LE(cs->size(), 4u); // BM 16 / 64 x BK 128 / 256
    }
}

TEST(Candidates, FamiliesFollowM) {
  auto families = [](int64_t m) {
    Expected<std::vector<DenseCandidate>> cs =
        denseCandidates(Arch::SM90A, 8448, 7168, m, deviceModel(Arch::SM90A));
    std::set<std::string> f;
    if (cs)
      for (const DenseCandidate &c : *cs)
        f.insert(c.family);
    return f;
  };
  std::set<std::string> decode = families(1);
  EXPECT_TRUE(decode.count("decode"));
  EXPECT_TRUE(decode.count("warp-split"));
  std::set<std::string> large = families(2048);
  EXPECT_TRUE(large.count("image"));
  EXPECT_TRUE(large.count("persistent"));
  EXPECT_TRUE(large.count("stream-k"));
  EXPECT_FALSE(large.count("warp-split"));
  EXPECT_GT(denseSearchSpaceSize(Arch::SM90A, 8448, 7168, 128), 50u);
}

TEST(Candidates, TheModelPrefersFewerWastedRows) {
  const DeviceModel d = deviceModel(Arch::SM90A);
  EXPECT_EQ(d.computeUnits, 132);
  GemmA4W4Options o16, o128;
  o16.overrides.bm = 16;
  o16.overrides.preQuantize = false;
  o128.overrides.bm = 128;
  o128.overrides.preQuantize = false;
  const GemmWeightFacts w{Arch::SM90A, 8448, 7168, true};
  Expected<GemmA4W4Plan> small = planGemmA4W4(nullptr, w, 16, o16);
  Expected<GemmA4W4Plan> big = planGemmA4W4(nullptr, w, 16, o128);
  ASSERT_OK(small);
  ASSERT_OK(big);
  EXPECT_LT(estimateUs(*small, 8448, 7168, 16, d), estimateUs(*big, 8448, 7168, 16, d));
}

} // namespace
