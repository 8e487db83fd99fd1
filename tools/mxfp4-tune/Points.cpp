//===- Points.cpp - What mxfp4-tune measures on the GPU -------------------===//

#include "Points.h"

#include "mxfp4/Kernels/MoeSpecs.h"
#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

namespace mxfp4 {

Buffers::~Buffers() { clear(); }

Expected<void *> Buffers::alloc(size_t bytes) {
  Expected<void *> p = dev.alloc(std::max<size_t>(bytes, 16));
  if (p)
    owned.push_back(*p);
  return p;
}

void Buffers::clear() {
  for (void *p : owned)
    dev.free(p);
  owned.clear();
}

/// Fast random bytes (xorshift64*): weights of several GiB.
static void fillRandom(std::vector<uint8_t> &v, uint64_t state) {
  state |= 1;
  for (size_t i = 0; i < v.size(); i += 8) {
    state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
    const uint64_t x = state * 0x2545F4914F6CDD1DULL;
    for (size_t j = 0; j < 8 && i + j < v.size(); ++j)
      v[i + j] = uint8_t(x >> (8 * j));
  }
}

/// Scales 2^-8 to 2^-4: all below 128, as real checkpoints.
static void fillScales(std::vector<uint8_t> &v, std::mt19937_64 &rng) {
  for (uint8_t &s : v)
    s = uint8_t(119 + rng() % 5);
}

//===----------------------------------------------------------------------===//
// Dense
//===----------------------------------------------------------------------===//

Error DensePoints::prepare(int64_t newN, int64_t newK, int64_t newM) {
  std::mt19937_64 rng(seed ^ uint64_t(newN) * 0x9E3779B97F4A7C15ull ^ uint64_t(newK));
  if (newN != n || newK != k) {
    buffers.clear();
    deviceA = deviceC = nullptr;
    capacityM = 0;
    hostWeights = MxMatrix{};
    hostWeights.rows = newN;
    hostWeights.cols = newK;
    hostWeights.data.resize(size_t(newN * newK / 2));
    hostWeights.scales.resize(size_t(newN * newK / 32));
    fillRandom(hostWeights.data, rng());
    fillScales(hostWeights.scales, rng);
    Expected<std::unique_ptr<PreparedWeight>> w =
        prepareGemmA4W4Weight(dev, hostWeights.data, hostWeights.scales, newN, newK);
    if (!w)
      return w.takeError();
    weights = std::move(*w);
  }
  if (newM > capacityM) {
    // Larger M: new activations and output (the old ones go with the rest
    // of this shape's buffers when the shape changes).
    capacityM = newM;
    hostA.resize(size_t(capacityM * newK));
    std::normal_distribution<float> normal;
    for (uint16_t &x : hostA)
      x = floatToBf16(normal(rng));
    Expected<void *> a = buffers.alloc(hostA.size() * 2);
    if (!a)
      return a.takeError();
    Expected<void *> c = buffers.alloc(size_t(capacityM * newN * 2));
    if (!c)
      return c.takeError();
    deviceA = *a;
    deviceC = *c;
    if (Error e = dev.copyToDevice(deviceA, hostA.data(), hostA.size() * 2))
      return e;
  }
  n = newN;
  k = newK;
  m = newM;
  // The reference on a few rows: first, last, and two between.
  std::set<int64_t> rows{0, m - 1, m / 2, m / 3};
  sampleRows.assign(rows.begin(), rows.end());
  std::vector<uint16_t> a;
  for (int64_t r : sampleRows)
    a.insert(a.end(), hostA.begin() + r * k, hostA.begin() + (r + 1) * k);
  Expected<GemmResult> ref = referenceGemmQdq(a, int64_t(sampleRows.size()), k, hostWeights);
  if (!ref)
    return ref.takeError();
  reference = std::move(*ref);
  return Error::success();
}

Error DensePoints::run(const DenseCandidate &c) {
  GemmA4W4Options o;
  o.overrides = c.overrides;
  return gemmA4W4(dev, nullptr, deviceA, m, *weights, deviceC, o);
}

Expected<double> DensePoints::check(const DenseCandidate &c) {
  if (Error e = dev.fill(deviceC, 0xFF, size_t(m * n * 2))) // NaN poison
    return e;
  if (Error e = run(c))
    return e;
  if (Error e = dev.synchronize())
    return e;
  std::vector<uint16_t> row(static_cast<size_t>(n));
  std::vector<double> got;
  for (int64_t r : sampleRows) {
    if (Error e =
            dev.copyToHost(row.data(), static_cast<uint16_t *>(deviceC) + r * n, size_t(n) * 2))
      return e;
    for (uint16_t b : row)
      got.push_back(double(bf16ToFloat(b)));
  }
  ErrorStats s = compareToReference(got, reference.c, reference.absSum);
  const double tol = double(k) * std::ldexp(1.0, -24) + std::ldexp(1.0, -8);
  if (s.nonFinite || s.maxNormalized > tol)
    return makeError("wrong output: ", s.nonFinite, " non-finite, max error ", s.maxNormalized,
                     " of sum |a w| (tolerance ", tol, "), rel-L2 ", s.relL2);
  return s.relL2;
}

std::vector<Contender> DensePoints::contenders(const std::vector<DenseCandidate> &candidates) {
  std::vector<Contender> out;
  for (const DenseCandidate &c : candidates)
    out.push_back({strCat(c.family, c.isDefault ? " (default) " : " ", c.plan.gemms.front().name()),
                   [this, &c] { return run(c); }, [this, &c] { return check(c); }});
  return out;
}

//===----------------------------------------------------------------------===//
// MoE
//===----------------------------------------------------------------------===//

std::vector<int64_t> moeBlockMs(Arch arch, const MoeShape &shape, int64_t tokens) {
  const int64_t def = moeDefaultBlockM(arch, shape, tokens);
  std::vector<int64_t> out{def};
  for (int64_t bm : {16, 32, 64, 128})
    if (bm != def && bm <= targetInfo(arch).maxMoeBlockM)
      out.push_back(bm);
  return out;
}

Error MoePoints::prepare(const MoeModel &newModel, int64_t newTokens) {
  const MoeShape &s = newModel.shape;
  std::mt19937_64 rng(seed ^ uint64_t(s.experts) * 0x9E3779B97F4A7C15ull ^ uint64_t(newTokens));
  if (model != &newModel) {
    buffers.clear();
    weights.reset();
    w1.assign(size_t(s.experts * 2 * s.inter * s.hidden / 2), 0);
    s1.assign(size_t(s.experts * 2 * s.inter * s.hidden / 32), 0);
    w2.assign(size_t(s.experts * s.hidden * s.inter / 2), 0);
    s2.assign(size_t(s.experts * s.hidden * s.inter / 32), 0);
    fillRandom(w1, rng());
    fillRandom(w2, rng());
    fillScales(s1, rng);
    fillScales(s2, rng);
    Expected<std::unique_ptr<MoeWeights>> w = prepareMoeWeights(dev, s, w1, s1, w2, s2);
    if (!w)
      return w.takeError();
    weights = std::move(*w);
    model = &newModel;
  } else {
    buffers.clear();
  }
  tokens = newTokens;
  // Routing: topk distinct experts a token, weights in (0, 1].
  ids.clear();
  routing.clear();
  std::vector<int32_t> perm(static_cast<size_t>(s.experts));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t e = 0; e < s.experts; ++e)
      perm[size_t(e)] = int32_t(e);
    for (int64_t j = 0; j < s.topk; ++j) {
      std::swap(perm[size_t(j)], perm[size_t(j) + rng() % size_t(s.experts - j)]);
      ids.push_back(perm[size_t(j)]);
      routing.push_back(float(1 + rng() % 1000) / 1000.0f);
    }
  }
  hostHidden.resize(size_t(tokens * s.hidden));
  std::normal_distribution<float> normal;
  for (uint16_t &x : hostHidden)
    x = floatToBf16(normal(rng));
  for (auto [ptr, bytes] :
       {std::pair{&hidden, hostHidden.size() * 2}, std::pair{&out, hostHidden.size() * 2},
        std::pair{&deviceIds, ids.size() * 4}, std::pair{&deviceRouting, routing.size() * 4}}) {
    Expected<void *> p = buffers.alloc(bytes);
    if (!p)
      return p.takeError();
    *ptr = *p;
  }
  if (Error e = dev.copyToDevice(hidden, hostHidden.data(), hostHidden.size() * 2))
    return e;
  if (Error e = dev.copyToDevice(deviceIds, ids.data(), ids.size() * 4))
    return e;
  if (Error e = dev.copyToDevice(deviceRouting, routing.data(), routing.size() * 4))
    return e;
  // The reference on two tokens: first and last.
  std::set<int64_t> picked{0, tokens - 1};
  sampleTokens.assign(picked.begin(), picked.end());
  FusedMoeOptions o;
  o.activation = model->activation;
  const MoeHostWeights hw{s, w1, s1, w2, s2, {}, {}};
  reference = referenceMoe(hw, hostHidden, ids, routing, o, {}, true, sampleTokens);
  return Error::success();
}

