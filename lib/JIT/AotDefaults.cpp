//===- AotDefaults.cpp - The JIT's defaults in a runtime-only build -------===//
//
// No compiler is linked: kernels come from an AOT cache that
// mxfp4-jit-compile filled, and only from entries written by the same
// mxfp4-jit version (the kernel ABI is versioned with the project). A miss is
// an error that says how to fill the cache.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Cache/DiskCache.h"
#include "mxfp4/JIT/Jit.h"
#include "mxfp4/JIT/Version.h"
#include "mxfp4/Support/Env.h"

#include <mutex>

namespace mxfp4 {

namespace {
/// Why the AOT cache could not be opened ("" when it was).
std::string &openFailure() {
  static std::string why;
  return why;
}
std::mutex openFailureMutex;
} // namespace

Jit::Options Jit::Options::fromEnv() {
  Options o;
  o.cacheDir = env::cacheDir();
  o.assertCacheHit = env::assertCacheHit();
  o.disableDisk = true;
  std::string why;
  if (env::cacheDisabled())
    why = "MXFP4_DISABLE_CACHE is set";
  else if (o.cacheDir.empty())
    why = "no cache directory (set MXFP4_CACHE_DIR)";
  else if (llvm::Expected<std::string> fp = DiskCache::findFingerprint(o.cacheDir, compilerIdentity())) {
    o.fingerprint = std::move(*fp);
    o.disableDisk = false;
  } else {
    why = llvm::toString(fp.takeError());
  }
  std::lock_guard<std::mutex> lock(openFailureMutex);
  openFailure() = why;
  return o;
}

CompileFn defaultCompileFn() {
  return [](const KernelSpec &) -> llvm::Expected<CompiledKernel> {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(openFailureMutex);
      why = openFailure();
    }
    return llvm::createStringError(
        "not in the AOT cache" + (why.empty() ? "" : " (" + why + ")") +
        ", and this runtime-only build of mxfp4-jit cannot compile; fill the cache with "
        "`mxfp4-jit-compile --cache-dir=DIR` of mxfp4-jit " +
        version() + " for the kernels you launch");
  };
}

} // namespace mxfp4
