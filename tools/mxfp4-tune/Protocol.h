//===- Protocol.h - mxfp4-tune's measurement protocol ------------*- C++ -*-===//
//
// One tuning point on the GPU, whatever it tunes: contenders that can run
// and check themselves; the first is the default. Each is screened (a few
// calls, each after an L2 flush); the best few that beat the default meet
// the incumbent in alternating A/B rounds (Tuning/AbDecision.h), and one
// replaces it only when it wins every round by more than the noise (and
// by more than the default measured against itself differs, the A/A
// bias) and its output passes its float64 reference check. The default
// and the winner then run one more A/B for the record.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_TUNE_PROTOCOL_H
#define MXFP4_TOOLS_TUNE_PROTOCOL_H

#include "L2Flush.h"

#include "mxfp4/Tuning/AbDecision.h"

#include <functional>
#include <string>
#include <vector>

namespace mxfp4 {

struct TuneSettings {
  unsigned screenReps = 5, finalists = 3, rounds = 3, reps = 8;
  double minGain = 0.01;
  uint64_t seed = 0x6d78667034; // "mxfp4"
};

struct Contender {
  /// For the log: its family and kernel.
  std::string label;
  /// One call (enqueued on the default stream).
  std::function<Error()> run;
  /// Runs it on poisoned outputs and compares with the float64 reference:
  /// the rel-L2 error, or an error if it is outside the tolerance.
  std::function<Expected<double>()> check;
};

struct PointResult {
  /// The index of the winner (0: the default).
  size_t winner = 0;
  /// Medians of the final A/B of the default against the winner.
  double defaultUs = 0, winnerUs = 0;
  /// The winner's rel-L2 against the reference.
  double relL2 = 0;
  /// What happened, a line per decision.
  std::vector<std::string> log;
};

class Protocol {
public:
  Protocol(Device &dev, bench::L2Flush &flush, const TuneSettings &settings)
      : dev(dev), flush(flush), settings(settings) {}

  Expected<PointResult> decide(const std::vector<Contender> &contenders);

private:
  /// One call after an L2 flush whose memset writes `salt`.
  Expected<double> timeOnce(const Contender &c, uint8_t salt);
  /// Interleaved rounds of `a` (incumbent side) and `b`, ABBA order.
  Expected<std::vector<AbRound>> alternate(const Contender &a, const Contender &b);

  Device &dev;
  bench::L2Flush &flush;
  TuneSettings settings;
};

} // namespace mxfp4

#endif // MXFP4_TOOLS_TUNE_PROTOCOL_H
