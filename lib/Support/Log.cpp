//===- Log.cpp - Debug lines about the choices dispatch makes -------------===//

#include "mxfp4/Support/Log.h"
#include "mxfp4/Support/Env.h"

#include <atomic>
#include <cctype>
#include <cstdio>
#include <string>

namespace mxfp4 {

namespace {
// -1: not read from the environment yet.
std::atomic<int> level{-1};
std::atomic<LogSink> sink{nullptr};
} // namespace

std::optional<LogLevel> parseLogLevel(std::string_view text) {
  std::string lower;
  for (char c : text)
    lower += char(std::tolower(static_cast<unsigned char>(c)));
  if (lower.empty() || lower == "off" || lower == "0")
    return LogLevel::Off;
  if (lower == "debug")
    return LogLevel::Debug;
  return std::nullopt;
}

LogLevel logLevel() {
  int l = level.load(std::memory_order_relaxed);
  if (l < 0) {
    l = int(parseLogLevel(env::logLevel()).value_or(LogLevel::Off));
    int unset = -1;
    // A concurrent setLogLevel wins over the environment.
    if (!level.compare_exchange_strong(unset, l, std::memory_order_relaxed))
      l = unset;
  }
  return LogLevel(l);
}

void setLogLevel(LogLevel l) { level.store(int(l), std::memory_order_relaxed); }

LogSink setLogSink(LogSink s) { return sink.exchange(s); }

void logDebug(std::string_view line) {
  if (!debugLogging())
    return;
  if (LogSink s = sink.load())
    return s(line);
  std::fprintf(stderr, "mxfp4: %.*s\n", int(line.size()), line.data());
}

} // namespace mxfp4
