//===- GroupBlockGuard.cpp - mxtile.group_block as a guard ----------------===//

#include "mxfp4/Conversion/GroupBlockGuard.h"
#include "mxfp4/Conversion/IndexMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace mxfp4 {

scf::IfOp emitGroupBlockGuard(ImplicitLocOpBuilder &b, tile::GroupBlockOp op, IRMapping &mapping,
                              int64_t bm) {
  auto load = [&](Value buffer, Value at) {
    return memref::LoadOp::create(b, mapping.lookup(buffer), ValueRange{at}).getResult();
  };
  Value block = mapping.lookup(op.getBlock());
  Value group = load(op.getGroups(), block);
  Value rows =
      arith::IndexCastUIOp::create(b, b.getIndexType(), load(op.getNumValid(), idxConst(b, 0)));
  Value first = idxMul(b, block, bm);
  Value live =
      arith::AndIOp::create(b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, first, rows),
                            arith::CmpIOp::create(b, arith::CmpIPredicate::sge, group,
                                                  arith::ConstantIntOp::create(b, 0, 32)));
  mapping.map(op.getGroup(), arith::IndexCastOp::create(b, b.getIndexType(), group));
  mapping.map(op.getRows(), rows);
  auto guard = scf::IfOp::create(b, live, /*withElseRegion=*/false);
  b.setInsertionPointToStart(guard.thenBlock());
  return guard;
}

} // namespace mxfp4
