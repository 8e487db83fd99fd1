//===- GemmA4W4GraphGpuTest.cpp - gemmA4W4 captured into CUDA graphs ------===//
//
// Tier L2: skipped without a CUDA device. Inference engines capture their
// decode and prefill steps into graphs and replay them with new inputs in
// the same buffers. The table's kernels for each path (decode with split-K
// counters, the activation image launched behind its quantizer as a
// programmatic dependent, the persistent grid) captured on a stream of the
// test's own, replayed bit for bit against the same calls run eagerly, on
// fresh inputs too; a graph captured before the scratch grew still runs;
// a capture that would need the scratch to grow fails with what to do.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Bf16Compare.h"
#include "TestUtil/CudaGraph.h"
#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/GpuInputs.h"
#include "TestUtil/PoisonedGemm.h"
#include "TestUtil/Random.h"
#include "mxfp4/Ops/GemmA4W4.h"

#include "gtest/gtest.h"

#include <memory>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class GemmGraph : public SeededTest {};

/// One captured call: a shape's prepared weights, M rows of activations and
/// the output the graph writes.
struct Call {
  const PreparedWeight *w;
  int64_t m;
  std::unique_ptr<DeviceBuffer> a, out;
};

TEST_F(GemmGraph, CapturedCallsReplayBitForBit) {
  OPEN_CUDA_GRAPH_OR_SKIP(dev, graph);
  // 1536x7168: M = 1 decode (BN 64 x 14 splits through the workspace and
  // its counters), 24 and 512 on the image (split over K). 7168x768: M = 8
  // decode in warpgroups, 128 on the image, 2048 persistent.
  struct Shape {
    int64_t n, k;
    std::vector<int64_t> ms;
  };
  std::vector<std::unique_ptr<PreparedWeight>> weights;
  std::vector<Call> calls;
  for (const Shape &s : {Shape{1536, 7168, {1, 24, 512}}, Shape{7168, 768, {8, 128, 2048}}}) {
    HostWeights hw = randomWeights(rng, s.n, s.k);
    auto prepared = prepareGemmA4W4Weight(dev, hw.data, hw.scales, s.n, s.k);
    ASSERT_OK(prepared);
    weights.push_back(std::move(*prepared));
    for (int64_t m : s.ms) {
      Call c{weights.back().get(), m, std::make_unique<DeviceBuffer>(dev, size_t(m * s.k * 2)),
             std::make_unique<DeviceBuffer>(dev, size_t(m * s.n * 2))};
      c.a->upload(randomActivations(rng, m, s.k));
      calls.push_back(std::move(c));
    }
  }
  // Each call once, eagerly on the stream it is captured on (the warm-up an
  // engine runs: kernels loaded, the stream's scratch grown), into a buffer
  // of its own.
  auto eager = [&](std::vector<std::vector<uint16_t>> &want) {
    want.clear();
    for (Call &c : calls) {
      DeviceBuffer out(dev, c.out->size());
      auto got = poisonedGemm(dev, *c.a, out, c.m, c.w->n(), *c.w, {}, 0x7B, graph.stream());
      ASSERT_OK(got);
      want.push_back(std::move(*got));
    }
  };
  auto replayAndCompare = [&](const std::vector<std::vector<uint16_t>> &want, const char *what) {
    for (Call &c : calls)
      c.out->fill(0xC3);
    ASSERT_OK(dev.synchronize());
    ASSERT_OK(graph.replay());
    for (size_t i = 0; i < calls.size(); ++i) {
      const Call &c = calls[i];
      SCOPED_TRACE(testing::Message() << what << ": N=" << c.w->n() << " K=" << c.w->k()
                                      << " M=" << c.m << " seed=" << seed);
      std::vector<uint16_t> got = c.out->download<uint16_t>(size_t(c.m * c.w->n()));
      EXPECT_EQ(bf16Differences(got, want[i], "graph replay", "eager call"), 0);
    }
  };
  std::vector<std::vector<uint16_t>> want;
  eager(want);
  ASSERT_OK(graph.begin());
  for (Call &c : calls)
    ASSERT_OK(gemmA4W4(dev, graph.stream(), c.a->get(), c.m, *c.w, c.out->get()));
  ASSERT_OK(graph.end());
  replayAndCompare(want, "first replay");
  // The same graph on new activations in the same buffers: it reads them
  // anew, and the split-K counters the first replay used are zero again.
  for (Call &c : calls)
    c.a->upload(randomActivations(rng, c.m, c.w->k()));
  eager(want);
  replayAndCompare(want, "fresh inputs");
  // Larger calls grow every scratch buffer the graph uses (the image, the
  // split-K workspace and counters); the graph keeps the old ones.
  for (const auto &w : weights) {
    const int64_t m = 4096;
    DeviceBuffer a(dev, size_t(m * w->k() * 2)), out(dev, size_t(m * w->n() * 2));
    a.upload(randomActivations(rng, m, w->k()));
    GemmA4W4Options forced; // splits through the workspace: 4 (2) x 4096 rows of it
    forced.overrides.bm = 128;
    forced.overrides.bn = 128;
    forced.overrides.splitK = w->k() == 7168 ? 4 : 2;
    ASSERT_OK(gemmA4W4(dev, graph.stream(), a.get(), m, *w, out.get(), forced));
    ASSERT_OK(gemmA4W4(dev, graph.stream(), a.get(), m, *w, out.get()));
  }
  ASSERT_OK(dev.synchronize());
  replayAndCompare(want, "after the scratch grew");
}

