//===- CostModel.h - mxfp4-bench --model: modelled times, no GPU -*- C++ -*-===//
#ifndef MXFP4_TOOLS_BENCH_COSTMODEL_H
#define MXFP4_TOOLS_BENCH_COSTMODEL_H

#include "mxfp4/Kernels/KernelSpec.h"

namespace mxfp4::bench {

/// Prints, for the seed's dense points on `arch`, the plan dispatch runs,
/// the tuner's cost model of it and of the same tiles without split-K,
/// the HBM floor at the part's peak bandwidth, and (gfx950) seed 000's
/// measured FlyDSL times on MI355X. Returns the exit code.
int runCostModel(Arch arch);

} // namespace mxfp4::bench

#endif // MXFP4_TOOLS_BENCH_COSTMODEL_H
