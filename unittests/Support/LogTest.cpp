//===- LogTest.cpp - Debug lines ------------------------------------------===//

#include "mxfp4/Support/Log.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace mxfp4;

namespace {

std::vector<std::string> &captured() {
  static std::vector<std::string> lines;
  return lines;
}
void capture(std::string_view line) { captured().emplace_back(line); }

TEST(Log, ParsesTheLevels) {
  EXPECT_EQ(parseLogLevel("debug"), LogLevel::Debug);
  EXPECT_EQ(parseLogLevel("DEBUG"), LogLevel::Debug);
  EXPECT_EQ(parseLogLevel(""), LogLevel::Off);
  EXPECT_EQ(parseLogLevel("off"), LogLevel::Off);
  EXPECT_EQ(parseLogLevel("0"), LogLevel::Off);
  EXPECT_EQ(parseLogLevel("verbose"), std::nullopt);
}

TEST(Log, DebugLinesReachTheSinkOnlyAtDebug) {
  const LogLevel before = logLevel();
  LogSink previous = setLogSink(capture);
  captured().clear();
  setLogLevel(LogLevel::Off);
  EXPECT_FALSE(debugLogging());
  logDebug("hidden");
  setLogLevel(LogLevel::Debug);
  EXPECT_TRUE(debugLogging());
  logDebug("shown");
  EXPECT_EQ(captured(), std::vector<std::string>{"shown"});
  EXPECT_EQ(setLogSink(previous), &capture);
  setLogLevel(before);
}

} // namespace
