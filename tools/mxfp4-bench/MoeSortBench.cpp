//===- MoeSortBench.cpp - mxfp4-bench --op=moe_sort -----------------------===//

#include "MoeSortBench.h"
#include "mxfp4/Ops/MoeSort.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <random>
#include <vector>

namespace mxfp4::bench {

namespace {
struct Config {
  const char *model;
  int64_t experts, topk;
};
constexpr Config kConfigs[] = {
    {"kimi-k3", 896, 16}, {"gpt-oss-120b", 128, 4}, {"deepseek-r1", 256, 8}};
constexpr int64_t kTokens[] = {1, 16, 128, 1024, 4096};
constexpr double kHbmBytesPerS = 4.25e12;
} // namespace

UniformRouting uniformRouting(std::mt19937_64 &rng, int64_t tokens, int64_t topk, int64_t experts) {
  UniformRouting r;
  r.ids.resize(size_t(tokens * topk));
  r.weights.assign(r.ids.size(), 1.0f / float(topk));
  std::vector<int32_t> perm(static_cast<size_t>(experts));
  std::vector<bool> active(static_cast<size_t>(experts));
  for (int64_t i = 0; i < tokens; ++i) {
    for (int64_t e = 0; e < experts; ++e)
      perm[size_t(e)] = int32_t(e);
    for (int64_t j = 0; j < topk; ++j) {
      std::swap(perm[size_t(j)], perm[size_t(j) + rng() % size_t(experts - j)]);
      r.ids[size_t(i * topk + j)] = perm[size_t(j)];
      active[size_t(perm[size_t(j)])] = true;
    }
  }
  r.activeExperts = int64_t(std::count(active.begin(), active.end(), true));
  return r;
}

int runMoeSortBench(Device &dev, const TimeFn &time, const std::string &json, int64_t blockM) {
  std::mt19937_64 rng(12345);
  struct Row {
    const char *model;
    int64_t tokens, experts, topk, active;
    double us, hostUs, bytes;
  };
  std::vector<Row> rows;
  llvm::outs() << llvm::format("%-13s %6s %5s %5s %7s %8s %8s %9s %8s\n", "model", "tokens", "E",
                               "topk", "active", "sort_us", "host_us", "floor_us", "x_floor");
  for (const Config &c : kConfigs)
    for (int64_t t : kTokens) {
      const MoeSortShape shape{t, c.topk, c.experts, blockM};
      const MoeSortSizes sizes = moeSortSizes(t, c.topk, c.experts, blockM);
      const UniformRouting routing = uniformRouting(rng, t, c.topk, c.experts);
      const std::vector<int32_t> &ids = routing.ids;
      const std::vector<float> &weights = routing.weights;
      std::vector<void *> owned;
      auto alloc = [&](size_t bytes) -> void * {
        auto p = dev.alloc(bytes);
        if (!p) {
          llvm::errs() << "mxfp4-bench: " << p.takeError().message() << "\n";
          std::exit(1);
        }
        owned.push_back(*p);
        return *p;
      };
      MoeSortBuffers b;
      b.topkIds = static_cast<int32_t *>(alloc(ids.size() * 4));
      b.topkWeights = static_cast<float *>(alloc(weights.size() * 4));
      b.sortedIds = static_cast<int32_t *>(alloc(size_t(sizes.paddedEntries) * 4));
      b.sortedWeights = static_cast<float *>(alloc(size_t(sizes.paddedEntries) * 4));
      b.expertIds = static_cast<int32_t *>(alloc(size_t(sizes.blocks) * 4));
      b.numValid = static_cast<int32_t *>(alloc(8));
      b.status = static_cast<int32_t *>(alloc(4));
      b.workspace = static_cast<int32_t *>(alloc(size_t(moeSortWorkspaceBytes(shape))));
      b.positions = static_cast<int32_t *>(alloc(ids.size() * 4));
      (void)dev.copyToDevice(const_cast<int32_t *>(b.topkIds), ids.data(), ids.size() * 4);
      (void)dev.copyToDevice(const_cast<float *>(b.topkWeights), weights.data(),
                             weights.size() * 4);
      Row r{c.model, t, c.experts, c.topk, routing.activeExperts, 0, 0, 0};
      r.us = time([&] { return moeSort(dev, nullptr, shape, b); }, &r.hostUs);
      // Read the routing once, write every output (positions included) once.
      r.bytes =
          double(ids.size() * 12 + size_t(sizes.paddedEntries) * 8 + size_t(sizes.blocks) * 4);
      const double floorUs = r.bytes / kHbmBytesPerS * 1e6;
      llvm::outs() << llvm::format("%-13s %6lld %5lld %5lld %7lld %8.1f %8.1f %9.2f %8.1f\n",
                                   r.model, (long long)t, (long long)c.experts, (long long)c.topk,
                                   (long long)r.active, r.us, r.hostUs, floorUs, r.us / floorUs);
      llvm::outs().flush();
      rows.push_back(r);
      for (void *p : owned)
        dev.free(p);
    }
  if (json.empty())
    return 0;
  std::error_code ec;
  llvm::raw_fd_ostream os(json, ec);
  if (ec) {
    llvm::errs() << "mxfp4-bench: cannot write " << json << ": " << ec.message() << "\n";
    return 1;
  }
  os << "{\"device\": \"" << dev.name() << "\", \"op\": \"moe_sort\", \"block_m\": " << blockM
     << ", \"points\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    os << llvm::format("  {\"model\": \"%s\", \"tokens\": %lld, \"experts\": %lld, \"topk\": "
                       "%lld, \"active_experts\": %lld, \"sort_us\": %.2f, \"host_us\": %.2f, "
                       "\"bytes\": %.0f, \"floor_us\": %.3f}",
                       r.model, (long long)r.tokens, (long long)r.experts, (long long)r.topk,
                       (long long)r.active, r.us, r.hostUs, r.bytes, r.bytes / kHbmBytesPerS * 1e6)
       << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  os << "]}\n";
  return 0;
}

} // namespace mxfp4::bench
