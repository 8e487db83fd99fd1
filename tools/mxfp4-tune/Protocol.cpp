//===- Protocol.cpp - mxfp4-tune's measurement protocol -------------------===//

#include "Protocol.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mxfp4 {

Expected<double> Protocol::timeOnce(const Contender &c, uint8_t salt) {
  if (Error e = flush.run(salt))
    return e;
  Expected<double> ms = dev.time(c.run);
  if (!ms)
    return ms.takeError();
  return *ms * 1000.0;
}

Expected<std::vector<AbRound>> Protocol::alternate(const Contender &a, const Contender &b) {
  std::vector<AbRound> rounds(settings.rounds);
  for (AbRound &round : rounds)
    for (unsigned i = 0; i < settings.reps; ++i)
      for (int side = 0; side < 2; ++side) {
        // ABBA: each side goes first half the time.
        // Both calls of a pair get the same flush.
        const bool first = (side == 0) == (i % 2 == 0);
        Expected<double> us = timeOnce(first ? a : b, uint8_t(i));
        if (!us)
          return us.takeError();
        (first ? round.incumbent : round.candidate).push_back(*us);
      }
  return rounds;
}

Expected<PointResult> Protocol::decide(const std::vector<Contender> &contenders) {
  if (contenders.empty())
    return makeError("no contenders");
  PointResult result;
  const Contender &def = contenders.front();
  Expected<double> defErr = def.check();
  if (!defErr)
    return makeError("the default ", def.label, ": ", defErr.takeError().message());
  // Screening: a few calls each, the default's among them.
  std::vector<std::pair<double, size_t>> screened;
  double defaultScreen = 0;
  for (size_t i = 0; i < contenders.size(); ++i) {
    std::vector<double> t;
    Error err = contenders[i].run(); // warm: loads the kernels
    for (unsigned r = 0; !err && r < settings.screenReps; ++r) {
      Expected<double> us = timeOnce(contenders[i], uint8_t(r));
      if (!us)
        err = us.takeError();
      else
        t.push_back(*us);
    }
    if (err) {
      if (i == 0)
        return makeError("the default ", def.label, ": ", err.message());
      result.log.push_back(strCat("dropped ", contenders[i].label, ": ", err.message()));
      continue;
    }
    if (i == 0)
      defaultScreen = median(t);
    else
      screened.push_back({median(t), i});
  }
  std::sort(screened.begin(), screened.end());
  // A/A: the default against itself, the same way. What its sides differ
  // by is a bias of the measurement, not of a kernel: no gain below it
  // counts.
  Expected<std::vector<AbRound>> same = alternate(def, def);
  if (!same)
    return same.takeError();
  double bias = 0;
  for (const AbRound &r : *same)
    bias = std::max(bias, std::abs(median(r.incumbent) - median(r.candidate)));
  const double floorUs = std::max(0.05, bias);
  char biasText[32];
  std::snprintf(biasText, sizeof biasText, "%.2f", bias);
  result.log.push_back(strCat("A/A: the default against itself differs by up to ", biasText,
                              " us a round; gains must exceed that"));
  size_t incumbent = 0;
  double incumbentErr = *defErr;
  unsigned met = 0;
  for (auto [us, i] : screened) {
    if (met == settings.finalists || us >= defaultScreen * (1.0 - settings.minGain))
      break;
    ++met;
    Expected<std::vector<AbRound>> rounds = alternate(contenders[incumbent], contenders[i]);
    if (!rounds)
      return rounds.takeError();
    AbVerdict v = decideAb(*rounds, settings.minGain, floorUs);
    result.log.push_back(
        strCat(v.replace ? "replaced by " : "kept over ", contenders[i].label, ": ", v.why));
    if (!v.replace)
      continue;
    Expected<double> err = contenders[i].check();
    if (!err) {
      result.log.push_back(
          strCat("  but its output is wrong, dropped: ", err.takeError().message()));
      continue;
    }
    incumbent = i;
    incumbentErr = *err;
  }
  result.relL2 = incumbentErr;
  if (incumbent == 0) { // no change: the A/A run's median is the record
    std::vector<double> all;
    for (const AbRound &r : *same) {
      all.insert(all.end(), r.incumbent.begin(), r.incumbent.end());
      all.insert(all.end(), r.candidate.begin(), r.candidate.end());
    }
    result.defaultUs = result.winnerUs = median(all);
    return result;
  }
  // The default against the winner, with the same protocol, for the record.
  Expected<std::vector<AbRound>> last = alternate(def, contenders[incumbent]);
  if (!last)
    return last.takeError();
  AbVerdict v = decideAb(*last, settings.minGain, floorUs);
  result.winner = incumbent;
  result.defaultUs = v.incumbentUs;
  result.winnerUs = v.candidateUs;
  return result;
}

} // namespace mxfp4