TEST_F(GemmGraph, CaptureThatWouldGrowScratchFailsClearly) {
  OPEN_CUDA_GRAPH_OR_SKIP(dev, graph);
  const int64_t n = 1536, k = 7168;
  HostWeights hw = randomWeights(rng, n, k);
  auto w = prepareGemmA4W4Weight(dev, hw.data, hw.scales, n, k);
  ASSERT_OK(w);
  // Uploads from pageable memory may still be finishing on the legacy
  // stream; an engine captures after its warm-up has synchronized.
  ASSERT_OK(dev.synchronize());
  // The device tells a capturing stream from one that is not, and asking
  // leaves the capture intact.
  Expected<bool> before = dev.capturing(graph.stream());
  ASSERT_OK(before);
  EXPECT_FALSE(*before);
  ASSERT_OK(graph.begin());
  Expected<bool> during = dev.capturing(graph.stream());
  ASSERT_OK(during);
  EXPECT_TRUE(*during);
  ASSERT_OK(graph.end());
  // Nothing ran on these weights on this stream yet: M = 1 (split-K
  // workspace) and 512 (the activation image) would each allocate.
  for (int64_t m : {1, 512}) {
    SCOPED_TRACE(testing::Message() << "M=" << m);
    DeviceBuffer a(dev, size_t(m * k * 2)), out(dev, size_t(m * n * 2));
    a.upload(randomActivations(rng, m, k));
    ASSERT_OK(dev.synchronize());
    ASSERT_OK(graph.begin());
    Error e = gemmA4W4(dev, graph.stream(), a.get(), m, **w, out.get());
    ASSERT_TRUE(bool(e)) << "a capture that needs more scratch went through";
    EXPECT_NE(e.message().find("captured into a graph"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("once on this stream before capturing"), std::string::npos)
        << e.message();
    // The capture is still valid (nothing unsafe ran), and the call then
    // works outside it, and inside the next one.
    ASSERT_OK(graph.end());
    ASSERT_OK(gemmA4W4(dev, graph.stream(), a.get(), m, **w, out.get()));
    ASSERT_OK(graph.begin());
    ASSERT_OK(gemmA4W4(dev, graph.stream(), a.get(), m, **w, out.get()));
    ASSERT_OK(graph.end());
    ASSERT_OK(graph.replay());
  }
}

} // namespace
