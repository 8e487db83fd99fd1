//===- MoeBench.h - mxfp4-bench --op=moe ---------------------------*- C++ -*-===//
//
// Times the A4W4 MoE (Ops/FusedMoe.h) on the MoE issue's configurations
// (Kimi-K3 seed 002, GPT-OSS-120B, DeepSeek-R1 FP4 at TP 8) at 1 to 4096
// tokens, uniform random routing: sorting, stage 1, stage 2 and the whole
// call, each L2 flushed (the dense benchmark's timing function), with the
// active experts, the bytes the call must move and the HBM floor.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_MXFP4_BENCH_MOEBENCH_H
#define MXFP4_TOOLS_MXFP4_BENCH_MOEBENCH_H

#include "MoeSortBench.h"

#include <string>

namespace mxfp4::bench {

/// Runs the sweep (`models`: comma-separated names, empty for all), prints
/// a table and, if `json` is not empty, writes it there. `tokens`:
/// comma-separated token counts, empty for the five.
int runMoeBench(Device &dev, const TimeFn &time, const std::string &json, const std::string &models,
                const std::string &tokens);

} // namespace mxfp4::bench

#endif // MXFP4_TOOLS_MXFP4_BENCH_MOEBENCH_H
