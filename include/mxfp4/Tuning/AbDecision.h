//===- AbDecision.h - When a tuning candidate replaces the incumbent -*- C++ -*-===//
//
// Seed 003's alternating A/B protocol: the incumbent and a candidate run
// interleaved in one process on one GPU, each call after an L2 flush, in
// several rounds. The candidate replaces the incumbent only when it is
// faster by more than the measured noise in every round: one lucky round,
// a tie or a gain inside the spread keeps the incumbent.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TUNING_ABDECISION_H
#define MXFP4_TUNING_ABDECISION_H

#include <string>
#include <vector>

namespace mxfp4 {

/// One round: the times (us) of the interleaved calls of each.
struct AbRound {
  std::vector<double> incumbent, candidate;
};

struct AbVerdict {
  bool replace = false;
  /// The smallest per-round gain (incumbent median - candidate median) and
  /// the largest per-round noise, us.
  double minGainUs = 0, maxNoiseUs = 0;
  /// The medians over all rounds' samples.
  double incumbentUs = 0, candidateUs = 0;
  /// Why it was decided so, for the log.
  std::string why;
};

/// The median of `v` (the mean of the middle two for even sizes); 0 if empty.
double median(std::vector<double> v);

/// A round's noise: the larger of the two samples' half interquartile
/// range (robust to a single outlier), at least `floorUs`.
double roundNoise(const AbRound &round, double floorUs);

/// The decision over `rounds`: replace when, in every round, the
/// candidate's median is below the incumbent's by more than the round's
/// noise and by at least `minRelGain` of the incumbent's median. Fewer than
/// two rounds, or a round with fewer than three samples a side, never
/// replaces.
AbVerdict decideAb(const std::vector<AbRound> &rounds, double minRelGain = 0.01,
                   double noiseFloorUs = 0.05);

} // namespace mxfp4

#endif // MXFP4_TUNING_ABDECISION_H
