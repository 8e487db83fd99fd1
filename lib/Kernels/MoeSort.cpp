//===- MoeSort.cpp - The MoE sorting kernels (SIMT) -----------------------===//

#include "mxfp4/Kernels/MoeSort.h"
#include "SimtEmitter.h"
#include "mxfp4/DSL/TileBuilder.h"

using namespace mlir;

namespace mxfp4 {

namespace {

/// The sorting kernels' shared pieces on top of SimtEmitter.
class SortEmitter : public SimtEmitter {
public:
  SortEmitter(ImplicitLocOpBuilder &b, const KernelSpec &spec, Value smem, Value mask, Value masked)
      : SimtEmitter(b, spec.bn, smem), spec(spec), mask(mask), masked(masked) {}

  /// 1 (i32) when expert `x` (index) is local: always without a mask; the
  /// mask is read only when `masked` is set.
  Value isLocal(Value x) {
    return ifElse(
        cmp(P::ne, masked, i32(0)), b.getI32Type(),
        [&] { return SmallVector<Value>{zext(cmp(P::ne, load(mask, x), i32(0)))}; },
        [&] { return SmallVector<Value>{i32(1)}; })[0];
  }
  /// `count` rounded up to a multiple of block_m (i32).
  Value padded(Value count) {
    Value bm = i32(spec.bm);
    return mul(divu(add(count, i32(spec.bm - 1)), bm), bm);
  }

