//===- FusedMoeGpuTest.cpp - The A4W4 MoE on a GPU ------------------------===//
//
// Tier L2: skipped without a device.
//  - fusedMoeA4W4 against a float64 reference of the QDQ math (hidden rows
//    quantized with the call's rounding, exact MXFP4 weights, the
//    activation, its output quantized again, the weighted sum): rel-L2
//    and seed 003's logits_diff gate, on ragged shapes (H, inter not
//    multiples of 128; GPT-OSS's 2880), T = 1, every activation, with and
//    without doweight_stage1, every block_m, masked experts. The distance
//    to the unquantized BF16 reference is logged.
//  - the unfused stage 1 (moe_gemm in bf16, then moe_actq) and a layer with
//    biases (which takes it) against their references; the path is logged.
//  - the atomic stage 2 (MoeCombine::Atomic: rows added to an f32
//    accumulator in moe_gemm's epilogue) in the same tests, with K splits,
//    every block_m, masked experts, biases and doweight; and within bf16
//    rounding of the deterministic reduction; both in a graph.
//  - GUGU weights give the bytes GGUU weights give (the same prepared
//    matrices); a CUDA-graph replay gives the bytes of a direct call on a
//    fresh routing; bad input is an error before any launch.
// The stages alone: FusedMoeStagesGpuTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "MoeLayer.h"
#include "TestUtil/CudaGraph.h"
#include "mxfp4/Support/Log.h"

#include <cstring>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class FusedMoe : public SeededTest {};

/// Gives `c`'s layer random biases and prepares its weights with them.
void useBiases(Case &c, std::mt19937_64 &rng) {
  c.layer.addBiases(rng);
  auto w = prepareMoeWeights(c.dev, c.layer.shape, c.layer.w1, c.layer.s1, c.layer.w2, c.layer.s2,
                             GateUpLayout::Gguu, std::nullopt, {c.layer.b1, c.layer.b2});
  ASSERT_OK(w);
  c.weights = std::move(*w);
}

/// What the library logged since the test cleared it (setLogSink).
std::vector<std::string> &loggedLines() {
  static std::vector<std::string> lines;
  return lines;
}

/// The layer against the QDQ reference with both combines: the atomic
/// stage 2 (rows added to an f32 accumulator, each K split its partial
/// rows) once per doweight setting, compared also with the reduction.
TEST_F(FusedMoe, MatchesTheQdqReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  struct Shape {
    MoeShape s;
    int64_t tokens;
    int maxScale = 124;
  };
  // Ragged H and inter (padded to 256 and 384 internally), T = 1, many
  // tokens per expert (with weight scales up to 2^3: not folded), GPT-OSS's
  // 2880; 1024 x 1024 at two tokens splits both GEMMs' K in 4
  // (makeMoeGemmSpec: few blocks).
  const Shape shapes[] = {{{8, 2, 160, 96}, 37},
                          {{8, 2, 256, 256}, 1},
                          {{16, 4, 512, 384}, 150, 130},
                          {{4, 2, 2880, 2880}, 5},
                          {{8, 2, 1024, 1024}, 2}};
  for (const Shape &sh : shapes) {
    Case c(dev, rng, sh.s, sh.tokens, sh.maxScale);
    ASSERT_TRUE(c.weights);
    for (const MoeActivation &act : {MoeActivation{Activation::Silu, 0, 0}, swigluGptOss(), kSitu})
      for (bool doweight : {false, true}) {
        SCOPED_TRACE(testing::Message() << "H " << sh.s.hidden << " " << toString(act.kind)
                                        << " doweight=" << doweight << " seed=" << seed);
        FusedMoeOptions o;
        o.activation = act;
        o.doweightStage1 = doweight;
        o.rounding = doweight ? ScaleRounding::Even : kDefaultScaleRounding;
        runAndExpectClose(c, o);
        if (act.kind != (doweight ? Activation::Swiglu : Activation::Situv2))
          continue;
        // The reduction sums the same rows after rounding each to bf16:
        // the two differ by about that rounding (2^-9 relative).
        std::vector<double> reduced;
        for (uint16_t x : c.result())
          reduced.push_back(bf16ToFloat(x));
        o.combine = MoeCombine::Atomic;
        runAndExpectClose(c, o);
        EXPECT_LE(distance(c.result(), reduced).relL2, std::ldexp(1.0, -7));
      }
  }
}

