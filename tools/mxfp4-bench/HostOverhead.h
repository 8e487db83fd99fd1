//===- HostOverhead.h - The library's own host time per call -----*- C++ -*-===//
//
// An eager call's host time is the library's work (dispatch, scratch,
// argument packing) plus the driver's launches. To tell them apart the
// benchmark repeats the call on weights prepared on a LaunchlessDevice: a
// view of the real device that forwards everything but launches, which it
// counts and drops. What that call costs is the library's share.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_BENCH_HOSTOVERHEAD_H
#define MXFP4_TOOLS_BENCH_HOSTOVERHEAD_H

#include "mxfp4/Ops/GemmA4W4.h"

#include <cstdint>
#include <vector>

namespace mxfp4::bench {

struct LibraryHostTime {
  double us = 0;        ///< median host microseconds of one call
  int64_t launches = 0; ///< kernels one call launches
};

/// The median host time of `reps` gemmA4W4 calls of M rows of `a` (device
/// memory of `dev`) into `out`, with the weights `wFp4`/`wScale` prepared
/// on a launch-free view of `dev`: nothing runs on the GPU.
Expected<LibraryHostTime> libraryHostTime(Device &dev, const std::vector<uint8_t> &wFp4,
                                          const std::vector<uint8_t> &wScale, int64_t n, int64_t k,
                                          int64_t m, void *a, void *out, unsigned reps);

} // namespace mxfp4::bench

#endif // MXFP4_TOOLS_BENCH_HOSTOVERHEAD_H
