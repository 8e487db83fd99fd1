//===- TunedCsvTest.cpp - Tuned CSV rows: format, checks, dispatch --------===//
//
// The CSV round trip, every malformed-row error with its line, the
// collision guard, and dispatch following a row (bucket lookup by padded
// M, the device size, the caller's rounding and the weights' folding) or
// the tile table where no row applies.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Ops/TunedCsv.h"
#include "TestUtil/Expected.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"

#include "gtest/gtest.h"

#include <set>

using namespace mxfp4;

namespace {

constexpr int64_t kN = 8448, kK = 7168;

/// The dense row that runs what `overrides` force at M = m (the tuner's
/// way of writing a winner).
TunedRow forcedRow(Arch arch, int64_t m, const experimental::GemmA4W4Overrides &overrides,
                   int64_t cu = 0, int64_t rowM = 0) {
  GemmA4W4Options o;
  o.overrides = overrides;
  Expected<GemmA4W4Plan> plan = planGemmA4W4(nullptr, {arch, kN, kK, true}, m, o);
  if (!plan) {
    ADD_FAILURE() << plan.takeError().message();
    return {};
  }
  TunedKey key;
  key.arch = arch;
  key.computeUnits = cu;
  key.n = kN;
  key.k = kK;
  TunedRow row = tunedRowFromPlan(*plan, key, rowM ? rowM : m);
  row.us = 12.5;
  row.error = 0.0016;
  row.tuner = "test";
  row.origin = "test";
  return row;
}

std::vector<std::string> names(const GemmA4W4Plan &plan) {
  std::vector<std::string> out;
  for (const KernelSpec &s : plan.kernels())
    out.push_back(s.name());
  return out;
}

std::string header() { return std::string(tunedCsvHeader()) + "\n"; }

TEST(TunedCsv, RoundTripsEveryPresetRow) {
  for (Arch arch : {Arch::GFX950, Arch::GFX1250, Arch::SM90A})
    for (std::string_view preset : {"seed-dense", "model-dense"}) {
      Expected<std::vector<TunedRow>> rows = presetTunedRows(preset, arch);
      ASSERT_OK(rows);
      const std::string text = formatTunedCsv(*rows);
      Expected<std::vector<TunedRow>> back = parseTunedCsv(text, "preset.csv");
      ASSERT_OK(back);
      ASSERT_EQ(back->size(), rows->size());
      EXPECT_EQ(formatTunedCsv(*back), text);
      EXPECT_EQ((*back)[1].origin, "preset.csv:3");
    }
  // Columns in another order, extra columns, comments and CRLF.
  TunedRow row = forcedRow(Arch::SM90A, 16, {});
  const std::string text = "# tuned by hand\r\nextra,tuner,err,us,kernels,stream_wgs,split_m,"
                           "activation,topk,experts,k,n,m,op,cu_num,target\r\nx,me,0.5,3.25," +
                           row.kernelNames() +
                           ",0,0,none,0,0,7168,8448,16,gemm_a4w4,132,sm_90a\r\n";
  Expected<std::vector<TunedRow>> parsed = parseTunedCsv(text, "odd.csv");
  ASSERT_OK(parsed);
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].key.computeUnits, 132);
  EXPECT_EQ((*parsed)[0].us, 3.25);
  EXPECT_EQ((*parsed)[0].tuner, "me");
  EXPECT_EQ((*parsed)[0].kernelNames(), row.kernelNames());
}

TEST(TunedCsv, MalformedRowsNameTheirLine) {
  const std::string good = formatTunedRow(forcedRow(Arch::SM90A, 16, {}));
  auto withField = [&](size_t index, std::string_view value) {
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t end; (end = good.find(',', start)) != std::string::npos; start = end + 1)
      f.push_back(good.substr(start, end - start));
    f.push_back(good.substr(start));
    f[index] = std::string(value);
    std::string line;
    for (const std::string &x : f)
      line += (line.empty() ? "" : ",") + x;
    return header() + "\n" + line + "\n";
  };
  EXPECT_ERROR_CONTAINS(parseTunedCsv("", "a.csv"), "a.csv: no header line");
  EXPECT_ERROR_CONTAINS(parseTunedCsv("target,cu_num,op\n", "a.csv"),
                        "a.csv:1: the header has no column 'm'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(header() + good + ",x\n", "a.csv"),
                        "a.csv:2: 16 fields, the header has 15");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(0, "sm_100x"), "a.csv"),
                        "a.csv:3: unknown target 'sm_100x'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(1, "-1"), "a.csv"), "a.csv:3: cu_num '-1'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(2, "gemm"), "a.csv"), "unknown op 'gemm'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(3, "1e3"), "a.csv"), "m '1e3' is not an integer");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(3, "99999999999"), "a.csv"), "m '99999999999'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(3, "0"), "a.csv"), "a row serves M >= 1");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(4, "4096"), "a.csv"),
                        "is for N = 8448, K = 7168, the row for N = 4096");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(8, "gelu"), "a.csv"), "unknown activation 'gelu'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(8, "silu"), "a.csv"),
                        "a gemm_a4w4 row has experts 0");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(9, "256"), "a.csv"), "split_m = 256 with one GEMM");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(11, "gemm_a4w4_bogus"), "a.csv"),
                        "a.csv:3: kernel 'gemm_a4w4_bogus'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(11, ""), "a.csv"), "a.csv:3: kernel ''");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(12, "nan"), "a.csv"), "us 'nan' is not a finite");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(13, "-0.1"), "a.csv"), "err '-0.1'");
  EXPECT_ERROR_CONTAINS(parseTunedCsv(withField(11, std::string(300, '\x01')), "a.csv"),
                        "kernel '\\x01\\x01\\x01");
  // Kernels that are not a plan: a GEMM then its quantizer, or another target's.
  TunedRow image = forcedRow(Arch::SM90A, 512, {});
  ASSERT_EQ(image.kernels.size(), 2u);
  TunedRow swapped = image;
  std::swap(swapped.kernels[0], swapped.kernels[1]);
  EXPECT_ERROR_CONTAINS(verifyTunedRow(swapped), "not a plan gemmA4W4 runs");
  TunedRow amd = forcedRow(Arch::GFX950, 16, {});
  amd.key.arch = Arch::GFX1250;
  EXPECT_ERROR_CONTAINS(verifyTunedRow(amd), "is for gfx950, the row for gfx1250");
  EXPECT_ERROR_CONTAINS(readTunedCsv("/nonexistent/tuned.csv"), "cannot read tuned CSV");
}

