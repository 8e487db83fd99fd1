//===- MoeSort.cpp - The MoE sorting kernels (SIMT) -----------------------===//

#include "mxfp4/Kernels/MoeSort.h"
#include "mxfp4/DSL/TileBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mxfp4 {

namespace {

/// The body of a sorting kernel: index math on the workgroup's threads.
class SortEmitter {
public:
  SortEmitter(ImplicitLocOpBuilder &b, const KernelSpec &spec, Value smem, Value mask, Value masked)
      : b(b), spec(spec), smem(smem), mask(mask), masked(masked) {
    tid = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
    expert = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, b.getI32Type(), v); }
  Value toIndex(Value v) { return arith::IndexCastOp::create(b, b.getIndexType(), v); }
  Value toI32(Value v) { return arith::IndexCastOp::create(b, b.getI32Type(), v); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) { return arith::CmpIOp::create(b, p, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, c, x, y); }
  Value load(Value mem, Value i) { return memref::LoadOp::create(b, mem, ValueRange{i}); }
  void store(Value v, Value mem, Value i) { memref::StoreOp::create(b, v, mem, ValueRange{i}); }
  void barrier() { gpu::BarrierOp::create(b); }

  /// 1 (i32) when expert `x` (index) is local: always without a mask;
  /// the mask is read only when `masked` is set.
  Value isLocal(Value x) {
    Value useMask = cmp(arith::CmpIPredicate::ne, masked, i32(0));
    auto ifOp = scf::IfOp::create(b, b.getI32Type(), useMask, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value on = cmp(arith::CmpIPredicate::ne, load(mask, x), i32(0));
      scf::YieldOp::create(b, arith::ExtUIOp::create(b, b.getI32Type(), on).getResult());
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, i32(1));
    }
    return ifOp.getResult(0);
  }

  /// `v` (i32) of every thread summed over the workgroup: the inclusive
  /// prefix sum in thread order, and the total (Hillis-Steele in shared
  /// memory; the same order of additions on every run).
  std::pair<Value, Value> scan(Value v) {
    const int64_t threads = spec.bn;
    store(v, smem, tid);
    barrier();
    for (int64_t d = 1; d < threads; d *= 2) {
      Value x = load(smem, tid);
      Value has = cmp(arith::CmpIPredicate::uge, tid, idx(d));
      Value y = load(smem, select(has, sub(tid, idx(d)), tid));
      barrier();
      store(add(x, select(has, y, i32(0))), smem, tid);
      barrier();
    }
    Value inclusive = load(smem, tid);
    Value total = load(smem, idx(threads - 1));
    barrier(); // the next scan overwrites the buffer
    return {inclusive, total};
  }

  /// count rounded up to a multiple of block_m (i32).
  Value padded(Value count) {
    Value bm = i32(spec.bm);
    return mul(arith::DivUIOp::create(b, add(count, i32(spec.bm - 1)), bm), bm);
  }

  /// A loop over x = first + tid, first + tid + threads, ... < end (index),
  /// carrying `init`; `body` returns the next values.
  SmallVector<Value> strided(Value first, Value end, ValueRange init,
                             function_ref<SmallVector<Value>(Value x, ValueRange carried)> body) {
    auto loop = scf::ForOp::create(b, add(first, tid), end, idx(spec.bn), init);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> next = body(loop.getInductionVar(), loop.getRegionIterArgs());
    // A loop without results comes with its terminator.
    if (!init.empty())
      scf::YieldOp::create(b, next);
    return SmallVector<Value>(loop.getResults());
  }
  void strided(Value first, Value end, function_ref<void(Value x)> body) {
    strided(first, end, {}, [&](Value x, ValueRange) {
      body(x);
      return SmallVector<Value>();
    });
  }
  /// Emits `body` where `cond` (i1) holds.
  void when(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, cond, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }

  ImplicitLocOpBuilder &b;
  const KernelSpec &spec;
  Value smem, mask, masked, tid, expert;
};

/// Ends the kernel: its schedule and its threads (a SIMT kernel).
void finish(dsl::TileBuilder &tb, const KernelSpec &spec) {
  mlir::func::FuncOp f = tb.finish();
  f->setAttr(tile::TileDialect::getScheduleAttrName(),
             tile::ScheduleAttr::get(f.getContext(), spec.schedule()));
  f->setAttr(tile::TileDialect::getSimtAttrName(), tb.builder().getI64IntegerAttr(spec.bn));
}

} // namespace

