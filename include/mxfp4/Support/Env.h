//===- Env.h - Every environment variable mxfp4-jit reads -------*- C++ -*-===//
//
// The one place that reads MXFP4_* variables; docs/EnvVars.md mirrors it.
// Nothing else in the project calls getenv.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_ENV_H
#define MXFP4_SUPPORT_ENV_H

#include <cstdint>
#include <optional>
#include <string>

namespace mxfp4::env {

/// MXFP4_NUM_THREADS: threads for host-side helpers (quantizer, reference GEMM).
std::optional<int64_t> numThreads();

/// MXFP4_TEST_SEED: replays a randomized test with the seed it printed.
std::optional<uint64_t> testSeed();

} // namespace mxfp4::env

#endif // MXFP4_SUPPORT_ENV_H
