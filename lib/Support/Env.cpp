//===- Env.cpp - Every environment variable mxfp4-jit reads ---------------===//

#include "mxfp4/Support/Env.h"

#include "llvm/ADT/StringRef.h"
#include <cstdlib>

namespace mxfp4::env {

static std::optional<std::string> get(const char *name) {
  if (const char *v = std::getenv(name); v && *v)
    return std::string(v);
  return std::nullopt;
}

std::optional<int64_t> numThreads() {
  int64_t n;
  if (auto v = get("MXFP4_NUM_THREADS"); v && !llvm::StringRef(*v).getAsInteger(10, n))
    return n;
  return std::nullopt;
}

std::optional<uint64_t> testSeed() {
  uint64_t s;
  if (auto v = get("MXFP4_TEST_SEED"); v && !llvm::StringRef(*v).getAsInteger(0, s))
    return s;
  return std::nullopt;
}

} // namespace mxfp4::env