void buildMoeSort(ModuleOp module, const KernelSpec &spec) {
  module.getContext()->loadDialect<gpu::GPUDialect, memref::MemRefDialect>();
  dsl::TileBuilder tb(module, spec.name());
  ImplicitLocOpBuilder &b = tb.builder();
  Type i32 = b.getI32Type();
  const bool place = spec.op == OpKind::MoePlace;
  Value ids = tb.bufferArg(i32);
  Value weights = place ? tb.bufferArg(tb.f32()) : Value();
  Value mask = tb.bufferArg(i32);
  Value counts = tb.bufferArg(i32);
  Value status, sortedIds, sortedWeights, expertIds, numValid;
  if (place) {
    sortedIds = tb.bufferArg(i32);
    sortedWeights = tb.bufferArg(tb.f32());
    expertIds = tb.bufferArg(i32);
    numValid = tb.bufferArg(i32);
  } else {
    status = tb.bufferArg(i32);
  }
  // T and `masked` as their raw i32 arguments and T as an index.
  auto raw = [](dsl::Index v) { return v.value().getDefiningOp<arith::IndexCastOp>().getIn(); };
  dsl::Index tokenArg = tb.i32Arg();
  Value tokens = tokenArg.value(), tokensI32 = raw(tokenArg);
  Value masked = raw(tb.i32Arg());
  Value smem = tb.workgroupArg(i32, spec.bn);

  SortEmitter s(b, spec, smem, mask, masked);
  using P = arith::CmpIPredicate;
  const int64_t topk = spec.k, experts = spec.n, threads = spec.bn, run = spec.bk;
  Value entries = s.mul(tokens, s.idx(topk)); // T * topk (index)
  Value expertI32 = s.toI32(s.expert);

  if (!place) {
    // Count the entries of this expert (all of them when it is local or
    // workgroup 0, which also counts the dropped ids).
    Value local = s.isLocal(s.expert);
    Value isFirst = s.cmp(P::eq, s.expert, s.idx(0));
    Value scanIds = arith::OrIOp::create(b, s.cmp(P::ne, local, s.i32(0)), isFirst);
    auto ifOp = scf::IfOp::create(b, TypeRange{i32, i32}, scanIds, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      SmallVector<Value> r =
          s.strided(s.idx(0), entries, ValueRange{s.i32(0), s.i32(0)}, [&](Value i, ValueRange c) {
            Value id = s.load(ids, i);
            Value mine = s.cmp(P::eq, id, expertI32);
            // Unsigned: negative ids are out of range too.
            Value bad = s.cmp(P::uge, id, s.i32(experts));
            return SmallVector<Value>{s.add(c[0], arith::ExtUIOp::create(b, i32, mine)),
                                      s.add(c[1], arith::ExtUIOp::create(b, i32, bad))};
          });
      scf::YieldOp::create(b, r);
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, ValueRange{s.i32(0), s.i32(0)});
    }
    Value count = s.scan(ifOp.getResult(0)).second;
    Value dropped = s.scan(ifOp.getResult(1)).second;
    Value leader = s.cmp(P::eq, s.tid, s.idx(0));
    s.when(leader, [&] {
      s.store(s.select(s.cmp(P::ne, local, s.i32(0)), count, s.i32(0)), counts, s.expert);
      s.when(isFirst, [&] { s.store(dropped, status, s.idx(0)); });
    });
    finish(tb, spec);
    return;
  }

  // This expert's offset: the padded counts of the experts before it; its
  // local id: the local experts before it.
  SmallVector<Value> before =
      s.strided(s.idx(0), s.expert, ValueRange{s.i32(0), s.i32(0)}, [&](Value x, ValueRange c) {
        return SmallVector<Value>{s.add(c[0], s.padded(s.load(counts, x))),
                                  s.add(c[1], s.isLocal(x))};
      });
  Value offset = s.scan(before[0]).second;
  Value localId = s.scan(before[1]).second;
  Value count = s.load(counts, s.expert);
  Value padded = s.padded(count);
  Value sentinel = arith::OrIOp::create(b, s.i32(topk << 24), tokensI32);
  Value zeroF = arith::ConstantFloatOp::create(b, b.getF32Type(), APFloat(0.0f));

  // The entries, in passes of threads x run ids: each thread counts the
  // matches in its run, the workgroup's prefix sum ranks them.
  s.when(s.cmp(P::sgt, count, s.i32(0)), [&] {
    const int64_t perPass = threads * run;
    Value passes = arith::DivUIOp::create(b, s.add(entries, s.idx(perPass - 1)), s.idx(perPass));
    auto loop = scf::ForOp::create(b, s.idx(0), passes, s.idx(1), ValueRange{s.i32(0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = s.add(s.mul(loop.getInductionVar(), s.idx(perPass)), s.mul(s.tid, s.idx(run)));
    // Whether entry base + j is this expert's (i1), for the run.
    auto matches = [&](Value i) {
      Value inside = s.cmp(P::ult, i, entries);
      auto ifOp = scf::IfOp::create(b, b.getI1Type(), inside, /*withElse=*/true);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(b, s.cmp(P::eq, s.load(ids, i), expertI32));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, arith::ConstantIntOp::create(b, b.getI1Type(), 0).getResult());
      return ifOp.getResult(0);
    };
    auto inRun = [&](Value init, function_ref<Value(Value i, Value carried)> body) {
      auto runLoop = scf::ForOp::create(b, s.idx(0), s.idx(run), s.idx(1), ValueRange{init});
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(runLoop.getBody());
      Value i = s.add(base, runLoop.getInductionVar());
      scf::YieldOp::create(b, body(i, runLoop.getRegionIterArgs()[0]));
      return runLoop.getResult(0);
    };
    Value mineInRun = inRun(s.i32(0), [&](Value i, Value c) {
      return s.add(c, arith::ExtUIOp::create(b, i32, matches(i)));
    });
    auto [inclusive, total] = s.scan(mineInRun);
    Value done = loop.getRegionIterArgs()[0];
    Value first = s.add(s.add(offset, done), s.sub(inclusive, mineInRun));
    inRun(first, [&](Value i, Value pos) {
      auto ifOp = scf::IfOp::create(b, i32, matches(i), /*withElse=*/true);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      Value at = s.toIndex(pos);
      Value i32i = s.toI32(i);
      Value token = arith::DivUIOp::create(b, i32i, s.i32(topk));
      Value slot = arith::RemUIOp::create(b, i32i, s.i32(topk));
      s.store(arith::OrIOp::create(b, arith::ShLIOp::create(b, slot, s.i32(24)), token), sortedIds,
              at);
      s.store(s.load(weights, i), sortedWeights, at);
      scf::YieldOp::create(b, s.add(pos, s.i32(1)));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(b, pos);
      return ifOp.getResult(0);
    });
    scf::YieldOp::create(b, s.add(done, total));
  });

  // Its padding and its blocks.
  Value end = s.toIndex(s.add(offset, padded));
  s.strided(s.toIndex(s.add(offset, count)), end, [&](Value x) {
    s.store(sentinel, sortedIds, x);
    s.store(zeroF, sortedWeights, x);
  });
  Value bm = s.idx(spec.bm);
  s.strided(arith::DivUIOp::create(b, s.toIndex(offset), bm), arith::DivUIOp::create(b, end, bm),
            [&](Value blk) { s.store(localId, expertIds, blk); });

  // The last workgroup: the valid length and the tail past it.
  s.when(s.cmp(P::eq, s.expert, s.idx(experts - 1)), [&] {
    s.when(s.cmp(P::eq, s.tid, s.idx(0)), [&] {
      s.store(s.add(offset, padded), numValid, s.idx(0));
      s.store(tokensI32, numValid, s.idx(1));
    });
    Value paddedEntries = s.add(entries, s.idx(experts * spec.bm - topk));
    Value blocks = arith::DivUIOp::create(b, s.add(paddedEntries, s.idx(spec.bm - 1)), bm);
    s.strided(end, paddedEntries, [&](Value x) {
      s.store(sentinel, sortedIds, x);
      s.store(zeroF, sortedWeights, x);
    });
    s.strided(arith::DivUIOp::create(b, end, bm), blocks,
              [&](Value blk) { s.store(s.i32(-1), expertIds, blk); });
  });
  finish(tb, spec);
}

} // namespace mxfp4
