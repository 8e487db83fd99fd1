//===- MoeSortGpuTest.cpp - moeSort on a GPU ------------------------------===//
//
// Tier L2: skipped without a device. moeSort's outputs are memcmp-equal to
// moeSortReference on random routings, every output element written (the
// buffers are poisoned first, one guard element after each must keep its
// poison): T = 1, experts without tokens, every token to one expert,
// masked experts (expert parallelism), ids outside [0, E) (dropped and
// counted), block_m 1 to 128, passes over many thousands of ids, and the
// model shapes (Kimi-K3 E 896 topk 16, DeepSeek E 256/257 topk 8/9,
// GPT-OSS E 128 topk 4). Each entry's position (what moeReduce reads) is
// checked too, -1 where no expert placed it. The same sort replays bit for bit from a CUDA
// graph, and bad input is an error before any launch.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/CudaGraph.h"
#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "TestUtil/Random.h"
#include "mxfp4/Ops/MoeSort.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstring>
#include <memory>

using namespace mxfp4;
using namespace mxfp4::test;

namespace {

class MoeSortGpu : public SeededTest {};

enum class Routing { Random, OneExpert, FewExperts, WithInvalid };

/// A routing: distinct experts per token (as top-k gives), or the cases
/// the name says.
std::vector<int32_t> makeIds(std::mt19937_64 &rng, const MoeSortShape &s, Routing r) {
  std::vector<int32_t> ids(size_t(s.tokens * s.topk));
  std::vector<int32_t> perm(size_t(s.experts));
  for (int64_t t = 0; t < s.tokens; ++t) {
    for (int64_t e = 0; e < s.experts; ++e)
      perm[size_t(e)] = int32_t(e);
    for (int64_t j = 0; j < s.topk; ++j) {
      int32_t &id = ids[size_t(t * s.topk + j)];
      switch (r) {
      case Routing::OneExpert:
        id = int32_t(s.experts - 1);
        break;
      case Routing::FewExperts:
        id = int32_t(rng() % 3 == 0 ? 0 : std::min<int64_t>(s.experts - 1, 5));
        break;
      default: {
        // A partial Fisher-Yates shuffle: topk distinct experts (when E allows).
        const size_t k = size_t(j % s.experts);
        std::swap(perm[k], perm[k + size_t(rng() % uint64_t(s.experts - int64_t(k)))]);
        id = perm[k];
        if (r == Routing::WithInvalid && rng() % 7 == 0)
          id = rng() % 2 ? -int32_t(1 + rng() % 5) : int32_t(s.experts + int64_t(rng() % 9));
      }
      }
    }
  }
  return ids;
}

/// The sorting's device buffers, poisoned, with one guard element each.
struct SortBuffers {
  SortBuffers(Device &dev, const MoeSortShape &s)
      : sizes(moeSortSizes(s.tokens, s.topk, s.experts, s.blockM)),
        ids(dev, size_t(s.tokens * s.topk * 4)), weights(dev, size_t(s.tokens * s.topk * 4)),
        mask(dev, size_t(s.experts * 4)), sortedIds(dev, size_t(sizes.paddedEntries + 1) * 4),
        sortedWeights(dev, size_t(sizes.paddedEntries + 1) * 4),
        expertIds(dev, size_t(sizes.blocks + 1) * 4), numValid(dev, 3 * 4), status(dev, 2 * 4),
        workspace(dev, size_t(moeSortWorkspaceBytes(s))),
        positions(dev, size_t(s.tokens * s.topk + 1) * 4) {}
  void poison() {
    for (DeviceBuffer *b :
         {&sortedIds, &sortedWeights, &expertIds, &numValid, &status, &workspace, &positions})
      b->fill(0xA5);
  }
  MoeSortBuffers args(bool masked) const {
    MoeSortBuffers a;
    a.topkIds = static_cast<const int32_t *>(ids.get());
    a.topkWeights = static_cast<const float *>(weights.get());
    a.expertMask = masked ? static_cast<const int32_t *>(mask.get()) : nullptr;
    a.sortedIds = static_cast<int32_t *>(sortedIds.get());
    a.sortedWeights = static_cast<float *>(sortedWeights.get());
    a.expertIds = static_cast<int32_t *>(expertIds.get());
    a.numValid = static_cast<int32_t *>(numValid.get());
    a.status = static_cast<int32_t *>(status.get());
    a.workspace = static_cast<int32_t *>(workspace.get());
    a.positions = static_cast<int32_t *>(positions.get());
    return a;
  }
  MoeSortSizes sizes;
  DeviceBuffer ids, weights, mask, sortedIds, sortedWeights, expertIds, numValid, status, workspace,
      positions;
};

constexpr int32_t kPoison = int32_t(0xA5A5A5A5u);

/// Downloads the outputs and compares them with the reference, guards included.
void expectMatches(SortBuffers &b, const MoeSortResult &want) {
  auto ids = b.sortedIds.download<int32_t>(want.sortedIds.size() + 1);
  auto weights = b.sortedWeights.download<uint32_t>(want.sortedWeights.size() + 1);
  auto experts = b.expertIds.download<int32_t>(want.expertIds.size() + 1);
  auto valid = b.numValid.download<int32_t>(3);
  auto status = b.status.download<int32_t>(2);
  auto positions = b.positions.download<int32_t>(want.positions.size() + 1);
  EXPECT_EQ(positions.back(), kPoison) << "wrote past the positions";
  positions.pop_back();
  EXPECT_EQ(positions, want.positions) << "positions differ";
  EXPECT_EQ(ids.back(), kPoison) << "wrote past the sorted ids";
  EXPECT_EQ(weights.back(), uint32_t(kPoison)) << "wrote past the sorted weights";
  EXPECT_EQ(experts.back(), kPoison) << "wrote past the expert ids";
  EXPECT_EQ(valid[2], kPoison);
  EXPECT_EQ(status[1], kPoison);
  ids.pop_back();
  weights.pop_back();
  experts.pop_back();
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] != want.sortedIds[i]) {
      ADD_FAILURE() << "sorted id " << i << ": got 0x" << std::hex << ids[i] << ", want 0x"
                    << want.sortedIds[i];
      break;
    }
  EXPECT_EQ(std::memcmp(weights.data(), want.sortedWeights.data(), weights.size() * 4), 0)
      << "sorted weights differ";
  EXPECT_EQ(experts, want.expertIds);
  EXPECT_EQ(valid[0], want.numValid[0]);
  EXPECT_EQ(valid[1], want.numValid[1]);
  EXPECT_EQ(status[0], want.dropped);
}

