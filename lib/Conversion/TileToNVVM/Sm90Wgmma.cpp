//===- Sm90Wgmma.cpp - The MMAs of one K step: wgmma with register A ------===//
//
// Per 128-K chunk and MMA step s (8 per chunk), each thread dequantizes its
// A fragment of weight tile i (i = 0, 1) and issues
//
//   wgmma.mma_async.sync.aligned.m64n<BM>k16.f32.bf16.bf16
//       {acc_i}, {a0..a3}, desc(B slab of (chunk, s)), p, 1, 1, 0
//
// with B (the activations) K-major in shared memory, no swizzle: core
// matrices of 8 tokens x 16 bytes, the two K halves 128 B apart (leading
// byte offset), token groups 256 B apart (stride byte offset). MLIR 22's
// nvgpu/nvvm wgmma ops take A from shared memory only, hence inline PTX.
// Each group of 2 MMA steps is one commit group, started only once the
// group one K step back has completed (its A registers are reused). So when
// a K step's groups are all issued, every wgmma of the previous K step has
// completed: the K loops reuse its activations' buffer or stage at once.
//
//===----------------------------------------------------------------------===//

#include "NvLowering.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <string>

using namespace mlir;
using namespace mxfp4;
using namespace mxfp4::nv;

/// Core-matrix strides of the activation slabs (see NvLowering.h).
static constexpr int64_t kLeadingByteOffset = 128; // K half h -> h + 1
static constexpr int64_t kStrideByteOffset = 256;  // token group G -> G + 1

