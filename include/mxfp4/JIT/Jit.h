//===- Jit.h - Spec to code object: memory, disk, compile --------*- C++ -*-===//
//
// The JIT an engine embeds. get(spec) returns the code object from the
// in-process table, else from the disk cache, else compiles it (in process)
// and stores it. Each kernel is compiled at most once per process even when
// many threads ask at once; the others wait for that compile. Corrupt disk
// entries are reported once and rebuilt; an unwritable cache directory
// degrades to memory only with one warning (each kernel is still tried, and
// counted in storeFailures when it cannot be stored). A compile that
// throws is an error for every caller waiting on it, and is retried by the
// next call.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_JIT_JIT_H
#define MXFP4_JIT_JIT_H

#include "mxfp4/JIT/CompiledKernel.h"

#include "mxfp4/Support/Error.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mxfp4 {

class DiskCache;

/// Compiles a spec to a code object (lib/Target provides the real one).
using CompileFn = std::function<Expected<CompiledKernel>(const KernelSpec &)>;

/// What a Jit without an explicit CompileFn uses: the in-process compiler
/// (lib/JIT/CompilerDefaults.cpp), or in a runtime-only build an error that
/// says the kernel is missing from the AOT cache (lib/JIT/AotDefaults.cpp).
CompileFn defaultCompileFn();

class Jit {
public:
  struct Options {
    std::string cacheDir; ///< "" or disableDisk: memory only
    bool disableDisk = false;
    bool assertCacheHit = false; ///< a disk miss is an error
    std::string fingerprint;     ///< compiler identity, part of every key
    /// The disk cache's size cap (DiskCache::collect, run once per Jit at
    /// its first store); 0: no cap.
    uint64_t maxCacheBytes = 0;
    /// Options from MXFP4_CACHE_DIR / MXFP4_DISABLE_CACHE / MXFP4_ASSERT_CACHE_HIT
    /// and the compiler's fingerprint (in a runtime-only build: the fingerprint
    /// of the AOT cache entries this build can serve).
    static Options fromEnv();
  };

  /// Where a kernel came from on this call.
  enum class Source { Memory, Disk, Compiled };

  struct Stats {
    std::atomic<uint64_t> memoryHits{0}, diskHits{0}, compiles{0}, corruptEntries{0};
    /// Compiled kernels the disk cache could not keep (notStored() says why).
    std::atomic<uint64_t> storeFailures{0};
  };

  /// A JIT using `compile` for misses (the real compiler by default).
  explicit Jit(Options options, CompileFn compile = {});
  ~Jit();

  /// The process-wide JIT configured from the environment.
  static Jit &global();

  /// The code object for `spec`. `source`, if given, says where it came from.
  Expected<std::shared_ptr<const CompiledKernel>> get(const KernelSpec &spec,
                                                      Source *source = nullptr);

  const Stats &stats() const { return counters; }
  /// "<kernel>: <why>" for each compiled kernel that could not be stored.
  std::vector<std::string> notStored() const;
  const Options &options() const { return opts; }

private:
  struct Impl;
  struct Outcome;
  /// Disk, else compile (and store): what get() does for a kernel it does
  /// not have yet. `from` says which.
  Outcome resolve(const KernelSpec &spec, const std::string &name, Source &from);
  void store(const std::string &name, const CompiledKernel &kernel);
  Options opts;
  CompileFn compile;
  Stats counters;
  std::unique_ptr<Impl> impl;
};

} // namespace mxfp4

#endif // MXFP4_JIT_JIT_H