Error MoePoints::run(int64_t blockM) {
  FusedMoeOptions o;
  o.activation = model->activation;
  o.blockM = blockM;
  return fusedMoeA4W4(dev, nullptr, hidden, tokens, static_cast<const int32_t *>(deviceIds),
                      static_cast<const float *>(deviceRouting), *weights, o, out);
}

Expected<double> MoePoints::check(int64_t blockM) {
  const int64_t h = model->shape.hidden;
  if (Error e = dev.fill(out, 0xFF, size_t(tokens * h * 2)))
    return e;
  if (Error e = run(blockM))
    return e;
  if (Error e = dev.synchronize())
    return e;
  std::vector<uint16_t> row(static_cast<size_t>(h));
  double xy = 0, xx = 0, yy = 0, dd = 0;
  for (size_t i = 0; i < sampleTokens.size(); ++i) {
    if (Error e = dev.copyToHost(row.data(), static_cast<uint16_t *>(out) + sampleTokens[i] * h,
                                 size_t(h) * 2))
      return e;
    for (int64_t c = 0; c < h; ++c) {
      const double x = double(bf16ToFloat(row[size_t(c)])),
                   y = reference[i * size_t(h) + size_t(c)];
      if (!std::isfinite(x))
        return makeError("wrong output: a non-finite value at token ", sampleTokens[i]);
      xy += x * y, xx += x * x, yy += y * y, dd += (x - y) * (x - y);
    }
  }
  // The GPU tests' bounds (unittests/GPU/MoeLayer.h): rel-L2 and seed
  // 003's logits_diff at most 0.01.
  const double relL2 = std::sqrt(dd / std::max(yy, 1e-300));
  const double logitsDiff = 1.0 - 2.0 * xy / std::max(xx + yy, 1e-300);
  if (relL2 > 0.01 || logitsDiff > 0.01)
    return makeError("wrong output: rel-L2 ", relL2, ", logits_diff ", logitsDiff,
                     " (at most 0.01 each)");
  return relL2;
}