TEST_F(MoeSortGpu, MatchesTheReference) {
  OPEN_DEVICE_OR_SKIP(dev);
  struct Case {
    MoeSortShape shape;
    Routing routing;
    bool masked;
  };
  std::vector<Case> cases{
      {{1, 16, 896, 32}, Routing::Random, false},      // Kimi-K3 decode
      {{1, 1, 1, 1}, Routing::Random, false},          // the smallest
      {{7, 4, 128, 16}, Routing::Random, false},       // GPT-OSS
      {{300, 8, 257, 32}, Routing::Random, false},     // DeepSeek + shared expert
      {{4096, 8, 256, 64}, Routing::Random, false},    // many passes over the ids
      {{1024, 16, 896, 16}, Routing::Random, false},   // Kimi-K3 prefill
      {{513, 4, 128, 128}, Routing::OneExpert, false}, // every token to one expert
      {{77, 9, 385, 1}, Routing::FewExperts, false},   // most experts without tokens
      {{200, 8, 256, 32}, Routing::Random, true},      // expert parallelism
      {{33, 6, 64, 16}, Routing::FewExperts, true},
      {{250, 8, 64, 8}, Routing::WithInvalid, false}, // dropped ids
      {{64, 4, 32, 4}, Routing::WithInvalid, true},
  };
  for (const Case &c : cases) {
    const MoeSortShape &s = c.shape;
    SCOPED_TRACE(testing::Message() << "T=" << s.tokens << " topk=" << s.topk << " E=" << s.experts
                                    << " block_m=" << s.blockM << " routing=" << int(c.routing)
                                    << " masked=" << c.masked << " seed=" << seed);
    std::vector<int32_t> ids = makeIds(rng, s, c.routing);
    std::vector<float> weights(ids.size());
    for (float &w : weights)
      w = float(rng() % 1000003) / 1000003.0f;
    std::vector<int32_t> mask;
    if (c.masked)
      for (int64_t e = 0; e < s.experts; ++e)
        mask.push_back(rng() % 3 != 0 ? int32_t(1 + rng() % 5) : 0);
    auto want = moeSortReference(s, ids, weights, mask);
    ASSERT_OK(want);
    SortBuffers b(dev, s);
    b.ids.upload(ids);
    b.weights.upload(weights);
    if (c.masked)
      b.mask.upload(mask);
    b.poison();
    ASSERT_OK(moeSort(dev, nullptr, s, b.args(c.masked)));
    ASSERT_OK(dev.synchronize());
    expectMatches(b, *want);
  }
}

