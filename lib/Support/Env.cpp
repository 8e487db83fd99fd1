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

static bool flag(const char *name) {
  std::optional<std::string> v = get(name);
  return v && *v != "0" && !llvm::StringRef(*v).equals_insensitive("false");
}

std::string cacheDir() {
  if (auto v = get("MXFP4_CACHE_DIR"))
    return *v;
  if (auto v = get("XDG_CACHE_HOME"))
    return *v + "/mxfp4-jit";
  if (auto v = get("HOME"))
    return *v + "/.cache/mxfp4-jit";
  return "";
}

bool cacheDisabled() { return flag("MXFP4_DISABLE_CACHE"); }
bool assertCacheHit() { return flag("MXFP4_ASSERT_CACHE_HIT"); }
std::string dumpDir() { return get("MXFP4_DUMP_DIR").value_or(""); }
std::string archOverride() { return get("MXFP4_ARCH").value_or(""); }
std::string ptxas() { return get("MXFP4_PTXAS").value_or(""); }

} // namespace mxfp4::env
