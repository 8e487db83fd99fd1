//===- SimtEmitter.h - Building SIMT kernel bodies ----------------*- C++ -*-===//
//
// Small helpers for the bodies of SIMT kernels (Kernels/MoeSort.h,
// Kernels/MoeElementwise.h): index and i32 arithmetic, loads and stores,
// guarded regions, loops strided by the workgroup, and the workgroup's
// prefix sum in shared memory. Upstream dialects only.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_LIB_KERNELS_SIMTEMITTER_H
#define MXFP4_LIB_KERNELS_SIMTEMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4 {

class SimtEmitter {
public:
  /// `threads`: the workgroup's; `smem`: a workgroup buffer of `threads`
  /// i32 for scan (may be null when unused).
  SimtEmitter(mlir::ImplicitLocOpBuilder &b, int64_t threads, mlir::Value smem = {})
      : b(b), threads(threads), smem(smem) {
    tid = mlir::gpu::ThreadIdOp::create(b, mlir::gpu::Dimension::x);
    block = mlir::gpu::BlockIdOp::create(b, mlir::gpu::Dimension::x);
  }

  using P = mlir::arith::CmpIPredicate;
  mlir::Value idx(int64_t v) { return mlir::arith::ConstantIndexOp::create(b, v); }
  mlir::Value i32(int64_t v) { return mlir::arith::ConstantIntOp::create(b, b.getI32Type(), v); }
  mlir::Value f32(float v) {
    return mlir::arith::ConstantFloatOp::create(b, b.getF32Type(), llvm::APFloat(v));
  }
  mlir::Value toIndex(mlir::Value v) {
    return mlir::arith::IndexCastOp::create(b, b.getIndexType(), v);
  }
  mlir::Value toI32(mlir::Value v) {
    return mlir::arith::IndexCastOp::create(b, b.getI32Type(), v);
  }
  mlir::Value cmp(P p, mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, p, x, y);
  }
  mlir::Value add(mlir::Value x, mlir::Value y) { return mlir::arith::AddIOp::create(b, x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return mlir::arith::SubIOp::create(b, x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return mlir::arith::MulIOp::create(b, x, y); }
  mlir::Value divu(mlir::Value x, mlir::Value y) { return mlir::arith::DivUIOp::create(b, x, y); }
  mlir::Value remu(mlir::Value x, mlir::Value y) { return mlir::arith::RemUIOp::create(b, x, y); }
  mlir::Value select(mlir::Value c, mlir::Value x, mlir::Value y) {
    return mlir::arith::SelectOp::create(b, c, x, y);
  }
  mlir::Value zext(mlir::Value i1) { return mlir::arith::ExtUIOp::create(b, b.getI32Type(), i1); }
  mlir::Value load(mlir::Value mem, mlir::Value i) {
    return mlir::memref::LoadOp::create(b, mem, mlir::ValueRange{i});
  }
  void store(mlir::Value v, mlir::Value mem, mlir::Value i) {
    mlir::memref::StoreOp::create(b, v, mem, mlir::ValueRange{i});
  }
  void barrier() { mlir::gpu::BarrierOp::create(b); }
  /// The global thread index: block * threads + tid.
  mlir::Value globalThread() { return add(mul(block, idx(threads)), tid); }

  /// Emits `body` where `cond` (i1) holds.
  void when(mlir::Value cond, llvm::function_ref<void()> body) {
    auto ifOp = mlir::scf::IfOp::create(b, cond, /*withElse=*/false);
    mlir::OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }
  /// `then()` where `cond` holds, else `otherwise()` (values of `types`).
  llvm::SmallVector<mlir::Value>
  ifElse(mlir::Value cond, mlir::TypeRange types,
         llvm::function_ref<llvm::SmallVector<mlir::Value>()> then,
         llvm::function_ref<llvm::SmallVector<mlir::Value>()> otherwise) {
    auto ifOp = mlir::scf::IfOp::create(b, types, cond, /*withElse=*/true);
    mlir::OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    mlir::scf::YieldOp::create(b, then());
    b.setInsertionPointToStart(ifOp.elseBlock());
    mlir::scf::YieldOp::create(b, otherwise());
    return llvm::SmallVector<mlir::Value>(ifOp.getResults());
  }

  /// A loop over x = first + tid, first + tid + threads, ... < end (index),
  /// carrying `init`; `body` returns the next values.
  llvm::SmallVector<mlir::Value> strided(
      mlir::Value first, mlir::Value end, mlir::ValueRange init,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value x, mlir::ValueRange)> body) {
    auto loop = mlir::scf::ForOp::create(b, add(first, tid), end, idx(threads), init);
    mlir::OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    llvm::SmallVector<mlir::Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
    // A loop without results comes with its terminator.
    if (!init.empty())
      mlir::scf::YieldOp::create(b, next);
    return llvm::SmallVector<mlir::Value>(loop.getResults());
  }
  /// The same loop taking `unroll` x threads indices an iteration: the
  /// body gets the first, x, and handles x + u threads for u < unroll
  /// (checking them against `end` itself).
  llvm::SmallVector<mlir::Value> strided(
      mlir::Value first, mlir::Value end, mlir::ValueRange init, int64_t unroll,
      llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value x, mlir::ValueRange)> body) {
    auto loop = mlir::scf::ForOp::create(b, add(first, tid), end, idx(threads * unroll), init);
    mlir::OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    llvm::SmallVector<mlir::Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
    mlir::scf::YieldOp::create(b, next);
    return llvm::SmallVector<mlir::Value>(loop.getResults());
  }
  void strided(mlir::Value first, mlir::Value end, llvm::function_ref<void(mlir::Value x)> body) {
    strided(first, end, {}, [&](mlir::Value x, mlir::ValueRange) {
      body(x);
      return llvm::SmallVector<mlir::Value>();
    });
  }

  /// `v` (i32) of every thread summed over the workgroup: the inclusive
  /// prefix sum in thread order and the total (Hillis-Steele in `smem`;
  /// the same additions in the same order on every run). Every thread of
  /// the workgroup must call it.
  std::pair<mlir::Value, mlir::Value> scan(mlir::Value v) {
    store(v, smem, tid);
    barrier();
    for (int64_t d = 1; d < threads; d *= 2) {
      mlir::Value x = load(smem, tid);
      mlir::Value has = cmp(P::uge, tid, idx(d));
      mlir::Value y = load(smem, select(has, sub(tid, idx(d)), tid));
      barrier();
      store(add(x, select(has, y, i32(0))), smem, tid);
      barrier();
    }
    mlir::Value inclusive = load(smem, tid);
    mlir::Value total = load(smem, idx(threads - 1));
    barrier(); // the next scan overwrites the buffer
    return {inclusive, total};
  }

  mlir::ImplicitLocOpBuilder &b;
  int64_t threads;
  mlir::Value smem, tid, block;
};

} // namespace mxfp4

#endif // MXFP4_LIB_KERNELS_SIMTEMITTER_H
