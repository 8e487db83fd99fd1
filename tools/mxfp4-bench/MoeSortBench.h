//===- MoeSortBench.h - mxfp4-bench --op=moe_sort ------------------*- C++ -*-===//
//
// Times moeSort on the MoE configurations of the MoE issue (Kimi-K3 seed
// 002, GPT-OSS-120B, DeepSeek-R1 FP4) at 1 to 4096 tokens, with the timing
// function of the dense benchmark (L2 flushed, event medians, host time).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_MXFP4_BENCH_MOESORTBENCH_H
#define MXFP4_TOOLS_MXFP4_BENCH_MOESORTBENCH_H

#include "mxfp4/Runtime/Device.h"

#include <functional>
#include <random>
#include <string>
#include <vector>

namespace mxfp4::bench {

/// Device microseconds of `launch` (median), host microseconds into `hostUs`.
using TimeFn = std::function<double(const std::function<Error()> &launch, double *hostUs)>;

/// A uniform routing: `topk` distinct experts per token, weights 1/topk.
struct UniformRouting {
  std::vector<int32_t> ids;
  std::vector<float> weights;
  int64_t activeExperts = 0; ///< experts that received at least one entry
};
UniformRouting uniformRouting(std::mt19937_64 &rng, int64_t tokens, int64_t topk, int64_t experts);

/// Runs the sweep, prints a table and, if `json` is not empty, writes it there.
int runMoeSortBench(Device &dev, const TimeFn &time, const std::string &json, int64_t blockM);

} // namespace mxfp4::bench

#endif // MXFP4_TOOLS_MXFP4_BENCH_MOESORTBENCH_H