TEST_F(FusedMoe, EveryBlockMAndMaskedExperts) {
  OPEN_DEVICE_OR_SKIP(dev);
  Case c(dev, rng, {12, 3, 256, 128}, 90);
  ASSERT_TRUE(c.weights);
  FusedMoeOptions o;
  o.activation = kSitu;
  for (MoeCombine combine : {MoeCombine::Reduce, MoeCombine::Atomic})
    for (int64_t bm : {16, 32, 64, 128}) {
      SCOPED_TRACE(testing::Message() << "block_m " << bm << " atomic="
                                      << (combine == MoeCombine::Atomic) << " seed=" << seed);
      o.blockM = bm;
      o.combine = combine;
      runAndExpectClose(c, o);
    }
  // Expert parallelism: this rank holds 8 of the 12 experts; the slots of
  // the others add nothing.
  std::vector<int32_t> mask(12);
  for (size_t e = 0; e < mask.size(); ++e)
    mask[e] = e % 3 != 1;
  c.mask.upload(mask);
  HostLayer local = c.layer.local(mask);
  auto w = prepareMoeWeights(dev, local.shape, local.w1, local.s1, local.w2, local.s2);
  ASSERT_OK(w);
  c.weights = std::move(*w);
  o.blockM = 0;
  o.expertMask = static_cast<int32_t *>(c.mask.get());
  o.globalExperts = 4; // fewer than the weights' experts
  EXPECT_ERROR_CONTAINS(c.run(o), "globalExperts");
  o.globalExperts = 12;
  for (MoeCombine combine : {MoeCombine::Reduce, MoeCombine::Atomic}) {
    o.combine = combine;
    runAndExpectClose(c, o, nullptr, mask);
  }
}

/// An Inf in a token's hidden row makes its activation block's scale NaN:
/// the token's whole output is NaN (nothing silently finite), every other
/// token is unaffected.
TEST_F(FusedMoe, NonFiniteInputPoisonsOnlyItsToken) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeShape s{4, 2, 256, 256};
  const int64_t tokens = 6, bad = 2;
  Case c(dev, rng, s, tokens);
  ASSERT_TRUE(c.weights);
  c.hidden[size_t(bad * s.hidden + 40)] = floatToBf16(INFINITY);
  c.dh.upload(c.hidden);
  for (bool doweight : {false, true}) {
    SCOPED_TRACE(testing::Message() << "doweight=" << doweight << " seed=" << seed);
    FusedMoeOptions o;
    o.activation = {Activation::Silu, 0, 0};
    o.doweightStage1 = doweight;
    c.out.fill(0);
    ASSERT_OK(c.run(o));
    ASSERT_OK(dev.synchronize());
    std::vector<uint16_t> got = c.result();
    std::vector<double> ref = reference(c.layer, c.hidden, tokens, c.routing, o, {}, true);
    int64_t nan = 0;
    for (int64_t h = 0; h < s.hidden; ++h) {
      nan += std::isnan(bf16ToFloat(got[size_t(bad * s.hidden + h)]));
      got[size_t(bad * s.hidden + h)] = 0;
      ref[size_t(bad * s.hidden + h)] = 0;
    }
    EXPECT_EQ(nan, s.hidden);
    for (uint16_t x : got)
      ASSERT_TRUE(std::isfinite(bf16ToFloat(x)));
    EXPECT_LE(distance(got, ref).logitsDiff, 0.01);
  }
}

/// The unfused stage 1 (moe_gemm storing bf16 gate/up, then moe_actq)
/// against its own QDQ reference, on a ragged shape.
TEST_F(FusedMoe, UnfusedStage1MatchesTheQdqReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  Case c(dev, rng, {8, 2, 160, 96}, 37);
  ASSERT_TRUE(c.weights);
  for (const MoeActivation &act : {MoeActivation{Activation::Silu, 0, 0}, swigluGptOss(), kSitu}) {
    SCOPED_TRACE(testing::Message() << toString(act.kind) << " seed=" << seed);
    FusedMoeOptions o;
    o.activation = act;
    o.fuseActivation = false;
    runAndExpectClose(c, o);
  }
}