  const KernelSpec &spec;
  Value mask, masked;
};

/// Ends the kernel: its schedule and its threads (a SIMT kernel).
void finish(dsl::TileBuilder &tb, const KernelSpec &spec) {
  func::FuncOp f = tb.finish();
  f->setAttr(tile::TileDialect::getScheduleAttrName(),
             tile::ScheduleAttr::get(f.getContext(), spec.schedule()));
  f->setAttr(tile::TileDialect::getSimtAttrName(), tb.builder().getI64IntegerAttr(spec.bn));
}

/// The ids a moe_count thread reads per loop iteration.
constexpr int64_t kCountUnroll = 8;

/// T and an i32 flag as their raw i32 arguments.
Value rawI32(dsl::Index v) { return v.value().getDefiningOp<arith::IndexCastOp>().getIn(); }

/// moe_count: workgroup w counts the entries of experts [w G, w G + G) in
/// one read of the ids (G = kCountGroup); workgroup 0 also counts the
/// dropped ids and writes -1 as the position of every entry no expert
/// places (dropped, or routed to a masked-out expert).
void buildCount(dsl::TileBuilder &tb, const KernelSpec &spec) {
  ImplicitLocOpBuilder &b = tb.builder();
  Type i32 = b.getI32Type();
  Value ids = tb.bufferArg(i32), mask = tb.bufferArg(i32), counts = tb.bufferArg(i32);
  Value status = tb.bufferArg(i32), positions = tb.bufferArg(i32);
  dsl::Index tokenArg = tb.i32Arg();
  Value masked = rawI32(tb.i32Arg());
  Value smem = tb.workgroupArg(i32, spec.bn);
  SortEmitter s(b, spec, smem, mask, masked);
  using P = SimtEmitter::P;
  const int64_t experts = spec.n;
  Value entries = s.mul(tokenArg.value(), s.idx(spec.k));
  Value first = s.toI32(s.mul(s.block, s.idx(kMoeCountGroup)));
  Value isFirst = s.cmp(P::eq, s.block, s.idx(0));
  SmallVector<Value> init(kMoeCountGroup + 1, s.i32(0));
  // kCountUnroll ids a thread and iteration, their loads issued first (in
  // range: past the end re-reads the last id, and counts nothing).
  Value last = s.sub(entries, s.idx(1));
  SmallVector<Value> sums =
      s.strided(s.idx(0), entries, init, kCountUnroll, [&](Value i0, ValueRange c) {
        SmallVector<Value> at, valid, id;
        for (int64_t u = 0; u < kCountUnroll; ++u) {
          at.push_back(s.add(i0, s.idx(u * s.threads)));
          valid.push_back(s.cmp(P::ult, at.back(), entries));
          id.push_back(s.load(ids, arith::MinUIOp::create(b, at.back(), last)));
        }
        SmallVector<Value> next(c.begin(), c.end());
        for (int64_t u = 0; u < kCountUnroll; ++u) {
          // Unsigned: negative ids are out of range too.
          Value rel = s.select(valid[size_t(u)], s.sub(id[size_t(u)], first), s.i32(-1));
          for (int64_t g = 0; g < kMoeCountGroup; ++g)
            next[size_t(g)] = s.add(next[size_t(g)], s.zext(s.cmp(P::eq, rel, s.i32(g))));
          Value bad = arith::AndIOp::create(b, valid[size_t(u)],
                                            s.cmp(P::uge, id[size_t(u)], s.i32(experts)));
          next[kMoeCountGroup] = s.add(next[kMoeCountGroup], s.zext(bad));
          // Workgroup 0: the entries no expert places have no position.
          s.when(arith::AndIOp::create(b, isFirst, valid[size_t(u)]), [&] {
            Value unplaced = s.ifElse(
                bad, b.getI1Type(), [&] { return SmallVector<Value>{bad}; },
                [&] {
                  return SmallVector<Value>{
                      s.cmp(P::eq, s.isLocal(s.toIndex(id[size_t(u)])), s.i32(0))};
                })[0];
            s.when(unplaced, [&] { s.store(s.i32(-1), positions, at[size_t(u)]); });
          });
        }
        return next;
      });
  Value leader = s.cmp(P::eq, s.tid, s.idx(0));
  for (int64_t g = 0; g < kMoeCountGroup; ++g) {
    Value count = s.scan(sums[size_t(g)]).second;
    Value e = s.add(s.mul(s.block, s.idx(kMoeCountGroup)), s.idx(g));
    s.when(arith::AndIOp::create(b, leader, s.cmp(P::ult, e, s.idx(experts))), [&] {
      Value local = s.cmp(P::ne, s.isLocal(e), s.i32(0));
      s.store(s.select(local, count, s.i32(0)), counts, e);
    });
  }
  Value dropped = s.scan(sums[kMoeCountGroup]).second;
  s.when(arith::AndIOp::create(b, leader, isFirst), [&] { s.store(dropped, status, s.idx(0)); });
  finish(tb, spec);
}

/// moe_place: workgroup e places expert e's entries.
void buildPlace(dsl::TileBuilder &tb, const KernelSpec &spec) {
  ImplicitLocOpBuilder &b = tb.builder();
  Type i32 = b.getI32Type();
  Value ids = tb.bufferArg(i32), weights = tb.bufferArg(tb.f32()), mask = tb.bufferArg(i32);
  Value counts = tb.bufferArg(i32), sortedIds = tb.bufferArg(i32);
  Value sortedWeights = tb.bufferArg(tb.f32()), expertIds = tb.bufferArg(i32);
  Value numValid = tb.bufferArg(i32), positions = tb.bufferArg(i32);
  dsl::Index tokenArg = tb.i32Arg();
  Value tokens = tokenArg.value(), tokensI32 = rawI32(tokenArg);
  Value masked = rawI32(tb.i32Arg());
  Value smem = tb.workgroupArg(i32, spec.bn);
  // One pass's ids, staged so each thread reads its run of BK from shared
  // memory (one padding word per run: the runs of a warp hit distinct banks).
  const int64_t threads = spec.bn, run = spec.bk, perPass = threads * run;
  Value staged = tb.workgroupArg(i32, threads * (run + 1));
  SortEmitter s(b, spec, smem, mask, masked);
  using P = SimtEmitter::P;
  const int64_t topk = spec.k, experts = spec.n;
  Value expert = s.block;
  Value entries = s.mul(tokens, s.idx(topk)); // T * topk (index)
  Value expertI32 = s.toI32(expert);

  // This expert's offset: the padded counts of the experts before it; its
  // local id: the local experts before it (its own index without a mask).
  SmallVector<Value> before =
      s.strided(s.idx(0), expert, ValueRange{s.i32(0)}, [&](Value x, ValueRange c) {
        return SmallVector<Value>{s.add(c[0], s.padded(s.load(counts, x)))};
      });
  Value offset = s.scan(before[0]).second;
  Value localId = s.ifElse(
      s.cmp(P::ne, masked, s.i32(0)), i32,
      [&] {
        SmallVector<Value> l =
            s.strided(s.idx(0), expert, ValueRange{s.i32(0)}, [&](Value x, ValueRange c) {
              return SmallVector<Value>{s.add(c[0], s.isLocal(x))};
            });
        return SmallVector<Value>{s.scan(l[0]).second};
      },
      [&] { return SmallVector<Value>{expertI32}; })[0];
  Value count = s.load(counts, expert);
  Value padded = s.padded(count);
  Value sentinel = arith::OrIOp::create(b, s.i32(topk << 24), tokensI32);
  Value zeroF = s.f32(0.0f);

  // The entries, in passes of threads x run ids: each thread counts the
  // matches in its run, the workgroup's prefix sum ranks them.
  s.when(s.cmp(P::sgt, count, s.i32(0)), [&] {
    Value passes = s.divu(s.add(entries, s.idx(perPass - 1)), s.idx(perPass));
    auto loop = scf::ForOp::create(b, s.idx(0), passes, s.idx(1), ValueRange{s.i32(0)});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value passBase = s.mul(loop.getInductionVar(), s.idx(perPass));
    // Stage the pass's ids, coalesced (-1 past the end: no expert's).
    for (int64_t j = 0; j < run; ++j) {
      Value local = s.add(s.idx(j * threads), s.tid);
      Value i = s.add(passBase, local);
      // Unconditional loads (past the end re-reads the last id), so a
      // thread's run of loads is in flight at once.
      Value id =
          s.select(s.cmp(P::ult, i, entries),
                   s.load(ids, arith::MinUIOp::create(b, i, s.sub(entries, s.idx(1)))), s.i32(-1));
      s.store(id, staged, s.add(local, s.divu(local, s.idx(run))));
    }
    s.barrier();
    Value runBase = s.mul(s.tid, s.idx(run + 1));
    auto mine = [&](int64_t j) {
      return s.cmp(P::eq, s.load(staged, s.add(runBase, s.idx(j))), expertI32);
    };
    Value inRun = s.i32(0);
    for (int64_t j = 0; j < run; ++j)
      inRun = s.add(inRun, s.zext(mine(j)));
    auto [inclusive, total] = s.scan(inRun); // its barriers also end the staging's reads
    Value done = loop.getRegionIterArgs()[0];
    Value pos = s.add(s.add(offset, done), s.sub(inclusive, inRun));
    Value first = s.add(passBase, s.mul(s.tid, s.idx(run)));
    for (int64_t j = 0; j < run; ++j) {
      // The staged ids stay until the next pass's staging, after the scan.
      Value hit = mine(j);
      s.when(hit, [&] {
        Value i = s.add(first, s.idx(j));
        Value i32i = s.toI32(i);
        Value token = s.divu(i32i, s.i32(topk));
        Value slot = s.remu(i32i, s.i32(topk));
        Value at = s.toIndex(pos);
        s.store(arith::OrIOp::create(b, arith::ShLIOp::create(b, slot, s.i32(24)), token),
                sortedIds, at);
        s.store(s.load(weights, i), sortedWeights, at);
        s.store(pos, positions, i);
      });
      pos = s.add(pos, s.zext(hit));
    }
    s.barrier(); // the next pass restages
    scf::YieldOp::create(b, s.add(done, total));
  });

  // Its padding and its blocks.
  Value end = s.toIndex(s.add(offset, padded));
  s.strided(s.toIndex(s.add(offset, count)), end, [&](Value x) {
    s.store(sentinel, sortedIds, x);
    s.store(zeroF, sortedWeights, x);
  });
  Value bm = s.idx(spec.bm);
  s.strided(s.divu(s.toIndex(offset), bm), s.divu(end, bm),
            [&](Value blk) { s.store(localId, expertIds, blk); });

  // The last workgroup: the valid length and the tail past it.
  s.when(s.cmp(P::eq, expert, s.idx(experts - 1)), [&] {
    s.when(s.cmp(P::eq, s.tid, s.idx(0)), [&] {
      s.store(s.add(offset, padded), numValid, s.idx(0));
      s.store(tokensI32, numValid, s.idx(1));
    });
    Value paddedEntries = s.add(entries, s.idx(experts * spec.bm - topk));
    Value blocks = s.divu(s.add(paddedEntries, s.idx(spec.bm - 1)), bm);
    s.strided(end, paddedEntries, [&](Value x) {
      s.store(sentinel, sortedIds, x);
      s.store(zeroF, sortedWeights, x);
    });
    s.strided(s.divu(end, bm), blocks, [&](Value blk) { s.store(s.i32(-1), expertIds, blk); });
  });
  finish(tb, spec);
}

} // namespace

void buildMoeSort(ModuleOp module, const KernelSpec &spec) {
  module.getContext()->loadDialect<gpu::GPUDialect, memref::MemRefDialect>();
  dsl::TileBuilder tb(module, spec.name());
  if (spec.op == OpKind::MoePlace)
    buildPlace(tb, spec);
  else
    buildCount(tb, spec);
}

} // namespace mxfp4