TEST_F(MoeSortGpu, ReplaysFromACudaGraph) {
  OPEN_CUDA_GRAPH_OR_SKIP(dev, graph);
  const MoeSortShape s{100, 8, 256, 32};
  SortBuffers b(dev, s);
  // Warm-up (kernels loaded), then capture.
  b.ids.upload(makeIds(rng, s, Routing::Random));
  b.weights.upload(std::vector<float>(size_t(s.tokens * s.topk), 0.5f));
  ASSERT_OK(moeSort(dev, graph.stream(), s, b.args(false)));
  ASSERT_OK(dev.synchronize());
  ASSERT_OK(graph.capture([&] { return moeSort(dev, graph.stream(), s, b.args(false)); }));
  // Each replay sorts the routing the buffers hold then.
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(testing::Message() << "replay " << round << " seed=" << seed);
    std::vector<int32_t> ids = makeIds(rng, s, round ? Routing::WithInvalid : Routing::Random);
    std::vector<float> weights(ids.size());
    for (float &w : weights)
      w = float(rng() % 997) / 997.0f;
    b.ids.upload(ids);
    b.weights.upload(weights);
    b.poison();
    ASSERT_OK(dev.synchronize());
    ASSERT_OK(graph.replay());
    ASSERT_OK(dev.synchronize());
    auto want = moeSortReference(s, ids, weights);
    ASSERT_OK(want);
    expectMatches(b, *want);
  }
}

TEST_F(MoeSortGpu, RejectsBadInput) {
  OPEN_DEVICE_OR_SKIP(dev);
  const MoeSortShape s{4, 2, 8, 4};
  SortBuffers b(dev, s);
  MoeSortBuffers a = b.args(false);
  EXPECT_ERROR_CONTAINS(moeSort(dev, nullptr, {0, 2, 8, 4}, a), "T (tokens)");
  EXPECT_ERROR_CONTAINS(moeSort(dev, nullptr, {4, 2, 8, 300}, a), "block_m");
  MoeSortBuffers noIds = a;
  noIds.topkIds = nullptr;
  EXPECT_ERROR_CONTAINS(moeSort(dev, nullptr, s, noIds), "only the expert mask may be null");
  MoeSortBuffers odd = a;
  odd.sortedIds = reinterpret_cast<int32_t *>(reinterpret_cast<char *>(a.sortedIds) + 2);
  EXPECT_ERROR_CONTAINS(moeSort(dev, nullptr, s, odd), "4-byte aligned");
}

} // namespace
