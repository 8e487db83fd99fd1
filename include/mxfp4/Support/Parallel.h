//===- Parallel.h - A tiny parallel-for over index ranges -------*- C++ -*-===//
//
// Host-side helpers (CPU quantizer, reference GEMM, layout transforms) split
// independent rows or tiles over threads. Work is handed out in chunks so a
// ragged last chunk does not stall the others.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_PARALLEL_H
#define MXFP4_SUPPORT_PARALLEL_H

#include <cstdint>
#include <functional>

namespace mxfp4 {

/// Number of worker threads host helpers use: `MXFP4_NUM_THREADS` if set,
/// else the hardware concurrency (at least 1).
unsigned hostThreadCount();

/// Calls `body(begin, end)` on disjoint chunks covering [0, n), with chunks of
/// at least `grain` indices, on up to hostThreadCount() threads. Returns when
/// every chunk is done. `body` must be safe to call concurrently.
void parallelFor(int64_t n, int64_t grain,
                 const std::function<void(int64_t begin, int64_t end)> &body);

} // namespace mxfp4

#endif // MXFP4_SUPPORT_PARALLEL_H
