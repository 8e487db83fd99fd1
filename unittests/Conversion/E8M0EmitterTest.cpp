//===- E8M0EmitterTest.cpp - GPU scale rounding equals the CPU quantizer ---===//
//
// The IR that GPU kernels run for each scale-rounding mode is folded to
// constants by the canonicalizer and compared with mxfp4::scaleFromAmax, bit
// for bit, over a sweep of f32 magnitudes (every 3rd bf16 pattern, subnormals,
// Inf, NaN payloads and random f32 bits). No GPU needed.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/E8M0Emitter.h"
#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Format/E8M0.h"
#include "TestUtil/Random.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace mlir;
using namespace mxfp4;

namespace {

tile::ScaleRoundingKind toKind(ScaleRounding m) {
  return static_cast<tile::ScaleRoundingKind>(static_cast<int>(m));
}

/// Folds f(constant) for every input and returns the constants.
std::vector<uint32_t> foldAll(const std::vector<uint32_t> &inputs,
                              llvm::function_ref<Value(OpBuilder &, Location, Value)> f) {
  MLIRContext ctx;
  ctx.loadDialect<arith::ArithDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, loc, "f", b.getFunctionType({}, {}));
  b.setInsertionPointToStart(fn.addEntryBlock());
  SmallVector<Value> results;
  for (uint32_t in : inputs)
    results.push_back(f(b, loc, arith::ConstantIntOp::create(b, loc, int64_t(in), 32)));
  SmallVector<Type> types(results.size(), b.getI32Type());
  fn.setFunctionType(b.getFunctionType({}, types));
  func::ReturnOp::create(b, loc, results);
  PassManager pm(&ctx);
  pm.addPass(createCanonicalizerPass());
  EXPECT_TRUE(succeeded(pm.run(module)));
  std::vector<uint32_t> out;
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  for (Value v : ret.getOperands()) {
    auto c = v.getDefiningOp<arith::ConstantOp>();
    EXPECT_TRUE(c) << "did not fold to a constant";
    if (!c)
      return {};
    out.push_back(uint32_t(cast<IntegerAttr>(c.getValue()).getValue().getZExtValue()));
  }
  module.erase();
  return out;
}

std::vector<uint32_t> amaxSweep() {
  std::vector<uint32_t> v;
  for (uint32_t b = 0; b < 0x8000; b += 3)
    v.push_back(b << 16);
  for (uint32_t s : {0x0u, 0x1u, 0x7FFFFFu, 0x800000u, 0x7F7FFFFFu, 0x7F800000u, 0x7F800001u,
                     0x7FC00000u, 0x7FFFFFFFu, 0x3FE00000u, 0x3FD9999Au, 0x40C00000u,
                     0x7F600000u, 0x7F5FFFFFu})
    v.push_back(s);
  uint64_t seed = test::freshSeed();
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i)
    v.push_back(uint32_t(rng()) & 0x7FFFFFFFu);
  return v;
}

TEST(E8M0Emitter, FoldsToTheCpuScaleInEveryMode) {
  std::vector<uint32_t> inputs = amaxSweep();
  for (ScaleRounding mode : allScaleRoundings()) {
    std::vector<uint32_t> gpu = foldAll(inputs, [&](OpBuilder &b, Location loc, Value amax) {
      return emitScaleFromAmax(b, loc, amax, toKind(mode));
    });
    ASSERT_EQ(gpu.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
      ASSERT_EQ(gpu[i], scaleFromAmax(inputs[i], mode))
          << std::string(toString(mode)) << " amax bits 0x" << std::hex << inputs[i];
  }
}

TEST(E8M0Emitter, DequantScaleIsTwoToTheCodeMinus127) {
  std::vector<uint32_t> codes;
  for (uint32_t c = 0; c < 256; ++c)
    codes.push_back(c);
  std::vector<uint32_t> bits = foldAll(codes, [](OpBuilder &b, Location loc, Value code) {
    Value f = emitDequantScale(b, loc, code);
    return arith::BitcastOp::create(b, loc, b.getI32Type(), f).getResult();
  });
  ASSERT_EQ(bits.size(), 256u);
  for (uint32_t c = 0; c < 256; ++c) {
    float f;
    std::memcpy(&f, &bits[c], 4);
    if (c == 255)
      EXPECT_TRUE(std::isnan(f));
    else
      EXPECT_EQ(double(f), decodeE8M0(uint8_t(c))) << c; // code 0 is the subnormal 2^-127
  }
}

} // namespace
