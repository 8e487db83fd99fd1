//===- MoeBench.cpp - mxfp4-bench --op=moe --------------------------------===//

#include "MoeBench.h"
#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Ops/MoeReference.h"
#include "mxfp4/Ops/MoeSort.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <random>
#include <vector>

namespace mxfp4::bench {

namespace {

constexpr int64_t kTokens[] = {1, 16, 128, 1024, 4096};
constexpr double kHbmBytesPerS = 4.25e12;

/// Random bytes, fast (xorshift64*): weights of several GiB.
std::vector<uint8_t> randomBytes(uint64_t &state, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i += 8) {
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    const uint64_t x = state * 0x2545F4914F6CDD1DULL;
    for (size_t j = 0; j < 8 && i + j < n; ++j)
      v[i + j] = uint8_t(x >> (8 * j));
  }
  return v;
}

void *allocOrDie(Device &dev, size_t bytes, std::vector<void *> &owned) {
  auto p = dev.alloc(bytes);
  if (!p) {
    llvm::errs() << "mxfp4-bench: " << p.takeError().message() << "\n";
    std::exit(1);
  }
  owned.push_back(*p);
  return *p;
}

} // namespace

int runMoeBench(Device &dev, const TimeFn &time, const std::string &json, const std::string &models,
                const std::string &tokenList) {
  std::vector<int64_t> tokens(std::begin(kTokens), std::end(kTokens));
  if (!tokenList.empty()) {
    tokens.clear();
    for (llvm::StringRef rest = tokenList; !rest.empty();) {
      auto [item, tail] = rest.split(',');
      rest = tail;
      int64_t t = 0;
      if (item.trim().getAsInteger(10, t) || t < 1) {
        llvm::errs() << "mxfp4-bench: --tokens: expected positive integers, got '" << item << "'\n";
        return 1;
      }
      tokens.push_back(t);
    }
  }
  struct Row {
    const char *model;
    int64_t tokens, active, blockM;
    double sortUs, stage1Us, stage1UnfusedUs, stage2Us, stage2AtomicUs, totalUs, totalAtomicUs,
        hostUs, bytes;
  };
  std::vector<Row> rows;
  std::mt19937_64 rng(12345);
  uint64_t state = 0x9E3779B97F4A7C15ULL;
  // stage1_unf_us: stage 1 without the fused activation epilogue
  // (FusedMoeOptions::fuseActivation off); stage2_atom_us, total_atom_us:
  // stage 2 and the layer with MoeCombine::Atomic; for comparison (x_floor
  // is total_us's).
  llvm::outs() << llvm::format("%-13s %6s %6s %4s %8s %9s %13s %9s %14s %9s %13s %8s %9s %8s\n",
                               "model", "tokens", "active", "bm", "sort_us", "stage1_us",
                               "stage1_unf_us", "stage2_us", "stage2_atom_us", "total_us",
                               "total_atom_us", "host_us", "floor_us", "x_floor");
  for (const MoeModel &c : moeModels()) {
    if (!models.empty() &&
        ("," + models + ",").find("," + std::string(c.name) + ",") == std::string::npos)
      continue;
    const MoeShape &s = c.shape;
    // Random codes, scales 2^-7: the values do not change the work.
    std::vector<uint8_t> w1 = randomBytes(state, size_t(s.experts * 2 * s.inter * s.hidden / 2));
    std::vector<uint8_t> s1(size_t(s.experts * 2 * s.inter * s.hidden / 32), 120);
    std::vector<uint8_t> w2 = randomBytes(state, size_t(s.experts * s.hidden * s.inter / 2));
    std::vector<uint8_t> s2(size_t(s.experts * s.hidden * s.inter / 32), 120);
    auto weights = prepareMoeWeights(dev, s, w1, s1, w2, s2);
    if (!weights) {
      llvm::errs() << "mxfp4-bench: " << weights.takeError().message() << "\n";
      return 1;
    }
    w1 = {}, s1 = {}, w2 = {}, s2 = {};
    const double expertBytes = double(3 * s.inter * s.hidden / 2 + 3 * s.inter * s.hidden / 32);
    for (int64_t t : tokens) {
      FusedMoeOptions o;
      o.activation = c.activation;
      const int64_t bm = moeBlockM((*weights)->arch(), s, t, o, dev.multiprocessorCount());
      const UniformRouting routing = uniformRouting(rng, t, s.topk, s.experts);
      const std::vector<int32_t> &ids = routing.ids;
      const std::vector<float> &tw = routing.weights;
      std::vector<void *> owned;
      auto alloc = [&](size_t bytes) { return allocOrDie(dev, bytes, owned); };
      std::vector<uint16_t> hiddenHost(size_t(t * s.hidden));
      for (auto &x : hiddenHost)
        x = uint16_t(0x3F80 | (rng() & 0x807F)); // +-[1, 2)
      void *hidden = alloc(hiddenHost.size() * 2), *out = alloc(hiddenHost.size() * 2);
      const MoeSortShape sortShape{t, s.topk, s.experts, bm};
      const MoeSortSizes sizes = moeSortSizes(t, s.topk, s.experts, bm);
      MoeSortBuffers b;
      b.topkIds = static_cast<int32_t *>(alloc(ids.size() * 4));
      b.topkWeights = static_cast<float *>(alloc(tw.size() * 4));
      b.sortedIds = static_cast<int32_t *>(alloc(size_t(sizes.paddedEntries) * 4));
      b.sortedWeights = static_cast<float *>(alloc(size_t(sizes.paddedEntries) * 4));
      b.expertIds = static_cast<int32_t *>(alloc(size_t(sizes.blocks) * 4));
      b.numValid = static_cast<int32_t *>(alloc(8));
      b.status = static_cast<int32_t *>(alloc(4));
      b.workspace = static_cast<int32_t *>(alloc(size_t(moeSortWorkspaceBytes(sortShape))));
      b.positions = static_cast<int32_t *>(alloc(ids.size() * 4));
      const int64_t maxRows = moeMaxRows(s, t, bm), ip = moePaddedRow((*weights)->arch(), s.inter);
      void *codes = alloc(size_t(maxRows * ip / 2)), *scales = alloc(size_t(maxRows * ip / 32));
      (void)dev.copyToDevice(hidden, hiddenHost.data(), hiddenHost.size() * 2);
      (void)dev.copyToDevice(const_cast<int32_t *>(b.topkIds), ids.data(), ids.size() * 4);
      (void)dev.copyToDevice(const_cast<float *>(b.topkWeights), tw.data(), tw.size() * 4);
      MoeSorted sorted{b.sortedIds, b.sortedWeights, b.expertIds, b.numValid, bm};
      Row r{c.name, t, routing.activeExperts, bm, 0, 0, 0, 0, 0, 0, 0, 0, 0};
      FusedMoeOptions atomic = o;
      atomic.combine = MoeCombine::Atomic;
      r.totalUs = time(
          [&] {
            return fusedMoeA4W4(dev, nullptr, hidden, t, b.topkIds, b.topkWeights, **weights, o,
                                out);
          },
          &r.hostUs);
      r.totalAtomicUs = time(
          [&] {
            return fusedMoeA4W4(dev, nullptr, hidden, t, b.topkIds, b.topkWeights, **weights,
                                atomic, out);
          },
          nullptr);
      r.sortUs = time([&] { return moeSort(dev, nullptr, sortShape, b); }, nullptr);
      r.stage1Us = time(
          [&] { return moeStage1(dev, nullptr, hidden, t, sorted, **weights, o, codes, scales); },
          nullptr);
      FusedMoeOptions unfused = o;
      unfused.fuseActivation = false;
      r.stage1UnfusedUs = time(
          [&] {
            return moeStage1(dev, nullptr, hidden, t, sorted, **weights, unfused, codes, scales);
          },
          nullptr);
      r.stage2Us = time(
          [&] {
            return moeStage2(dev, nullptr, codes, scales, t, sorted, b.positions, b.topkWeights,
                             **weights, o, out);
          },
          nullptr);
      r.stage2AtomicUs = time(
          [&] {
            return moeStage2(dev, nullptr, codes, scales, t, sorted, b.positions, b.topkWeights,
                             **weights, atomic, out);
          },
          nullptr);
      // The weights of the active experts, the hidden rows in, out.
      r.bytes = double(r.active) * expertBytes + double(t * s.hidden * 4);
      const double floorUs = r.bytes / kHbmBytesPerS * 1e6;
      llvm::outs() << llvm::format(
          "%-13s %6lld %6lld %4lld %8.1f %9.1f %13.1f %9.1f %14.1f %9.1f %13.1f %8.1f %9.1f "
          "%8.2f\n",
          r.model, (long long)t, (long long)r.active, (long long)bm, r.sortUs, r.stage1Us,
          r.stage1UnfusedUs, r.stage2Us, r.stage2AtomicUs, r.totalUs, r.totalAtomicUs, r.hostUs,
          floorUs, r.totalUs / floorUs);
      llvm::outs().flush();
      rows.push_back(r);
      (void)dev.synchronize();
      for (void *p : owned)
        dev.free(p);
    }
  }
  if (json.empty())
    return 0;
  std::error_code ec;
  llvm::raw_fd_ostream os(json, ec);
  if (ec) {
    llvm::errs() << "mxfp4-bench: cannot write " << json << ": " << ec.message() << "\n";
    return 1;
  }
  os << "{\"device\": \"" << dev.name() << "\", \"op\": \"moe\", \"points\": [\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &r = rows[i];
    os << llvm::format("  {\"model\": \"%s\", \"tokens\": %lld, \"active_experts\": %lld, "
                       "\"block_m\": %lld, \"sort_us\": %.2f, \"stage1_us\": %.2f, "
                       "\"stage1_unfused_us\": %.2f, \"stage2_us\": %.2f, "
                       "\"stage2_atomic_us\": %.2f, \"total_us\": %.2f, "
                       "\"total_atomic_us\": %.2f, \"host_us\": %.2f, \"bytes\": %.0f, "
                       "\"floor_us\": %.3f}",
                       r.model, (long long)r.tokens, (long long)r.active, (long long)r.blockM,
                       r.sortUs, r.stage1Us, r.stage1UnfusedUs, r.stage2Us, r.stage2AtomicUs,
                       r.totalUs, r.totalAtomicUs, r.hostUs, r.bytes, r.bytes / kHbmBytesPerS * 1e6)
       << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  os << "]}\n";
  return 0;
}

} // namespace mxfp4::bench
