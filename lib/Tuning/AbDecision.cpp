//===- AbDecision.cpp - When a tuning candidate replaces the incumbent ----===//

#include "mxfp4/Tuning/AbDecision.h"
#include "mxfp4/Support/StrCat.h"

#include <algorithm>
#include <cstdio>

namespace mxfp4 {

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

/// The value at quantile q (0..1) of sorted `v`, interpolated.
static double quantile(const std::vector<double> &v, double q) {
  const double pos = q * double(v.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - double(lo)) * (v[hi] - v[lo]);
}

static double halfIqr(std::vector<double> v) {
  if (v.size() < 2)
    return 0;
  std::sort(v.begin(), v.end());
  return 0.5 * (quantile(v, 0.75) - quantile(v, 0.25));
}

double roundNoise(const AbRound &round, double floorUs) {
  return std::max({halfIqr(round.incumbent), halfIqr(round.candidate), floorUs});
}

static std::string us(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

AbVerdict decideAb(const std::vector<AbRound> &rounds, double minRelGain, double noiseFloorUs) {
  AbVerdict v;
  std::vector<double> allI, allC;
  for (const AbRound &r : rounds) {
    allI.insert(allI.end(), r.incumbent.begin(), r.incumbent.end());
    allC.insert(allC.end(), r.candidate.begin(), r.candidate.end());
  }
  v.incumbentUs = median(allI);
  v.candidateUs = median(allC);
  if (rounds.size() < 2) {
    v.why = "fewer than two rounds";
    return v;
  }
  v.minGainUs = 1e300;
  int failing = -1;
  for (size_t i = 0; i < rounds.size(); ++i) {
    const AbRound &r = rounds[i];
    if (r.incumbent.size() < 3 || r.candidate.size() < 3) {
      v.why = strCat("round ", i + 1, " has fewer than three samples a side");
      v.minGainUs = 0;
      return v;
    }
    const double mi = median(r.incumbent), mc = median(r.candidate);
    const double gain = mi - mc, noise = roundNoise(r, noiseFloorUs);
    v.minGainUs = std::min(v.minGainUs, gain);
    v.maxNoiseUs = std::max(v.maxNoiseUs, noise);
    if (failing < 0 && (gain <= noise || gain < minRelGain * mi))
      failing = int(i);
  }
  if (failing >= 0) {
    const AbRound &r = rounds[size_t(failing)];
    const double gain = median(r.incumbent) - median(r.candidate);
    v.why = strCat("round ", failing + 1, ": gain ", us(gain), " us is not above its noise ",
                   us(roundNoise(r, noiseFloorUs)), " us and ", us(minRelGain * 100), "%");
    return v;
  }
  v.replace = true;
  v.why = strCat("faster in all ", rounds.size(), " rounds by at least ", us(v.minGainUs),
                 " us (noise at most ", us(v.maxNoiseUs), " us)");
  return v;
}

} // namespace mxfp4
