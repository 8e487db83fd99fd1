//===- ScheduleTest.cpp - One table of schedule fields --------------------===//
//
// kScheduleFields is the one description of a kernel's schedule: the kernel
// name, its parser, mxfp4-dump's flags and the #mxtile.schedule attribute
// follow it. These tests fail when one of them drifts from the table.
//
//===----------------------------------------------------------------------===//

#include "TestUtil/Expected.h"
#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Kernels/KernelSpec.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <set>

using namespace mxfp4;

namespace {

/// A schedule with every field off its default (not a legal kernel: the
/// attribute and the name carry any values; verifyKernelSpec judges them).
Schedule everyFieldSet() {
  Schedule s;
  int64_t v = 3;
  for (const ScheduleField &f : kScheduleFields)
    f.set(s, f.boolean ? 1 : f.defaultValue + v++);
  return s;
}

TEST(Schedule, TableNamesEachFieldOnceAndCoversTheStruct) {
  std::set<std::string_view> params, flags, tokens;
  Schedule changed;
  for (const ScheduleField &f : kScheduleFields) {
    SCOPED_TRACE(std::string(f.param));
    EXPECT_TRUE((f.number == nullptr) != (f.boolean == nullptr)) << "one member per field";
    EXPECT_TRUE(params.insert(f.param).second);
    EXPECT_TRUE(flags.insert(f.flag).second);
    if (f.form != FieldForm::Suffix)
      EXPECT_TRUE(tokens.insert(f.token).second);
    EXPECT_EQ(f.get(Schedule()), f.defaultValue) << "the table's default is the struct's";
    EXPECT_EQ(findScheduleField(f.param), &f);
    f.set(changed, f.boolean ? 1 : f.defaultValue + 1);
  }
  // Every member is some field's: a schedule with every field changed
  // differs from the default in all of them, and == sees each one.
  for (const ScheduleField &f : kScheduleFields) {
    Schedule one;
    f.set(one, f.get(changed));
    EXPECT_NE(one, Schedule()) << f.param;
  }
  EXPECT_EQ(findScheduleField("no_such_field"), nullptr);
}

TEST(Schedule, AttributeHasTheTablesParametersInItsOrder) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<tile::TileDialect>();
  const Schedule s = everyFieldSet();
  auto attr = tile::ScheduleAttr::get(&ctx, s);
  EXPECT_EQ(attr.getSchedule(), s);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << mlir::Attribute(attr);
  size_t at = 0;
  for (const ScheduleField &f : kScheduleFields) {
    std::string want = std::string(f.param) + " = ";
    want += f.boolean ? std::string("true") : std::to_string(f.get(s));
    size_t found = text.find(want, at);
    EXPECT_NE(found, std::string::npos) << want << " in " << text;
    if (found != std::string::npos)
      at = found;
  }
  // Defaults are not printed.
  Schedule tile;
  tile.bm = 8;
  tile.bn = 64;
  tile.bk = 128;
  text.clear();
  os << mlir::Attribute(tile::ScheduleAttr::get(&ctx, tile));
  EXPECT_EQ(text, "#mxtile.schedule<bm = 8, bn = 64, bk = 128>");
}

TEST(Schedule, NameCarriesEveryVariantInTheTablesOrder) {
  KernelSpec spec;
  spec.schedule() = everyFieldSet();
  spec.decodeGroups = 3;
  const std::string name = spec.name();
  size_t at = 0;
  for (const ScheduleField &f : kScheduleFields) {
    if (f.form == FieldForm::Suffix)
      continue;
    std::string want = "_" + std::string(f.token);
    if (f.form == FieldForm::Number || f.form == FieldForm::Count)
      want += std::to_string(f.get(spec));
    if (f.token == "dec")
      want += "3";
    size_t found = name.find(want, at);
    EXPECT_NE(found, std::string::npos) << want << " in " << name;
    if (found != std::string::npos)
      at = found;
  }
}

TEST(Schedule, JsonHasEveryFieldOnce) {
  const Schedule s = everyFieldSet();
  const std::string json = toJson(s);
  ASSERT_EQ(json.front(), '{');
  ASSERT_EQ(json.back(), '}');
  size_t at = 0;
  for (const ScheduleField &f : kScheduleFields) {
    std::string want = "\"" + std::string(f.param) + "\": ";
    want += f.boolean ? std::string("true") : std::to_string(f.get(s));
    size_t found = json.find(want, at);
    EXPECT_NE(found, std::string::npos) << want << " in " << json;
    EXPECT_EQ(json.find(want, found + 1), std::string::npos) << "twice: " << want;
    if (found != std::string::npos)
      at = found;
  }
  EXPECT_NE(toJson(Schedule()).find("\"folded_scales\": false"), std::string::npos);
}

TEST(Schedule, FieldsAreCheckedOnTheirOwn) {
  auto check = [](auto edit, const char *want) {
    Schedule s;
    edit(s);
    EXPECT_ERROR_CONTAINS(verifyScheduleFields(s), want);
  };
  check([](Schedule &s) { s.bk = 0; }, "the tile must be positive");
  check([](Schedule &s) { s.splitK = 0; }, "takes at least one split");
  check([](Schedule &s) { s.stages = -1; }, "must be 0 (the tile's default) or more");
  check([](Schedule &s) { s.decodeGroups = 2; }, "are a decode variant");
  check(
      [](Schedule &s) {
        s.decode = true;
        s.decodeGroups = 0;
      },
      "at least one warpgroup");
  check([](Schedule &s) { s.warpSplitK = -2; }, "must not be negative");
  check(
      [](Schedule &s) {
        s.persistent = true;
        s.streamK = true;
      },
      "exclude each other");
  EXPECT_FALSE(verifyScheduleFields(Schedule()));
}

/// A decode kernel name with split-K 0 divided by zero in verifyKernelSpec
/// (mxfp4-dump --decode --split-k=0; issue 40): the field check comes first.
TEST(Schedule, ZeroSplitWithDecodeIsAnErrorNotADivision) {
  Expected<KernelSpec> s =
      parseKernelName("gemm_a4w4_sm90a_n8448_k7168_bm8_bn64_bk128_ks0_roundup_wsm90mma16_"
                      "ssm90mma16_anone_ebf16_dec");
  EXPECT_ERROR_CONTAINS(s, "takes at least one split");
}

} // namespace
