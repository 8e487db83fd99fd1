//===- Candidates.h - The schedules mxfp4-tune measures ----------*- C++ -*-===//
//
// For one dense point (target, N, K, M) the tuner measures the tile
// table's plan (the incumbent) against candidates: every combination of
// the dispatch overrides (Ops/GemmA4W4Overrides.h) the target's schedule
// space has, planned by dispatch itself (so each is a plan gemmA4W4 can
// run and verifyKernelSpec accepts), deduplicated by the kernels they
// launch, then pruned with a cost model (bytes, FLOPs, waves of
// workgroups over the device's SMs) to the best few of each family
// (inline, decode, warp-split, image, persistent, stream-K, streamed,
// split M). The cost model only orders candidates; measurements decide.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TUNING_CANDIDATES_H
#define MXFP4_TUNING_CANDIDATES_H

#include "mxfp4/Ops/GemmA4W4Plan.h"

#include <string>
#include <vector>

namespace mxfp4 {

/// What the cost model knows of a device: its SMs / compute units and
/// peak rates (HBM bytes/s, the GEMM's MMA FLOP/s).
struct DeviceModel {
  int64_t computeUnits = 0;
  double bytesPerS = 0, flopsPerS = 0;
};
/// The model of a device of `arch` with `computeUnits` (0: the target's
/// usual part, TargetInfo::computeUnits).
DeviceModel deviceModel(Arch arch, int64_t computeUnits = 0);

/// The modelled time of `plan` for M rows of an N x K GEMM, us: per kernel,
/// the larger of its bytes over the bandwidth and its padded FLOPs over
/// the MMA rate, both scaled by how full its last wave of workgroups is,
/// plus a launch each.
double estimateUs(const GemmA4W4Plan &plan, int64_t n, int64_t k, int64_t m,
                  const DeviceModel &device);

struct DenseCandidate {
  /// What makes dispatch run it (the default: ignoreTunedCsv alone).
  experimental::GemmA4W4Overrides overrides;
  GemmA4W4Plan plan;
  /// inline, decode, warp-split, prequant, image, persistent, stream-k,
  /// streamed or split-m.
  std::string family;
  double estimateUs = 0;
  bool isDefault = false;
  /// The plan's kernel names joined by '+', with split M / streaming.
  std::string id() const;
};

struct CandidateLimits {
  /// Candidates kept besides the default: the best `perFamily` of each
  /// family by the model, then the best others up to `keep`.
  size_t keep = 12;
  size_t perFamily = 2;
};

/// The default (first) and the kept candidates for one point, on weights
/// whose scales are all below 128 (real checkpoints; sm_90a folds them).
Expected<std::vector<DenseCandidate>> denseCandidates(Arch arch, int64_t n, int64_t k, int64_t m,
                                                      const DeviceModel &device,
                                                      const CandidateLimits &limits = {});

/// How many distinct plans the search space holds for the point, before
/// pruning (for the tuner's summary and tests).
size_t denseSearchSpaceSize(Arch arch, int64_t n, int64_t k, int64_t m);

} // namespace mxfp4

#endif // MXFP4_TUNING_CANDIDATES_H
