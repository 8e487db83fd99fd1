//===- GemmA4W4ConcurrencyGpuTest.cpp - gemmA4W4 on many streams, threads -===//
//
// Tier L2: skipped without a CUDA device. An engine overlaps work on
// several streams and calls from threads of its own (which have no CUDA
// context current). Calls on one PreparedWeight from three streams at once,
// and from three threads each with its own stream, write what the same
// calls write one at a time, bit for bit: each stream has its own scratch
// (the activation image, the split-K workspace and its counters), and each
// call makes the device's context current for itself.
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

#include <array>
#include <memory>
#include <thread>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class GemmConcurrency : public SeededTest {
protected:
  static constexpr int64_t kN = 1536, kK = 7168, kRounds = 6;
  /// Per stream: M = 512 / 384 / 200 on the activation image (its qdq
  /// scratch), then M = 1 / 2 / 24 (decode through the split-K workspace and
  /// its counters, or the image split over K).
  static constexpr int64_t kM[3][2] = {{512, 1}, {384, 2}, {200, 24}};

  struct Call {
    int64_t m;
    std::unique_ptr<DeviceBuffer> a;
    std::vector<std::unique_ptr<DeviceBuffer>> out; ///< one per round
    std::vector<uint16_t> want;
  };

  /// One PreparedWeight, three streams of the test's own and each stream's
  /// calls.
  struct Workload {
    std::unique_ptr<PreparedWeight> w;
    std::vector<std::unique_ptr<CudaGraph>> streams;
    std::array<std::vector<Call>, 3> calls;
  };

  /// The device (declared first: the workload frees into it) and the
  /// workload, with the outputs of one call at a time.
  void SetUp() override {
    SeededTest::SetUp();
    Expected<std::unique_ptr<Device>> opened = Device::open();
    if (!opened)
      GTEST_SKIP() << opened.takeError().message();
    device = std::move(*opened);
    if (device->driver() != "cuda")
      GTEST_SKIP() << "the streams here are CUDA streams";
    Device &dev = *device;
    HostWeights hw = randomWeights(rng, kN, kK);
    auto w = prepareGemmA4W4Weight(dev, hw.data, hw.scales, kN, kK);
    ASSERT_OK(w);
    load.w = std::move(*w);
    for (int s = 0; s < 3; ++s) {
      auto g = CudaGraph::create();
      ASSERT_OK(g);
      load.streams.push_back(std::move(*g));
      for (int64_t m : kM[s]) {
        Call c{m, std::make_unique<DeviceBuffer>(dev, size_t(m * kK * 2)), {}, {}};
        c.a->upload(randomActivations(rng, m, kK));
        DeviceBuffer out(dev, size_t(m * kN * 2));
        auto want = poisonedGemm(dev, *c.a, out, m, kN, *load.w, {}, 0x5A);
        ASSERT_OK(want);
        c.want = std::move(*want);
        for (int r = 0; r < kRounds; ++r) {
          c.out.push_back(std::make_unique<DeviceBuffer>(dev, size_t(m * kN * 2)));
          c.out.back()->fill(0xE7);
        }
        load.calls[s].push_back(std::move(c));
      }
    }
    ASSERT_OK(dev.synchronize());
  }

  void expectEveryRoundAsAlone(const char *what) {
    ASSERT_OK(device->synchronize());
    for (int s = 0; s < 3; ++s)
      for (const Call &c : load.calls[s])
        for (int r = 0; r < kRounds; ++r) {
          SCOPED_TRACE(testing::Message() << what << ": stream " << s << " M=" << c.m << " round "
                                          << r << " seed=" << seed);
          std::vector<uint16_t> got = c.out[r]->download<uint16_t>(size_t(c.m * kN));
          EXPECT_EQ(bf16Differences(got, c.want, what, "one call at a time"), 0);
        }
  }

  std::unique_ptr<Device> device;
  Workload load;
};

TEST_F(GemmConcurrency, StreamsAtOnceOnOneWeight) {
  Device &dev = *device;
  // Round-robin, nothing waits: each stream's next call is queued while the
  // others' run.
  for (int r = 0; r < kRounds; ++r)
    for (int i = 0; i < 2; ++i)
      for (int s = 0; s < 3; ++s) {
        Call &c = load.calls[s][i];
        ASSERT_OK(
            gemmA4W4(dev, load.streams[s]->stream(), c.a->get(), c.m, *load.w, c.out[r]->get()));
      }
  expectEveryRoundAsAlone("three streams at once");
}

TEST_F(GemmConcurrency, ThreadsOfTheirOwnOnOneWeight) {
  Device &dev = *device;
  // New threads have no context current; their first calls grow their
  // streams' scratch while the others launch.
  std::string errors[3];
  std::vector<std::thread> threads;
  for (int s = 0; s < 3; ++s)
    threads.emplace_back([&, s] {
      for (int r = 0; r < kRounds; ++r)
        for (Call &c : load.calls[s])
          if (Error e = gemmA4W4(dev, load.streams[s]->stream(), c.a->get(), c.m, *load.w,
                                 c.out[r]->get())) {
            errors[s] = e.message();
            return;
          }
    });
  for (std::thread &t : threads)
    t.join();
  for (int s = 0; s < 3; ++s)
    EXPECT_EQ(errors[s], "") << "thread " << s;
  expectEveryRoundAsAlone("three threads");
}

} // namespace
