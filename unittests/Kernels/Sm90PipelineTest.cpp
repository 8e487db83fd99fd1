//===- Sm90PipelineTest.cpp - Shared memory of the sm_90a GEMMs -----------===//

#include "mxfp4/JIT/CompiledKernel.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

#include "TestUtil/Expected.h"

#include <gtest/gtest.h>

using namespace mxfp4;

// Every tile the lowering accepts fits an H200 workgroup (227 KiB), and each
// TMA destination is 128-byte aligned, each mbarrier 8-byte aligned.
TEST(Sm90Pipeline, EveryTileFitsAndIsAligned) {
  for (int64_t bm : {8, 16, 32, 64, 128})
    for (int64_t bk : {128, 256}) {
      if (bm * bk > 128 * 128)
        continue;
      SCOPED_TRACE(testing::Message() << "BM " << bm << " BK " << bk);
      const sm90::SharedLayout l = sm90::sharedLayout(bm, bk);
      EXPECT_LE(l.totalBytes(), 227 * 1024);
      if (bm == 128) { // two workgroups per SM, each with 1 KiB reserved by the driver
        EXPECT_LE(2 * (l.totalBytes() + 1024), 228 * 1024);
      }
      EXPECT_GE(l.stages, 3);
      EXPECT_EQ(l.activationBytes, 2 * bm * bk * 2);
      EXPECT_EQ(l.stagesOffset() % 128, 0);
      EXPECT_EQ(l.stageBytes() % 128, 0);
      EXPECT_EQ(l.scalesInStage(), bk / 128 * sm90::kWeightBoxBytes);
      EXPECT_EQ(l.stageBytes() - l.scalesInStage(), bk / 128 * sm90::kScaleBoxBytes);
      EXPECT_EQ(l.barriersOffset() % 8, 0);
      // One stage holds the step's weight rows and scales exactly.
      EXPECT_EQ(l.stageBytes(), sm90::kTileRows * bk / 2 + sm90::kTileRows * bk / 32);
    }
}

// The launch asks for exactly the layout's dynamic shared memory.
TEST(Sm90Pipeline, LaunchGeometryUsesTheLayout) {
  for (int64_t bm : {8, 64, 128}) {
    Expected<KernelSpec> spec = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, bm);
    ASSERT_OK(spec);
    CompiledKernel k;
    k.spec = *spec;
    LaunchGeometry g = k.geometry(100);
    EXPECT_EQ(g.sharedBytes, unsigned(sm90::sharedLayout(bm, spec->bk).totalBytes()));
    EXPECT_EQ(g.block[0], bm == 128 ? 256u : 128u);
  }
}
