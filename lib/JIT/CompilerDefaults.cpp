//===- CompilerDefaults.cpp - The JIT's defaults with the compiler linked -===//
//
// Misses compile in process; the fingerprint is the real compiler's.
// lib/JIT/AotDefaults.cpp is the runtime-only counterpart.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Support/Env.h"
#include "mxfp4/Support/LLVMError.h"
#include "mxfp4/Target/Compile.h"

namespace mxfp4 {

Jit::Options Jit::Options::fromEnv() {
  Options o;
  o.cacheDir = env::cacheDir();
  o.disableDisk = env::cacheDisabled() || o.cacheDir.empty();
  o.assertCacheHit = env::assertCacheHit();
  o.maxCacheBytes = env::cacheMaxBytes();
  o.fingerprint = compilerFingerprint();
  return o;
}

CompileFn defaultCompileFn() {
  return [](const KernelSpec &spec) { return fromLLVM(compileKernel(spec)); };
}

} // namespace mxfp4