std::vector<Contender> MoePoints::contenders(const std::vector<int64_t> &blockMs) {
  std::vector<Contender> out;
  for (size_t i = 0; i < blockMs.size(); ++i) {
    const int64_t bm = blockMs[i];
    out.push_back({strCat("block_m ", bm, i == 0 ? " (default)" : ""),
                   [this, bm] { return run(bm); }, [this, bm] { return check(bm); }});
  }
  return out;
}

Expected<std::vector<KernelSpec>> MoePoints::stageGemms(int64_t blockM) const {
  const MoeShape &s = model->shape;
  std::vector<KernelSpec> gemms;
  for (int stage : {1, 2}) {
    MoeKernelShape ks{
        s.experts, s.topk, s.hidden, s.inter, blockM, model->activation.kind, kDefaultScaleRounding,
        tokens,    true};
    Expected<std::vector<KernelSpec>> specs = makeMoeStageSpecs(weights->arch(), stage, ks);
    if (!specs)
      return specs.takeError();
    for (const KernelSpec &k : *specs)
      if (k.op == OpKind::MoeGemm)
        gemms.push_back(k);
  }
  if (gemms.size() != 2)
    return makeError("expected one moe_gemm per stage, got ", gemms.size());
  return gemms;
}

} // namespace mxfp4
