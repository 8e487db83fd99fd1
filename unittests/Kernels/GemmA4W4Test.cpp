//===- GemmA4W4Test.cpp - The dense A4W4 kernel spec and tile program ------===//

#include "mxfp4/Kernels/GemmA4W4.h"
#include "TestUtil/LLVMExpected.h"
#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Target/Compile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <limits>

using namespace mxfp4;

namespace {

TEST(GemmA4W4Spec, SeedShapesAndTiles) {
  auto s = makeGemmA4W4Spec(Arch::GFX950, 8448, 7168, 16);
  ASSERT_OK(s);
  EXPECT_EQ(s->bk, 256);
  EXPECT_EQ(s->name(), "gemm_a4w4_gfx950_n8448_k7168_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_"
                       "sgfx950mfma16_anone_ebf16");
  auto s2 = makeGemmA4W4Spec(Arch::GFX1250, 7168, 4224, 64, ScaleRounding::Even);
  ASSERT_OK(s2);
  EXPECT_EQ(s2->bk, 128); // 4224 % 256 != 0
  EXPECT_EQ(s2->scaleLayout, ScaleLayout::Gfx1250Wmma);
  EXPECT_EQ(s2->name(), "gemm_a4w4_gfx1250_n7168_k4224_bm64_bn256_bk128_ks1_even_wgfx950mfma16_"
                        "sgfx1250wmma_anone_ebf16");
}

TEST(GemmA4W4Spec, ConstraintsAreNamed) {
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::GFX950, 256, 4100, 16), "K % 32 == 0");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::GFX950, 256, 256, 32), "BM must be 16 or 64");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::GFX950, 0, 256, 16), "must be positive");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::SM90A, 200, 4100, 16), "K % 32 == 0");
  EXPECT_ERROR_CONTAINS(makeGemmA4W4Spec(Arch::SM90A, 256, 256, 24),
                        "BM must be 8, 16, 32, 64 or 128");
  ASSERT_OK(makeGemmA4W4Spec(Arch::SM90A, 256, 256, 128));
  auto big = makeGemmA4W4Spec(Arch::SM90A, 256, 512, 128);
  ASSERT_OK(big);
  big->bk = 256; // two 64 KiB buffers would not fit
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(*big), "exceeds the 64 KiB of shared memory");
  auto nv = makeGemmA4W4Spec(Arch::SM90A, 8448, 7168, 8);
  ASSERT_OK(nv);
  EXPECT_EQ(nv->bn, 128);
  EXPECT_EQ(nv->weightLayout, WeightLayout::Sm90Mma16);
  KernelSpec dump = *nv;
  dump.epilogue = Epilogue::BF16DumpQuant;
  ASSERT_OK(verifyKernelSpec(dump));
  dump.arch = Arch::GFX950;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(dump), "bf16dq");
}

// sm_90a runs any N and K % 32 on weights padded to whole 128 tiles; the
// variants that need whole tiles say so.
TEST(GemmA4W4Spec, Sm90TakesAnyNAndKMultipleOf32) {
  EXPECT_EQ(gemmWeightRows(Arch::SM90A, 2880), 2944);
  EXPECT_EQ(gemmWeightRows(Arch::SM90A, 1), 128);
  EXPECT_EQ(gemmWeightRows(Arch::SM90A, 256), 256);
  EXPECT_EQ(gemmWeightK(Arch::SM90A, 32), 256);
  EXPECT_EQ(gemmWeightK(Arch::SM90A, 384), 384);
  EXPECT_EQ(gemmWeightK(Arch::SM90A, 2880), 2944);
  // Invalid values stay as they are (no overflow), for the verifier.
  EXPECT_EQ(gemmWeightK(Arch::SM90A, std::numeric_limits<int64_t>::max()),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(gemmWeightRows(Arch::SM90A, -5), -5);
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2880, 2880}, {1, 256}, {200, 4128}, {129, 288}}) {
    auto s = makeGemmA4W4Spec(Arch::SM90A, n, k, 16);
    ASSERT_OK(s);
    auto parsed = parseKernelName(s->name());
    ASSERT_OK(parsed);
    EXPECT_EQ(parsed->name(), s->name());
    KernelSpec mx = *s;
    mx.op = OpKind::GemmMxA4W4;
    ASSERT_OK(verifyKernelSpec(mx));
  }
  // K = 32 .. 128 pad to the pipeline's two steps.
  for (int64_t k : {32, 64, 96, 128})
    ASSERT_OK(makeGemmA4W4Spec(Arch::SM90A, 3, k, 8));
  auto s = makeGemmA4W4Spec(Arch::SM90A, 2880, 2880, 128);
  ASSERT_OK(s);
  KernelSpec qdq = *s;
  qdq.op = OpKind::GemmQdqA4W4;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(qdq), "gemm_qdqa4w4 on sm_90a needs");
  qdq.k = 2816; // whole K steps, an N tail: the image takes it
  ASSERT_OK(verifyKernelSpec(qdq));
  qdq.streamK = true;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(qdq), "stream-K (_sk) needs whole output tiles");
  KernelSpec dump = *s;
  dump.bm = 16;
  dump.epilogue = Epilogue::BF16DumpQuant;
  EXPECT_ERROR_CONTAINS(verifyKernelSpec(dump), "bf16dq) needs K % 128 == 0");
}

