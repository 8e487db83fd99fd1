//===- Env.cpp - Every environment variable mxfp4-jit reads ---------------===//

#include "mxfp4/Support/Env.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace mxfp4::env {

static std::optional<std::string> get(const char *name) {
  if (const char *v = std::getenv(name); v && *v)
    return std::string(v);
  return std::nullopt;
}

/// The whole of `text` as an unsigned integer (decimal, or 0x hex when base
/// is 0); std::nullopt for anything else.
static std::optional<uint64_t> parseUnsigned(const std::string &text, int base) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])))
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, base);
  if (errno != 0 || *end != '\0')
    return std::nullopt;
  return uint64_t(v);
}

std::optional<int64_t> numThreads() {
  if (auto v = get("MXFP4_NUM_THREADS"))
    if (std::optional<uint64_t> n = parseUnsigned(*v, 10); n && *n <= uint64_t(INT64_MAX))
      return int64_t(*n);
  return std::nullopt;
}

uint64_t cacheMaxBytes() {
  if (auto v = get("MXFP4_CACHE_MAX_BYTES"))
    if (std::optional<uint64_t> n = parseUnsigned(*v, 10))
      return *n;
  return uint64_t(4) << 30;
}

std::optional<uint64_t> testSeed() {
  if (auto v = get("MXFP4_TEST_SEED"))
    return parseUnsigned(*v, 0);
  return std::nullopt;
}

static bool flag(const char *name) {
  std::optional<std::string> v = get(name);
  if (!v)
    return false;
  std::string lower;
  for (char c : *v)
    lower.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  return lower != "0" && lower != "false";
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
std::string logLevel() { return get("MXFP4_LOG").value_or(""); }
std::string tunedCsv() { return get("MXFP4_TUNED_CSV").value_or(""); }
std::string tunedCsvWins() { return get("MXFP4_TUNED_CSV_WINS").value_or(""); }

} // namespace mxfp4::env