/// A layer with biases (GPT-OSS has both): stage 1 falls back to moe_actq
/// (the fused epilogue adds none) and says so; W1's bias goes in before the
/// routing weight and the activation, W2's before the weighted sum; GGUU
/// and GUGU biases give the same bytes.
TEST_F(FusedMoe, BiasesMatchTheQdqReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeShape s{8, 2, 160, 96};
  // The atomic stage 2 adds W2's bias in its epilogue, once per row
  // whatever the K split (1024 x 1024 at two tokens: split in 4).
  Case split(dev, rng, {8, 2, 1024, 1024}, 2);
  ASSERT_TRUE(split.weights);
  useBiases(split, rng);
  Case c(dev, rng, s, 29);
  ASSERT_TRUE(c.weights);
  useBiases(c, rng);
  for (MoeCombine combine : {MoeCombine::Reduce, MoeCombine::Atomic})
    for (const MoeActivation &act : {MoeActivation{Activation::Silu, 0, 0}, swigluGptOss(), kSitu})
      for (bool doweight : {false, true}) {
        SCOPED_TRACE(testing::Message()
                     << toString(act.kind) << " doweight=" << doweight
                     << " atomic=" << (combine == MoeCombine::Atomic) << " seed=" << seed);
        FusedMoeOptions o;
        o.activation = act;
        o.doweightStage1 = doweight;
        o.combine = combine;
        // The reference rounds stage 1's GEMM to bf16 as the unfused path does.
        FusedMoeOptions ref = o;
        ref.fuseActivation = false;
        runAndExpectClose(c, o, &ref);
        if (combine == MoeCombine::Atomic)
          runAndExpectClose(split, o, &ref);
      }
  // The fallback is visible.
  const LogLevel level = logLevel();
  loggedLines().clear();
  LogSink previous = setLogSink([](std::string_view line) { loggedLines().emplace_back(line); });
  setLogLevel(LogLevel::Debug);
  FusedMoeOptions o;
  o.activation = swigluGptOss();
  Error e = c.run(o);
  setLogLevel(level);
  setLogSink(previous);
  ASSERT_OK(e);
  std::string all;
  for (const std::string &l : loggedLines())
    all += l + "\n";
  EXPECT_NE(all.find("bf16 gate/up then moe_actq (no fused epilogue: W1 has a bias"),
            std::string::npos)
      << all;
  ASSERT_OK(dev.synchronize());
  std::vector<uint16_t> gguu = c.result();
  // GUGU weights with their bias in the same row order: the same bytes.
  auto [w1, s1] = c.layer.gugu();
  std::vector<float> b1 = c.layer.guguBias();
  auto gugu = prepareMoeWeights(dev, s, w1, s1, c.layer.w2, c.layer.s2, GateUpLayout::Gugu,
                                std::nullopt, {b1, c.layer.b2});
  ASSERT_OK(gugu);
  c.weights = std::move(*gugu);
  c.out.fill(0xFF);
  ASSERT_OK(c.run(o));
  ASSERT_OK(dev.synchronize());
  EXPECT_EQ(c.result(), gguu);
  // Bias sizes are checked.
  EXPECT_ERROR_CONTAINS(prepareMoeWeights(dev, s, c.layer.w1, c.layer.s1, c.layer.w2, c.layer.s2,
                                          GateUpLayout::Gguu, std::nullopt,
                                          {Span<float>(b1.data(), 5), {}}),
                        "W1's bias [E, 2 inter]");
}

TEST_F(FusedMoe, InterleavedGateUpGivesTheSameBytes) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeShape s{6, 2, 256, 160};
  Case c(dev, rng, s, 21);
  ASSERT_TRUE(c.weights);
  FusedMoeOptions o;
  o.activation = swigluGptOss();
  ASSERT_OK(c.run(o));
  ASSERT_OK(dev.synchronize());
  std::vector<uint16_t> gguu = c.result();
  auto [w1, s1] = c.layer.gugu();
  auto gugu = prepareMoeWeights(dev, s, w1, s1, c.layer.w2, c.layer.s2, GateUpLayout::Gugu);
  ASSERT_OK(gugu);
  c.weights = std::move(*gugu);
  c.out.fill(0xFF);
  ASSERT_OK(c.run(o));
  ASSERT_OK(dev.synchronize());
  EXPECT_EQ(c.result(), gguu);
}

