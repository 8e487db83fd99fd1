//===- TuneSession.cpp - Measuring one tuning point on the GPU ------------===//

#include "TuneSession.h"

#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

namespace mxfp4 {

TuneSession::TuneSession(Device &dev, bench::L2Flush &flush, const TuneSettings &settings)
    : dev(dev), flush(flush), settings(settings) {
  std::printf("inputs seed %llu\n", (unsigned long long)settings.seed);
}

TuneSession::~TuneSession() {
  if (deviceA)
    dev.free(deviceA);
  if (deviceC)
    dev.free(deviceC);
}

Error TuneSession::prepare(int64_t newN, int64_t newK, int64_t newM) {
  std::mt19937_64 rng(settings.seed ^ uint64_t(newN) * 0x9E3779B97F4A7C15ull ^ uint64_t(newK));
  if (newN != n || newK != k) {
    hostWeights = MxMatrix{};
    hostWeights.rows = newN;
    hostWeights.cols = newK;
    hostWeights.data.resize(size_t(newN * newK / 2));
    hostWeights.scales.resize(size_t(newN * newK / 32));
    for (uint8_t &b : hostWeights.data)
      b = uint8_t(rng());
    for (uint8_t &s : hostWeights.scales)
      s = uint8_t(116 + rng() % 11); // all below 128, as real checkpoints
    Expected<std::unique_ptr<PreparedWeight>> w =
        prepareGemmA4W4Weight(dev, hostWeights.data, hostWeights.scales, newN, newK);
    if (!w)
      return w.takeError();
    weights = std::move(*w);
    capacityM = 0; // new K: new activations
  }
  if (newM > capacityM || newN != n || newK != k) {
    if (deviceA)
      dev.free(deviceA);
    if (deviceC)
      dev.free(deviceC);
    deviceA = deviceC = nullptr;
    capacityM = std::max(newM, capacityM);
    hostA.resize(size_t(capacityM * newK));
    std::normal_distribution<float> normal;
    for (uint16_t &x : hostA)
      x = floatToBf16(normal(rng));
    Expected<void *> a = dev.alloc(hostA.size() * 2);
    if (!a)
      return a.takeError();
    deviceA = *a;
    Expected<void *> c = dev.alloc(size_t(capacityM * newN * 2));
    if (!c)
      return c.takeError();
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

Error TuneSession::run(const DenseCandidate &c) {
  GemmA4W4Options o;
  o.overrides = c.overrides;
  return gemmA4W4(dev, nullptr, deviceA, m, *weights, deviceC, o);
}

Expected<double> TuneSession::timeOnce(const DenseCandidate &c) {
  if (Error e = flush.run(salt++))
    return e;
  Expected<double> ms = dev.time([&] { return run(c); });
  if (!ms)
    return ms.takeError();
  return *ms * 1000.0;
}

Expected<double> TuneSession::check(const DenseCandidate &c) {
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

Expected<std::vector<AbRound>> TuneSession::alternate(const DenseCandidate &a,
                                                      const DenseCandidate &b) {
  std::vector<AbRound> rounds(settings.rounds);
  for (AbRound &round : rounds)
    for (unsigned i = 0; i < settings.reps; ++i)
      for (int side = 0; side < 2; ++side) {
        // ABBA: each side goes first half the time.
        const bool first = (side == 0) == (i % 2 == 0);
        Expected<double> us = timeOnce(first ? a : b);
        if (!us)
          return us.takeError();
        (first ? round.incumbent : round.candidate).push_back(*us);
      }
  return rounds;
}

static std::string describe(const DenseCandidate &c) {
  return strCat(c.family, c.isDefault ? " (default) " : " ", c.plan.gemms.front().name());
}

Expected<PointResult> TuneSession::tune(int64_t newN, int64_t newK, int64_t newM,
                                        const std::vector<DenseCandidate> &candidates) {
  if (candidates.empty() || !candidates.front().isDefault)
    return makeError("the candidates must start with the default");
  if (Error e = prepare(newN, newK, newM))
    return e;
  PointResult result;
  const DenseCandidate &def = candidates.front();
  Expected<double> defErr = check(def);
  if (!defErr)
    return makeError("the default plan ", describe(def), ": ", defErr.takeError().message());
  // Screening: a few calls each, the default's among them.
  std::vector<std::pair<double, size_t>> screened;
  double defaultScreen = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::vector<double> t;
    Error err = run(candidates[i]); // warm: loads the kernel
    for (unsigned r = 0; !err && r < settings.screenReps; ++r) {
      Expected<double> us = timeOnce(candidates[i]);
      if (!us)
        err = us.takeError();
      else
        t.push_back(*us);
    }
    if (err) {
      if (i == 0)
        return makeError("the default plan ", describe(def), ": ", err.message());
      result.log.push_back(strCat("dropped ", describe(candidates[i]), ": ", err.message()));
      continue;
    }
    if (i == 0)
      defaultScreen = median(t);
    else
      screened.push_back({median(t), i});
  }
  std::sort(screened.begin(), screened.end());
  const DenseCandidate *incumbent = &def;
  double incumbentErr = *defErr;
  unsigned met = 0;
  for (auto [us, i] : screened) {
    if (met == settings.finalists || us >= defaultScreen * (1.0 - settings.minGain))
      break;
    ++met;
    const DenseCandidate &c = candidates[i];
    Expected<std::vector<AbRound>> rounds = alternate(*incumbent, c);
    if (!rounds)
      return rounds.takeError();
    AbVerdict v = decideAb(*rounds, settings.minGain);
    result.log.push_back(
        strCat(v.replace ? "replaced by " : "kept over ", describe(c), ": ", v.why));
    if (!v.replace)
      continue;
    Expected<double> err = check(c);
    if (!err) {
      result.log.push_back(
          strCat("  but its output is wrong, dropped: ", err.takeError().message()));
      continue;
    }
    incumbent = &c;
    incumbentErr = *err;
  }
  // The default against the winner, with the same protocol, for the record.
  Expected<std::vector<AbRound>> final = alternate(def, *incumbent);
  if (!final)
    return final.takeError();
  AbVerdict v = decideAb(*final, settings.minGain);
  result.winner = *incumbent;
  result.defaultUs = v.incumbentUs;
  result.winnerUs = v.candidateUs;
  result.relL2 = incumbentErr;
  return result;
}

} // namespace mxfp4
