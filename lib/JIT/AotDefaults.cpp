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

namespace mxfp4 {

namespace {
/// The AOT cache this process serves, looked up once from the environment.
struct AotCache {
  std::string dir;
  std::string fingerprint;
  std::string unavailable; ///< why there is none ("" when there is)
};

const AotCache &aotCache() {
  static const AotCache cache = [] {
    AotCache c;
    c.dir = env::cacheDir();
    if (env::cacheDisabled())
      c.unavailable = "MXFP4_DISABLE_CACHE is set";
    else if (c.dir.empty())
      c.unavailable = "no cache directory (set MXFP4_CACHE_DIR)";
    else if (Expected<std::string> fp = DiskCache::findFingerprint(c.dir, compilerIdentity()))
      c.fingerprint = std::move(*fp);
    else
      c.unavailable = fp.takeError().message();
    return c;
  }();
  return cache;
}
} // namespace

Jit::Options Jit::Options::fromEnv() {
  const AotCache &c = aotCache();
  Options o;
  o.cacheDir = c.dir;
  o.fingerprint = c.fingerprint;
  o.disableDisk = !c.unavailable.empty();
  o.assertCacheHit = env::assertCacheHit();
  o.maxCacheBytes = env::cacheMaxBytes();
  return o;
}

CompileFn defaultCompileFn() {
  return [](const KernelSpec &) -> Expected<CompiledKernel> {
    const std::string &why = aotCache().unavailable;
    return makeError("not in the AOT cache", why.empty() ? "" : " (" + why + ")",
                     ", and this runtime-only build of mxfp4-jit cannot compile; fill the cache "
                     "with `mxfp4-jit-compile --cache-dir=DIR` of mxfp4-jit ",
                     version(), " for the kernels you launch");
  };
}

} // namespace mxfp4