TEST_F(FusedMoe, ReplaysFromACudaGraph) {
  OPEN_CUDA_GRAPH_OR_SKIP(dev, graph);
  const MoeShape s{8, 2, 256, 256};
  // Atomic: two adds to zero per element (no K split at K 256) are exact
  // in either order, so the bytes still match.
  for (MoeCombine combine : {MoeCombine::Reduce, MoeCombine::Atomic}) {
    SCOPED_TRACE(testing::Message() << "atomic=" << (combine == MoeCombine::Atomic));
    Case c(dev, rng, s, 40);
    ASSERT_TRUE(c.weights);
    FusedMoeOptions o;
    o.activation = {Activation::Silu, 0, 0};
    o.dropped = static_cast<int32_t *>(c.dropped.get());
    o.combine = combine;
    // Warm-up on the capture stream (kernels and scratch), then capture.
    ASSERT_OK(c.run(o, graph.stream()));
    ASSERT_OK(dev.synchronize());
    ASSERT_OK(graph.capture([&] { return c.run(o, graph.stream()); }));
    Routing r = randomRouting(rng, c.tokens, s);
    r.ids[5] = 99; // dropped, and counted
    c.upload(r);
    c.out.fill(0xFF);
    ASSERT_OK(dev.synchronize());
    ASSERT_OK(graph.replay());
    ASSERT_OK(dev.synchronize());
    std::vector<uint16_t> replayed = c.result();
    EXPECT_EQ(c.dropped.download<int32_t>(1)[0], 1);
    c.out.fill(0xFF);
    ASSERT_OK(c.run(o));
    ASSERT_OK(dev.synchronize());
    EXPECT_EQ(c.result(), replayed);
  }
}

/// Engines warm up at their largest batch, then capture smaller ones: at
/// two tokens both GEMMs split K (few row blocks) where 1200 tokens did
/// not, and the capture still needs no allocation; the replay gives the
/// bytes of a direct call.
TEST_F(FusedMoe, CapturesSmallerCallsAfterALargeWarmUp) {
  OPEN_CUDA_GRAPH_OR_SKIP(dev, graph);
  const MoeShape s{8, 2, 1024, 1024};
  FusedMoeOptions o;
  o.activation = swigluGptOss();
  Case big(dev, rng, s, 1200);
  ASSERT_TRUE(big.weights);
  ASSERT_OK(big.run(o, graph.stream()));
  ASSERT_OK(dev.synchronize());
  Case small(dev, rng, s, 2);
  small.weights = std::move(big.weights);
  ASSERT_OK(graph.capture([&] { return small.run(o, graph.stream()); }));
  small.out.fill(0xFF);
  ASSERT_OK(dev.synchronize());
  ASSERT_OK(graph.replay());
  ASSERT_OK(dev.synchronize());
  std::vector<uint16_t> replayed = small.result();
  small.out.fill(0xFF);
  ASSERT_OK(small.run(o));
  ASSERT_OK(dev.synchronize());
  EXPECT_EQ(small.result(), replayed);
}

