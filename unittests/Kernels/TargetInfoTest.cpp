//===- TargetInfoTest.cpp - Targets as data agree with their users --------===//
//
// TargetInfo is the one description of a target. These tests fail when a
// spec default, a name or an MMA shape drifts from it.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/TargetInfo.h"
#include "TestUtil/Expected.h"
#include "mxfp4/Conversion/LaneLayout.h"
#include "mxfp4/Kernels/KernelSpec.h"

#include "gtest/gtest.h"

using namespace mxfp4;

namespace {

TEST(TargetInfo, OneRowPerTargetInArchOrder) {
  for (size_t i = 0; i < std::size(kTargets); ++i) {
    const TargetInfo &t = kTargets[i];
    EXPECT_EQ(size_t(t.arch), i);
    EXPECT_EQ(&targetInfo(t.arch), &t);
    EXPECT_EQ(toString(t.arch), t.name);
    EXPECT_EQ(parseArch(t.name), t.arch);
    EXPECT_GT(t.sharedBytes, 0);
    EXPECT_GT(t.registersPerLane, 0);
    EXPECT_EQ(t.wavesPerWorkgroup, 4);
  }
  EXPECT_EQ(parseArch("sm90a"), std::nullopt) << "the name token is not a target name";
  EXPECT_EQ(parseArch("gfx942"), std::nullopt);
}

TEST(TargetInfo, AmdRowsAreTheirMmaIntrinsics) {
  // The lane layouts (Conversion/LaneLayout.h) describe the same MMAs.
  const std::pair<Arch, MmaIntrinsic> amd[] = {
      {Arch::GFX950, MmaIntrinsic::MFMA_SCALE_F32_16x16x128_B32},
      {Arch::GFX1250, MmaIntrinsic::WMMA_SCALE_F32_16x16x128_B32}};
  for (auto [arch, intrinsic] : amd) {
    const TargetInfo &t = targetInfo(arch);
    const MmaShape &shape = mmaShape(intrinsic);
    SCOPED_TRACE(std::string(t.name));
    EXPECT_TRUE(t.isAmd());
    EXPECT_EQ(t.waveSize, shape.waveSize);
    EXPECT_EQ(t.mma.instruction, std::string_view(shape.mnemonic));
    EXPECT_EQ(t.mma.m, shape.m);
    EXPECT_EQ(t.mma.n, shape.n);
    EXPECT_EQ(t.mma.k, shape.k);
    EXPECT_EQ(t.defaultBn, 4 * 64) << "4 waves x 64 columns";
  }
  EXPECT_FALSE(targetInfo(Arch::SM90A).isAmd());
  EXPECT_TRUE(targetInfo(Arch::SM90A).fp4Conversion.empty());
}

TEST(TargetInfo, SpecDefaultsComeFromTheRow) {
  for (const TargetInfo &t : kTargets)
    for (int64_t k : {768, 896, 7168}) {
      SCOPED_TRACE(std::string(t.name) + " K=" + std::to_string(k));
      Expected<KernelSpec> s = makeGemmA4W4Spec(t.arch, 1024, k, 16);
      ASSERT_OK(s);
      EXPECT_EQ(s->bn, t.defaultBn);
      EXPECT_EQ(s->bk, t.bkFor(k));
      EXPECT_EQ(s->weightLayout, t.weightLayout);
      EXPECT_EQ(s->scaleLayout, t.scaleLayout);
    }
}

} // namespace