void nv::fenceProxyAsync(ImplicitLocOpBuilder &b) {
  LLVM::InlineAsmOp::create(b, /*res=*/Type(), ValueRange{},
                            b.getStringAttr("fence.proxy.async.shared::cta;"), b.getStringAttr(""),
                            b.getUnitAttr(), UnitAttr(), LLVM::TailCallKindAttr(),
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

/// acc (n/2 f32) += A (4 x bf16x2 in i32) * B (n tokens at `desc`), async.
static SmallVector<Value> wgmma(ImplicitLocOpBuilder &b, ArrayRef<Value> acc, ArrayRef<Value> a,
                                Value desc) {
  const size_t nAcc = acc.size();
  auto reg = [](size_t i) { return "$" + std::to_string(i); };
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, " + reg(nAcc + 5) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(2 * nAcc) +
                     "k16.f32.bf16.bf16 {";
  std::string constraints;
  for (size_t i = 0; i < nAcc; ++i) {
    text += (i ? ", " : "") + reg(i);
    constraints += "=f,";
  }
  text += "}, {" + reg(nAcc) + ", " + reg(nAcc + 1) + ", " + reg(nAcc + 2) + ", " + reg(nAcc + 3) +
          "}, " + reg(nAcc + 4) + ", p, 1, 1, 0;\n}";
  constraints += "r,r,r,r,l,r";
  for (size_t i = 0; i < nAcc; ++i)
    constraints += "," + std::to_string(i);

  SmallVector<Value> operands(a.begin(), a.end());
  operands.push_back(desc);
  operands.push_back(arith::ConstantIntOp::create(b, 1, 32)); // scale-d: accumulate
  llvm::append_range(operands, acc);
  SmallVector<Type> fields(nAcc, b.getF32Type());
  auto result = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  auto op = LLVM::InlineAsmOp::create(
      b, result, operands, b.getStringAttr(text), b.getStringAttr(constraints), b.getUnitAttr(),
      UnitAttr(), LLVM::TailCallKindAttr(), LLVM::AsmDialectAttr(), ArrayAttr());
  SmallVector<Value> out;
  for (size_t i = 0; i < nAcc; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, op.getRes(), ArrayRef<int64_t>{int64_t(i)}));
  return out;
}

void Sm90Emitter::mmaStep(ImplicitLocOpBuilder &b, const WeightRegs &regs, Value buffer,
                          MutableArrayRef<Value> accs) {
  const int64_t half = cfg.bm / 2; // accumulators per wgmma and thread
  auto i64 = b.getI64Type();
  auto c64 = [&](int64_t v) { return arith::ConstantIntOp::create(b, v, 64).getResult(); };
  // Descriptor of slab 0 of this buffer; slab q starts q * slabBytes later
  // (start address in 16-byte units, bits 0-13; smem is < 228 KiB, no carry).
  Value base =
      arith::IndexCastUIOp::create(b, i64, memref::ExtractAlignedPointerAsIndexOp::create(b, smem));
  Value start = arith::AddIOp::create(
      b, base, arith::ShLIOp::create(b, arith::IndexCastUIOp::create(b, i64, buffer), c64(2)));
  Value desc0 = arith::OrIOp::create(
      b, arith::AndIOp::create(b, arith::ShRUIOp::create(b, start, c64(4)), c64(0x3FFF)),
      c64(((kLeadingByteOffset >> 4) << 16) | ((kStrideByteOffset >> 4) << 32)));

  auto i32 = b.getI32Type();
  for (int64_t kc = 0; kc < cfg.chunksPerStep(); ++kc) {
    // The scale dword holds rows 32q + {0, 8, 16, 24} at bytes 2 * (tile % 2) + h.
    // Folded scales (every weight scale < 128) take one multiply per pair.
    const int64_t tiles = cfg.tilesPerWarp();
    Value scales[2][2];
    for (int64_t i = 0; i < tiles; ++i) {
      Value tileParity = idxRem(b, idxAdd(b, idxMul(b, warp, tiles), i), 2);
      for (int64_t h = 0; h < 2; ++h) {
        Value byte = idxAdd(b, idxMul(b, tileParity, 2), h);
        scales[i][h] = scalePair(b, regs.scales[kc], arith::IndexCastUIOp::create(b, i32, byte),
                                 cfg.foldedScales);
      }
    }
    // Steps go in groups whose A fragments are converted first and then fed
    // to back-to-back wgmmas, one commit group each. A group's registers are
    // the same PTX registers as those of the group one K step back (the loop
    // body is emitted once), which the wgmmas read asynchronously: writing
    // them while in flight is undefined (PTX ISA, wgmma), so each group first
    // waits until at most groups-per-step - 1 groups are pending. Groups of
    // 2 steps keep 3 (BK 128) in flight while the next one is converted.
    const int64_t groupSteps = 2, groupsPerStep = cfg.chunksPerStep() * 8 / groupSteps;
    for (int64_t s0 = 0; s0 < 8; s0 += groupSteps) {
      NVVM::WgmmaWaitGroupSyncOp::create(b, groupsPerStep - 1);
      SmallVector<Value> a; // [step - s0][tile][4 registers]
      for (int64_t s = s0; s < s0 + groupSteps; ++s) {
        // Word s/2 of the thread's 16 bytes; pairs j0 (a0/a1) and j0 + 1 (a2/a3).
        int64_t word = s / 2;
        int j0 = int(s % 2) * 2;
        for (int64_t i = 0; i < tiles; ++i) {
          Value w0 = vector::ExtractOp::create(b, regs.words[(kc * tiles + i) * 2 + 0],
                                               ArrayRef<int64_t>{word});
          Value w1 = vector::ExtractOp::create(b, regs.words[(kc * tiles + i) * 2 + 1],
                                               ArrayRef<int64_t>{word});
          llvm::append_range(
              a, weightFragment(b, w0, w1, j0, scales[i][0], scales[i][1], cfg.foldedScales));
        }
      }
      // The A registers were just written: fence before the wgmmas read them.
      NVVM::WgmmaFenceAlignedOp::create(b);
      for (int64_t s = s0; s < s0 + groupSteps; ++s) {
        Value desc = arith::AddIOp::create(b, desc0, c64(((kc * 8 + s) * cfg.slabBytes()) >> 4));
        for (int64_t i = 0; i < tiles; ++i) {
          MutableArrayRef<Value> acc = accs.slice(i * half, half);
          size_t at = size_t(((s - s0) * tiles + i) * 4);
          SmallVector<Value> d = wgmma(b, acc, ArrayRef<Value>(a).slice(at, 4), desc);
          llvm::copy(d, acc.begin());
        }
      }
      NVVM::WgmmaGroupSyncAlignedOp::create(b);
    }
  }
}

SmallVector<Value> Sm90Emitter::flattenAccumulators(ImplicitLocOpBuilder &b,
                                                    ArrayRef<Value> tiles) {
  SmallVector<Value> flat;
  for (Value v : tiles)
    for (int64_t q = 0; q < 4; ++q)
      flat.push_back(vector::ExtractOp::create(b, v, ArrayRef<int64_t>{q}));
  return flat;
}

SmallVector<Value> Sm90Emitter::tileAccumulators(ImplicitLocOpBuilder &b, ArrayRef<Value> flat) {
  SmallVector<Value> tiles;
  for (size_t i = 0; i < flat.size(); i += 4)
    tiles.push_back(
        vector::FromElementsOp::create(b, VectorType::get({4}, b.getF32Type()), flat.slice(i, 4)));
  return tiles;
}