TEST_F(FusedMoe, LogsItsChoicesAtDebug) {
  OPEN_DEVICE_OR_SKIP(dev);
  Case c(dev, rng, {8, 2, 1024, 1024}, 2);
  ASSERT_TRUE(c.weights);
  const LogLevel level = logLevel();
  LogSink previous = setLogSink([](std::string_view line) { loggedLines().emplace_back(line); });
  loggedLines().clear();
  setLogLevel(LogLevel::Debug);
  FusedMoeOptions o;
  o.activation = {Activation::Silu, 0, 0};
  Error e = c.run(o);
  setLogLevel(level);
  setLogSink(previous);
  ASSERT_OK(e);
  // Both GEMMs split K in 4 at two tokens (MatchesTheQdqReference's case).
  std::string all;
  for (const std::string &l : loggedLines())
    all += l + "\n";
  EXPECT_NE(all.find("moe stage 1 at 2 tokens, block_m 16: fused (activation and MXFP4 "
                     "quantization in moe_gemm's epilogue), "
                     "moe_gemm_sm90a_n2048_k1024_bm16_bn128_bk128_ks4_"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("_eactmx_fold, K split 4"), std::string::npos) << all;
  EXPECT_NE(all.find("moe stage 2 at 2 tokens, block_m 16: per-slot rows then moe_reduce (no "
                     "atomic path: the caller asked for the reduction"),
            std::string::npos)
      << all;
  // Unfused on request, with the reason.
  loggedLines().clear();
  setLogSink([](std::string_view line) { loggedLines().emplace_back(line); });
  setLogLevel(LogLevel::Debug);
  o.fuseActivation = false;
  o.combine = MoeCombine::Atomic;
  e = c.run(o);
  setLogLevel(level);
  setLogSink(previous);
  ASSERT_OK(e);
  all.clear();
  for (const std::string &l : loggedLines())
    all += l + "\n";
  EXPECT_NE(all.find("bf16 gate/up then moe_actq (no fused epilogue: the caller turned it off"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("moe stage 2 at 2 tokens, block_m 16: atomic (rows added to an f32 "
                     "accumulator, then moe_cast), moe_gemm_sm90a_n1024_k1024_bm16_bn128_bk128_"
                     "ks4_"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("_escatter_fold, K split 4"), std::string::npos) << all;
}

TEST_F(FusedMoe, RejectsBadInput) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeShape s{4, 2, 256, 128};
  HostLayer l(rng, s);
  EXPECT_ERROR_CONTAINS(prepareMoeWeights(dev, {4, 2, 250, 128}, l.w1, l.s1, l.w2, l.s2),
                        "multiple of 32");
  EXPECT_ERROR_CONTAINS(prepareMoeWeights(dev, {4, 5, 256, 128}, l.w1, l.s1, l.w2, l.s2), "topk");
  EXPECT_ERROR_CONTAINS(prepareMoeWeights(dev, {4, 2, 256, 96}, l.w1, l.s1, l.w2, l.s2),
                        "W1's packed codes");
  EXPECT_ERROR_CONTAINS(
      prepareMoeWeights(dev, s, l.w1, l.s1, l.w2, l.s2, GateUpLayout::Gguu, Arch::GFX950),
      "weights for gfx950 cannot run on this device, which is sm_90a");
  Case c(dev, rng, s, 3);
  ASSERT_TRUE(c.weights);
  FusedMoeOptions o;
  EXPECT_ERROR_CONTAINS(c.run(o), "must be gated");
  o.activation = {Activation::Situv2, 0.0f, 1.0f};
  EXPECT_ERROR_CONTAINS(c.run(o), "situv2 takes finite beta");
  o.activation = {Activation::Silu, 0, 0};
  o.blockM = 24;
  EXPECT_ERROR_CONTAINS(c.run(o), "blockM");
  o.blockM = 0;
  o.combine = MoeCombine(7);
  EXPECT_ERROR_CONTAINS(c.run(o), "combine must be");
  o.combine = MoeCombine::Reduce;
  EXPECT_ERROR_CONTAINS(fusedMoeA4W4(dev, nullptr, nullptr, 3, static_cast<int32_t *>(c.ids.get()),
                                     static_cast<float *>(c.tw.get()), *c.weights, o, c.out.get()),
                        "null");
  EXPECT_ERROR_CONTAINS(fusedMoeA4W4(dev, nullptr, static_cast<char *>(c.dh.get()) + 2, 3,
                                     static_cast<int32_t *>(c.ids.get()),
                                     static_cast<float *>(c.tw.get()), *c.weights, o, c.out.get()),
                        "aligned");
  EXPECT_ERROR_CONTAINS(fusedMoeA4W4(dev, nullptr, c.dh.get(), 0,
                                     static_cast<int32_t *>(c.ids.get()),
                                     static_cast<float *>(c.tw.get()), *c.weights, o, c.out.get()),
                        "tokens");
}

} // namespace
