//===- TuneSession.h - Measuring one tuning point on the GPU -----*- C++ -*-===//
//
// The device side of mxfp4-tune: random weights (scales below 128, as real
// checkpoints) and activations per shape, each candidate's output checked
// against the float64 reference on sampled rows, a screening pass, then
// the alternating A/B rounds against the incumbent (Tuning/AbDecision.h).
// The inputs' seed is printed, so a point can be replayed.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_TUNE_TUNESESSION_H
#define MXFP4_TOOLS_TUNE_TUNESESSION_H

#include "L2Flush.h"

#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Tuning/AbDecision.h"
#include "mxfp4/Tuning/Candidates.h"

#include <memory>
#include <string>
#include <vector>

namespace mxfp4 {

struct TuneSettings {
  unsigned screenReps = 5, finalists = 3, rounds = 3, reps = 8;
  double minGain = 0.01;
  uint64_t seed = 0x6d78667034; // "mxfp4"
};

struct PointResult {
  DenseCandidate winner;
  /// Medians of the final A/B rounds of the default against the winner.
  double defaultUs = 0, winnerUs = 0;
  /// The winner's rel-L2 against the float64 reference (sampled rows).
  double relL2 = 0;
  /// What happened, a line per decision.
  std::vector<std::string> log;
};

class TuneSession {
public:
  TuneSession(Device &dev, bench::L2Flush &flush, const TuneSettings &settings);
  ~TuneSession();
  TuneSession(const TuneSession &) = delete;
  TuneSession &operator=(const TuneSession &) = delete;

  /// Tunes one point; `candidates` front is the default (denseCandidates).
  Expected<PointResult> tune(int64_t n, int64_t k, int64_t m,
                             const std::vector<DenseCandidate> &candidates);

private:
  Error prepare(int64_t n, int64_t k, int64_t m);
  Error run(const DenseCandidate &c);
  Expected<double> timeOnce(const DenseCandidate &c);
  /// rel-L2 of the candidate's output on the sampled rows; an error if an
  /// element is off by more than (K 2^-24 + 2^-8) of its sum of |a w|.
  Expected<double> check(const DenseCandidate &c);
  /// Interleaved rounds of `a` (incumbent side) and `b`, ABBA order.
  Expected<std::vector<AbRound>> alternate(const DenseCandidate &a, const DenseCandidate &b);

  Device &dev;
  bench::L2Flush &flush;
  TuneSettings settings;
  uint8_t salt = 0;
  int64_t n = 0, k = 0, m = 0, capacityM = 0;
  std::unique_ptr<PreparedWeight> weights;
  MxMatrix hostWeights;
  std::vector<uint16_t> hostA;
  void *deviceA = nullptr, *deviceC = nullptr;
  std::vector<int64_t> sampleRows;
  GemmResult reference;
};

} // namespace mxfp4

#endif // MXFP4_TOOLS_TUNE_TUNESESSION_H
