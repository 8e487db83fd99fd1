//===- Log.h - Debug lines about the choices dispatch makes -----*- C++ -*-===//
//
// With MXFP4_LOG=debug the library says, one line per decision, which
// kernels and which path a call takes (e.g. fusedMoeA4W4's block_m, K
// split and stage-1 path), on stderr or a sink the embedding application
// installs. Off by default; a disabled call costs one relaxed load.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_LOG_H
#define MXFP4_SUPPORT_LOG_H

#include <optional>
#include <string_view>

namespace mxfp4 {

enum class LogLevel : unsigned char { Off, Debug };

/// The level a MXFP4_LOG value names: "debug" (any case); "", "off" and
/// "0" are Off; anything else is not a level.
std::optional<LogLevel> parseLogLevel(std::string_view text);

/// The current level: MXFP4_LOG when first asked (an unknown value is Off),
/// or what setLogLevel set.
LogLevel logLevel();
void setLogLevel(LogLevel level);
inline bool debugLogging() { return logLevel() == LogLevel::Debug; }

/// Where lines go: stderr ("mxfp4: <line>") unless a sink is installed.
/// Returns the previous sink (nullptr: stderr).
using LogSink = void (*)(std::string_view line);
LogSink setLogSink(LogSink sink);

/// Emits `line` when the level is Debug.
void logDebug(std::string_view line);

} // namespace mxfp4

#endif // MXFP4_SUPPORT_LOG_H
