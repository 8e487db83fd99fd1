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

/// The on-disk kernel cache directory: MXFP4_CACHE_DIR, else
/// $XDG_CACHE_HOME/mxfp4-jit, else $HOME/.cache/mxfp4-jit ("" if none).
std::string cacheDir();

/// MXFP4_DISABLE_CACHE=1: keep kernels in memory only.
bool cacheDisabled();

/// MXFP4_CACHE_MAX_BYTES: the disk cache's size cap (default 4 GiB; 0: no
/// cap). A malformed value keeps the default.
uint64_t cacheMaxBytes();

/// MXFP4_ASSERT_CACHE_HIT=1: a kernel missing from the disk cache is an error
/// (proves an AOT cache is complete).
bool assertCacheHit();

/// MXFP4_DUMP_DIR: write every compile stage of every kernel there.
std::string dumpDir();

/// MXFP4_ARCH: the target to compile for instead of the device's (gfx950,
/// gfx1250, sm_90a), e.g. to cross-compile an AOT cache.
std::string archOverride();

/// MXFP4_LOG: "debug" writes the choices dispatch makes to stderr
/// (Support/Log.h); "" when unset.
std::string logLevel();

/// MXFP4_PTXAS: the ptxas used to turn sm_90a PTX into a cubin ("" = look in
/// PATH and /usr/local/cuda/bin; "none" = always ship PTX).
std::string ptxas();

/// MXFP4_TUNED_CSV: tuned dispatch CSVs to follow besides the shipped ones,
/// ':'-separated ("" when unset; Ops/TunedCsv.h).
std::string tunedCsv();

/// MXFP4_TUNED_CSV_WINS: which of the MXFP4_TUNED_CSV files wins where two
/// have rows for one key and M with other kernels ("": such a collision is
/// an error).
std::string tunedCsvWins();

} // namespace mxfp4::env

#endif // MXFP4_SUPPORT_ENV_H
