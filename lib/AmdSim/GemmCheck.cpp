//===- GemmCheck.cpp - A dense GEMM run in the simulator, checked ---------===//

#include "mxfp4/AmdSim/GemmCheck.h"

#include "mxfp4/AmdSim/SimDevice.h"
#include "mxfp4/Format/Quantize.h"
#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Support/BF16.h"

#include <cmath>
#include <cstring>
#include <random>

namespace mxfp4::amdsim {
namespace {

/// Device memory freed on scope exit.
class Buffer {
public:
  Buffer(Device &dev, size_t bytes) : dev(dev) {
    Expected<void *> p = dev.alloc(bytes);
    if (p)
      ptr = *p;
    else
      failure = p.takeError().message();
  }
  ~Buffer() { dev.free(ptr); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  void *get() const { return ptr; }
  Error status() const { return failure.empty() ? Error::success() : Error(failure); }

private:
  Device &dev;
  void *ptr = nullptr;
  std::string failure;
};

/// N(0,1) activations with outlier channels, and in row 0 the blocks that
/// stress a quantizer: zeros, exact +-6, ties between E2M1 codes, huge and
/// tiny magnitudes.
std::vector<uint16_t> activations(std::mt19937_64 &rng, int64_t m, int64_t k) {
  std::normal_distribution<float> normal;
  std::vector<uint16_t> a(size_t(m * k));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) {
      float x = normal(rng);
      if (c % 61 == 7)
        x *= 48.0f;
      a[size_t(r * k + c)] = floatToBf16(x);
    }
  auto block = [&](int64_t b, auto value) {
    if ((b + 1) * 32 <= k)
      for (int64_t i = 0; i < 32; ++i)
        a[size_t(b * 32 + i)] = floatToBf16(value(float(i)));
  };
  block(0, [](float) { return 0.0f; });
  block(1, [](float i) { return std::fmod(i, 2.0f) ? 6.0f : -6.0f; });
  block(2, [](float i) { return 0.25f * (i - 16.0f); }); // every tie of the E2M1 grid
  block(3, [](float i) { return 1e30f * (i - 16.0f); });
  block(4, [](float i) { return 3e-30f * (i - 16.0f); });
  return a;
}

struct Weights {
  std::vector<uint8_t> codes, scales;
};

Weights randomWeights(std::mt19937_64 &rng, int64_t n, int64_t k) {
  Weights w{std::vector<uint8_t>(size_t(n * k / 2)), std::vector<uint8_t>(size_t(n * k / 32))};
  for (uint8_t &b : w.codes)
    b = uint8_t(rng());
  for (uint8_t &s : w.scales)
    s = uint8_t(122 + rng() % 9);
  return w;
}

/// W[j][j] = 1 (E2M1 code 2, scale 2^0), zeros elsewhere.
Weights identityWeights(int64_t n, int64_t k) {
  Weights w{std::vector<uint8_t>(size_t(n * k / 2), 0),
            std::vector<uint8_t>(size_t(n * k / 32), 127)};
  for (int64_t j = 0; j < std::min(n, k); ++j)
    w.codes[size_t(j * k / 2 + j / 2)] = uint8_t(j % 2 ? 0x20 : 0x02);
  return w;
}

/// C = gemmA4W4(A, W) for M rows into a buffer of M + 1 rows poisoned with
/// 0xFF; returns the M + 1 rows. With `repeatable`, runs it a second time
/// on the same weights (their split-K counters as the first left them,
/// the workgroups in another order) and says whether the bits were the same.
Expected<std::vector<uint16_t>> runGemm(SimDevice &dev, const GemmCheckOptions &o,
                                        const std::vector<uint16_t> &a, const Weights &w, int64_t n,
                                        std::string &kernel, bool *repeatable = nullptr) {
  Expected<std::unique_ptr<PreparedWeight>> prepared =
      prepareGemmA4W4Weight(dev, w.codes, w.scales, n, o.k);
  if (!prepared)
    return prepared.takeError();
  Buffer da(dev, a.size() * 2), dc(dev, size_t((o.m + 1) * n * 2));
  if (Error e = da.status())
    return e;
  if (Error e = dc.status())
    return e;
  if (Error e = dev.copyToDevice(da.get(), a.data(), a.size() * 2))
    return e;
  if (Error e = dev.fill(dc.get(), 0xFF, size_t((o.m + 1) * n * 2)))
    return e;
  GemmA4W4Options options;
  options.rounding = o.rounding;
  options.overrides.bm = o.bm;
  options.overrides.bk = o.bk;
  options.overrides.splitK = o.splitK;
  if (Error e = gemmA4W4(dev, nullptr, da.get(), o.m, **prepared, dc.get(), options))
    return e;
  kernel = dev.lastKernel();
  std::vector<uint16_t> c(size_t((o.m + 1) * n));
  if (Error e = dev.copyToHost(c.data(), dc.get(), c.size() * 2))
    return e;
  if (repeatable) {
    if (Error e = dev.fill(dc.get(), 0xFF, c.size() * 2))
      return e;
    if (Error e = gemmA4W4(dev, nullptr, da.get(), o.m, **prepared, dc.get(), options))
      return e;
    std::vector<uint16_t> again(c.size());
    if (Error e = dev.copyToHost(again.data(), dc.get(), again.size() * 2))
      return e;
    *repeatable = again == c;
  }
  return c;
}

} // namespace

Expected<GemmCheckResult> checkGemmA4W4(const GemmCheckOptions &o) {
  Expected<std::unique_ptr<SimDevice>> dev = SimDevice::create(o.arch);
  if (!dev)
    return dev.takeError();
  if (o.m < 1 || o.n < 1 || o.k < 32 || o.k % 32 != 0)
    return makeError("amdgpu-sim: M and N must be >= 1 and K a positive multiple of 32, got M = ",
                     o.m, ", N = ", o.n, ", K = ", o.k);
  std::mt19937_64 rng(o.seed);
  GemmCheckResult result;
  // Workgroups in a random order, another each launch.
  (*dev)->setWorkgroupOrderSeed(o.seed | 1);

  // Numerics against the float64 QDQ reference.
  const Weights w = randomWeights(rng, o.n, o.k);
  const std::vector<uint16_t> a = activations(rng, o.m, o.k);
  Expected<std::vector<uint16_t>> c =
      runGemm(**dev, o, a, w, o.n, result.kernel, &result.repeatable);
  if (!c)
    return c.takeError();
  for (int64_t j = 0; j < o.n; ++j)
    if ((*c)[size_t(o.m * o.n + j)] != 0xFFFF)
      result.guardIntact = false;
  MxMatrix wm;
  wm.rows = o.n;
  wm.cols = o.k;
  wm.data = w.codes;
  wm.scales = w.scales;
  Expected<GemmResult> ref = referenceGemmQdq(a, o.m, o.k, wm, o.rounding);
  if (!ref)
    return ref.takeError();
  const double tolerance = double(o.k) * std::ldexp(1.0, -24) + std::ldexp(1.0, -8);
  std::vector<double> got(size_t(o.m * o.n));
  for (size_t i = 0; i < got.size(); ++i) {
    got[i] = bf16ToFloat((*c)[i]);
    const double want = ref->c[i];
    const bool bad = std::isnan(want) ? !std::isnan(got[i])
                                      : !std::isfinite(got[i]) ||
                                            std::fabs(got[i] - want) > tolerance * ref->absSum[i];
    if (bad && result.outOfTolerance++ == 0)
      result.firstFailure =
          strCat("C[", int64_t(i) / o.n, "][", int64_t(i) % o.n, "] = ", std::to_string(got[i]),
                 ", reference ", std::to_string(want), ", bound ",
                 std::to_string(tolerance * ref->absSum[i]));
  }
  ErrorStats stats = compareToReference(got, ref->c, ref->absSum);
  // Row 0's huge blocks would dominate a relative L2: report the other rows'.
  if (o.m > 1) {
    const size_t skip = size_t(o.n);
    result.relL2 = compareToReference(Span<double>(got.data() + skip, got.size() - skip),
                                      Span<double>(ref->c.data() + skip, ref->c.size() - skip))
                       .relL2;
  } else {
    result.relL2 = stats.relL2;
  }
  result.maxNormalized = stats.maxNormalized;

  // The inline quantizer, bit for bit: identity weights over the first
  // columns of K make C the dequantized activations.
  const int64_t columns = std::min<int64_t>(o.k, 512);
  GemmCheckOptions io = o;
  io.n = columns;
  std::string identityKernel;
  Expected<std::vector<uint16_t>> ci =
      runGemm(**dev, io, a, identityWeights(columns, o.k), columns, identityKernel);
  if (!ci)
    return ci.takeError();
  Expected<MxMatrix> q = quantizeBf16(a, o.m, o.k, o.rounding);
  if (!q)
    return q.takeError();
  result.quantizedColumns = columns;
  for (int64_t r = 0; r < o.m; ++r)
    for (int64_t j = 0; j < columns; ++j) {
      const uint16_t want = floatToBf16(float(q->at(r, j)));
      const uint16_t have = (*ci)[size_t(r * columns + j)];
      // A sum cannot keep the sign of a zero code: -0 and +0 compare equal.
      const bool zeros = ((want | have) & 0x7FFF) == 0;
      if (want != have && !zeros && result.quantizedMismatches++ == 0)
        result.firstFailure +=
            strCat(result.firstFailure.empty() ? "" : "; ", "dequantized activation [", r, "][", j,
                   "] = ", std::to_string(bf16ToFloat(have)), ", CPU quantizer ",
                   std::to_string(bf16ToFloat(want)));
    }
  result.stats = (*dev)->totals();
  if ((*dev)->liveAllocations() != 0)
    return makeError("amdgpu-sim: ", (*dev)->liveAllocations(),
                     " device buffers were not freed by the API");
  return result;
}

} // namespace mxfp4::amdsim