// gfx950 and gfx1250 pad the weights to their 256-row N tile and to 128 K:
// any N and K % 32 there too, on the inline GEMM they run.
TEST(GemmA4W4Spec, AmdTakesAnyNAndKMultipleOf32) {
  for (Arch arch : {Arch::GFX950, Arch::GFX1250}) {
    EXPECT_EQ(gemmWeightRows(arch, 1000), 1024);
    EXPECT_EQ(gemmWeightRows(arch, 8448), 8448);
    EXPECT_EQ(gemmWeightK(arch, 4128), 4224);
    EXPECT_EQ(gemmWeightK(arch, 32), 128);
    EXPECT_EQ(gemmWeightK(arch, 7168), 7168);
    for (auto [n, k] : {std::pair<int64_t, int64_t>{1000, 7168}, {2880, 2880}, {1, 32}}) {
      auto s = makeGemmA4W4Spec(arch, n, k, 16);
      ASSERT_OK(s);
      EXPECT_EQ(s->bk, k % 256 == 0 ? 256 : 128) << s->name();
    }
    EXPECT_EQ(makeGemmA4W4Spec(arch, 1000, 7168, 64)->bk, 256); // K whole: BK 256
  }
}

TEST(GemmA4W4, TileProgramVerifiesAndHasTheSeedAnatomy) {
  mlir::DialectRegistry registry;
  registerMxfp4Dialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  for (Arch arch : {Arch::GFX950, Arch::GFX1250})
    for (int64_t bm : {16, 64}) {
      auto spec = makeGemmA4W4Spec(arch, 1536, 4224, bm);
      ASSERT_OK(spec);
      auto module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
      buildGemmA4W4(module, *spec);
      ASSERT_TRUE(mlir::succeeded(module.verify()));
      auto fn = *module.getOps<mlir::func::FuncOp>().begin();
      EXPECT_EQ(fn.getSymName(), spec->name());
      EXPECT_TRUE(fn->hasAttr(tile::TileDialect::getKernelAttrName()));
      EXPECT_EQ(fn.getNumArguments(), 5u);
      int loops = 0, quant = 0, mma = 0, stores = 0;
      fn.walk([&](mlir::Operation *op) {
        loops += mlir::isa<mlir::scf::ForOp>(op);
        quant += mlir::isa<tile::QuantizeOp>(op);
        mma += mlir::isa<tile::ScaledMmaOp>(op);
        stores += mlir::isa<tile::StoreOp>(op);
      });
      EXPECT_EQ(loops, 1);
      EXPECT_EQ(quant, 1);
      EXPECT_EQ(mma, 1);
      EXPECT_EQ(stores, 1);
      // The whole chain to ISA works in process and names the instruction.
      auto isa = compileModule(module, arch, EmitKind::ISA);
      ASSERT_OK(isa);
      EXPECT_NE(isa->find(arch == Arch::GFX950 ? "v_mfma_scale_f32_16x16x128_f8f6f4"
                                               : "v_wmma_scale_f32_16x16x128_f8f6f4"),
                std::string::npos);
      module.erase();
    }
}

TEST(GemmA4W4, CompileErrorsComeBackAsErrors) {
  mlir::DialectRegistry registry;
  registerMxfp4Dialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  auto module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
  auto spec = makeGemmA4W4Spec(Arch::GFX950, 256, 512, 16);
  ASSERT_OK(spec);
  buildGemmA4W4(module, *spec);
  // A gfx950 tile program (BN 256) does not fit the sm_90a lowering.
  EXPECT_ERROR_CONTAINS(compileModule(module, Arch::SM90A, EmitKind::ISA),
                        "on sm_90a: BN must be 128 or 64");
  module.erase();
}

} // namespace