TEST(TunedCsv, CollisionsAreErrorsUnlessAWinnerIsNamed) {
  TunedRow a = forcedRow(Arch::SM90A, 16, {});
  a.origin = "a.csv:2";
  experimental::GemmA4W4Overrides other;
  other.bm = 64;
  TunedRow b = forcedRow(Arch::SM90A, 64, other, 0, 16);
  b.origin = "b.csv:7";
  TunedTable t;
  ASSERT_OK(t.add(a));
  TunedRow same = a;
  same.origin = "c.csv:9";
  ASSERT_OK(t.add(same)); // the same kernels: no collision
  Error e = t.add(b);
  ASSERT_TRUE(bool(e));
  EXPECT_NE(e.message().find("b.csv:7"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("a.csv:2"), std::string::npos) << e.message();
  TunedKey key = a.key;
  EXPECT_EQ(t.find(key, 16)->origin, "a.csv:2");
  ASSERT_OK(t.add(b, TunedTable::Collision::Keep));
  EXPECT_EQ(t.find(key, 16)->origin, "a.csv:2");
  ASSERT_OK(t.add(b, TunedTable::Collision::Replace));
  EXPECT_EQ(t.find(key, 16)->origin, "b.csv:7");
}

TEST(TunedCsv, DispatchFollowsTheRowOfThePaddedM) {
  const GemmWeightFacts w{Arch::SM90A, kN, kK, true, 132};
  experimental::GemmA4W4Overrides bm64, bm128;
  bm64.bm = 64;
  bm64.preQuantize = false;
  bm128.bm = 128;
  bm128.preQuantize = true;
  TunedTable t;
  ASSERT_OK(t.add(forcedRow(Arch::SM90A, 64, bm64, 0, 32)));
  ASSERT_OK(t.add(forcedRow(Arch::SM90A, 512, bm128, 0, 1024)));
  auto planOf = [&](int64_t m, const GemmA4W4Options &o = {}) {
    Expected<GemmA4W4Plan> p = planGemmA4W4(&t, w, m, o);
    EXPECT_TRUE(bool(p));
    return p ? *p : GemmA4W4Plan{};
  };
  // M 1..32 -> the m = 32 row, 33..1024 and beyond -> the m = 1024 row.
  for (int64_t m : {1, 7, 32}) {
    GemmA4W4Plan p = planOf(m);
    ASSERT_EQ(p.gemms.size(), 1u);
    EXPECT_EQ(p.gemms[0].bm, 64) << m;
    EXPECT_EQ(p.path, GemmA4W4Plan::Path::Inline);
  }
  for (int64_t m : {33, 1024, 5000}) {
    GemmA4W4Plan p = planOf(m);
    EXPECT_EQ(p.gemms[0].bm, 128) << m;
    EXPECT_EQ(p.path, GemmA4W4Plan::Path::Image);
  }
  // The caller's rounding and the weights' folding, not the row's.
  GemmA4W4Options nearest;
  nearest.rounding = ScaleRounding::Nearest;
  EXPECT_EQ(planOf(16, nearest).gemms[0].rounding, ScaleRounding::Nearest);
  EXPECT_EQ(planOf(512, nearest).quantizer->rounding, ScaleRounding::Nearest);
  Expected<GemmA4W4Plan> wide = planGemmA4W4(&t, {Arch::SM90A, kN, kK, false, 132}, 16);
  ASSERT_OK(wide);
  EXPECT_FALSE(wide->gemms[0].foldedScales);
  EXPECT_TRUE(planOf(16).gemms[0].foldedScales);
  // Overrides, or no row for the shape: the table's plan.
  GemmA4W4Options ignore;
  ignore.overrides.ignoreTunedCsv = true;
  Expected<GemmA4W4Plan> table = planGemmA4W4(nullptr, w, 16);
  ASSERT_OK(table);
  EXPECT_EQ(names(planOf(16, ignore)), names(*table));
  Expected<GemmA4W4Plan> otherShape = planGemmA4W4(&t, {Arch::SM90A, 7168, 768, true, 132}, 16);
  Expected<GemmA4W4Plan> otherTable = planGemmA4W4(nullptr, {Arch::SM90A, 7168, 768, true}, 16);
  ASSERT_OK(otherShape);
  ASSERT_OK(otherTable);
  EXPECT_EQ(names(*otherShape), names(*otherTable));
  // Rows of the device's size first, then those for any device.
  experimental::GemmA4W4Overrides bm32;
  bm32.bm = 32;
  bm32.preQuantize = false;
  ASSERT_OK(t.add(forcedRow(Arch::SM90A, 32, bm32, 132)));
  EXPECT_EQ(planOf(16).gemms[0].bm, 32);
  EXPECT_EQ(planOf(100).gemms[0].bm, 32); // the device's rows alone: their largest
  Expected<GemmA4W4Plan> smaller = planGemmA4W4(&t, {Arch::SM90A, kN, kK, true, 78}, 16);
  ASSERT_OK(smaller);
  EXPECT_EQ(smaller->gemms[0].bm, 64);
  TunedKey key;
  key.arch = Arch::SM90A;
  key.n = kN;
  key.k = kK;
  EXPECT_EQ(t.rowsForShape(key).size(), 3u);
}

TEST(TunedCsv, SplitAndStreamedRowsRunTheirPlan) {
  const GemmWeightFacts w{Arch::SM90A, kN, kK, true};
  experimental::GemmA4W4Overrides split;
  split.bm = 256;
  split.preQuantize = true;
  split.splitM = 1024;
  split.persistent = false;
  TunedRow row = forcedRow(Arch::SM90A, 2048, split);
  ASSERT_EQ(row.kernels.size(), 3u);
  EXPECT_EQ(row.splitM, 1024);
  Expected<GemmA4W4Plan> above = planFromTunedRow(row, w, 1500);
  ASSERT_OK(above);
  EXPECT_EQ(above->gemms.size(), 2u);
  EXPECT_EQ(above->splitM, 1024);
  Expected<GemmA4W4Plan> below = planFromTunedRow(row, w, 1000); // no split below split_m
  ASSERT_OK(below);
  EXPECT_EQ(below->gemms.size(), 1u);
  EXPECT_EQ(below->splitM, 0);

  experimental::GemmA4W4Overrides streamed;
  streamed.imageStream = 4;
  streamed.bm = 128;
  streamed.preQuantize = true;
  TunedRow s = forcedRow(Arch::SM90A, 512, streamed);
  EXPECT_EQ(s.streamWorkgroupsPerSm, 4);
  Expected<GemmA4W4Plan> sp = planFromTunedRow(s, w, 300);
  ASSERT_OK(sp);
  EXPECT_EQ(sp->path, GemmA4W4Plan::Path::StreamedImage);
  EXPECT_EQ(sp->streamWorkgroupsPerSm, 4);
  TunedRow broken = s;
  broken.streamWorkgroupsPerSm = 0;
  EXPECT_ERROR_CONTAINS(verifyTunedRow(broken), "stream_wgs = 0");
  TunedTable table; // a table holds verified rows only
  EXPECT_ERROR_CONTAINS(table.add(broken), "stream_wgs = 0");
  EXPECT_TRUE(table.empty());
  broken = s;
  broken.kernels[1].imageStream = broken.kernels[0].bm * 2;
  EXPECT_ERROR_CONTAINS(verifyTunedRow(broken), "pieces do not match");
}

TEST(TunedCsv, PresetRowsAreWhatTheTableDispatches) {
  // A preset's CSV loaded for dispatch changes nothing at its points.
  for (Arch arch : {Arch::GFX950, Arch::GFX1250, Arch::SM90A})
    for (std::string_view preset : {"seed-dense", "model-dense"}) {
      Expected<std::vector<TunedRow>> rows = presetTunedRows(preset, arch);
      ASSERT_OK(rows);
      TunedTable t;
      ASSERT_OK(t.add(*rows));
      for (const TunedRow &r : *rows)
        for (bool small : {true, false}) {
          GemmWeightFacts w{arch, r.key.n, r.key.k, small};
          Expected<GemmA4W4Plan> tuned = planGemmA4W4(&t, w, r.m);
          Expected<GemmA4W4Plan> table = planGemmA4W4(nullptr, w, r.m);
          ASSERT_OK(tuned);
          ASSERT_OK(table);
          EXPECT_EQ(names(*tuned), names(*table)) << r.origin << " small " << small;
        }
    }
}

} // namespace
