//===- TileBuilder.cpp - A C++ DSL for mxtile programs --------------------===//

#include "mxfp4/DSL/TileBuilder.h"
#include "mxfp4/Dialect/Tile/TileEnumConversion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace mxfp4::dsl {

using tile::toTile;

Index Index::operator+(Index o) const {
  return Index(tb, arith::AddIOp::create(tb->builder(), v, o.v));
}
Index Index::operator-(Index o) const {
  return Index(tb, arith::SubIOp::create(tb->builder(), v, o.v));
}
Index Index::operator+(int64_t c) const { return *this + tb->constant(c); }
Index Index::operator*(int64_t c) const {
  return Index(tb, arith::MulIOp::create(tb->builder(), v, tb->constant(c).value()));
}
Index Index::operator/(int64_t c) const {
  return Index(tb, arith::DivUIOp::create(tb->builder(), v, tb->constant(c).value()));
}

TileBuilder::TileBuilder(ModuleOp module, StringRef name)
    : b(module.getLoc(), module.getContext()) {
  MLIRContext *ctx = module.getContext();
  ctx->loadDialect<tile::TileDialect, func::FuncDialect, arith::ArithDialect, scf::SCFDialect>();
  b.setInsertionPointToEnd(module.getBody());
  func = func::FuncOp::create(b, name, b.getFunctionType({}, {}));
  func->setAttr(tile::TileDialect::getKernelAttrName(), b.getUnitAttr());
  b.setInsertionPointToStart(func.addEntryBlock());
}

Value TileBuilder::bufferArg(Type elem) {
  Type t = MemRefType::get({ShapedType::kDynamic}, elem);
  (void)func.insertArgument(func.getNumArguments(), t, {}, b.getLoc());
  return func.getArgument(func.getNumArguments() - 1);
}

Index TileBuilder::i32Arg() {
  (void)func.insertArgument(func.getNumArguments(), b.getI32Type(), {}, b.getLoc());
  Value arg = func.getArgument(func.getNumArguments() - 1);
  return Index(this, arith::IndexCastOp::create(b, b.getIndexType(), arg));
}

Value TileBuilder::f32Arg() {
  (void)func.insertArgument(func.getNumArguments(), b.getF32Type(), {}, b.getLoc());
  return func.getArgument(func.getNumArguments() - 1);
}

Value TileBuilder::workgroupArg(Type elem, int64_t count) {
  auto space = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Type t = MemRefType::get({count}, elem, MemRefLayoutAttrInterface(), space);
  (void)func.insertArgument(func.getNumArguments(), t, {}, b.getLoc());
  return func.getArgument(func.getNumArguments() - 1);
}

Index TileBuilder::constant(int64_t v) { return Index(this, arith::ConstantIndexOp::create(b, v)); }

Index TileBuilder::tileId(int dim) { return Index(this, tile::TileIdOp::create(b, b.getIndexType(), uint32_t(dim))); }

Index TileBuilder::min(Index x, Index y) {
  return Index(this, arith::MinSIOp::create(b, x.value(), y.value()));
}

Tile TileBuilder::load(Value buffer, Index row, Index col, Index ld, Index validRows,
                       int64_t rows, int64_t cols) {
  Type elem = cast<MemRefType>(buffer.getType()).getElementType();
  auto t = tile::TileType::get(b.getContext(), {rows, cols}, elem);
  return Tile(
      tile::LoadOp::create(b, t, buffer, row.value(), col.value(), ld.value(), validRows.value()));
}

MxTile TileBuilder::quantize(Tile t, ScaleRounding rounding, Value dumpData, Value dumpScales,
                             Value qdq) {
  auto data = tile::TileType::get(b.getContext(), {t.rows(), t.cols()}, b.getType<Float4E2M1FNType>());
  auto scales = tile::TileType::get(b.getContext(), {t.rows(), t.cols() / kBlockSize},
                                    b.getType<Float8E8M0FNUType>());
  auto op = tile::QuantizeOp::create(b, data, scales, t.value(), toTile(rounding), dumpData,
                                    dumpScales, qdq);
  return {Tile(op.getData()), Tile(op.getScales())};
}

MxTile TileBuilder::loadQdq(Value data, Index row, Index col, Index ld, Index validRows,
                            int64_t rows, int64_t cols) {
  MLIRContext *ctx = b.getContext();
  auto dt = tile::TileType::get(ctx, {rows, cols}, b.getType<Float4E2M1FNType>());
  auto st = tile::TileType::get(ctx, {rows, cols / kBlockSize}, b.getType<Float8E8M0FNUType>());
  auto op = tile::LoadQdqOp::create(b, dt, st, data, row.value(), col.value(), ld.value(),
                                    validRows.value());
  return {Tile(op.getResult()), Tile(op.getResultScales())};
}

MxTile TileBuilder::loadMx(Value data, Value scales, Index row, Index col, Index ld,
                           Index validRows, int64_t rows, int64_t cols, int64_t scaleRep) {
  MLIRContext *ctx = b.getContext();
  auto dt = tile::TileType::get(ctx, {rows, cols}, b.getType<Float4E2M1FNType>());
  auto st = tile::TileType::get(ctx, {rows, cols / kBlockSize}, b.getType<Float8E8M0FNUType>());
  auto op = tile::LoadMxOp::create(b, dt, st, data, scales, row.value(), col.value(), ld.value(),
                                   validRows.value(), scaleRep);
  return {Tile(op.getResult()), Tile(op.getResultScales())};
}

std::pair<Index, Index> TileBuilder::groupBlock(Value groups, Value numValid, Index block) {
  auto op = tile::GroupBlockOp::create(b, b.getIndexType(), b.getIndexType(), groups, numValid,
                                       block.value());
  return {Index(this, op.getGroup()), Index(this, op.getRows())};
}

MxTile TileBuilder::loadWeight(Value data, Value scales, Index row, Index col, int64_t k,
                               WeightLayout weightLayout, ScaleLayout scaleLayout, int64_t rows,
                               int64_t cols, Value descriptors) {
  MLIRContext *ctx = b.getContext();
  auto dt = tile::TileType::get(ctx, {rows, cols}, b.getType<Float4E2M1FNType>());
  auto st = tile::TileType::get(ctx, {rows, cols / kBlockSize}, b.getType<Float8E8M0FNUType>());
  Value w = tile::LoadWeightOp::create(b, dt, data, row.value(), col.value(), descriptors, k,
                                       toTile(weightLayout));
  Value s = tile::LoadScalesOp::create(b, st, scales, row.value(), (col / kBlockSize).value(), k,
                                       toTile(scaleLayout));
  return {Tile(w), Tile(s)};
}

Tile TileBuilder::zero(int64_t rows, int64_t cols) {
  return Tile(tile::ZeroOp::create(b, tile::TileType::get(b.getContext(), {rows, cols}, f32())));
}

Tile TileBuilder::scaledMma(const MxTile &a, const MxTile &w, Tile acc) {
  return Tile(tile::ScaledMmaOp::create(b, acc.type(), a.data.value(), a.scales.value(), w.data.value(),
                                        w.scales.value(), acc.value()));
}

Tile TileBuilder::activation(const Activation &act, Tile gate, Tile up) {
  auto f = [&](bool used, float v) { return used ? b.getF32FloatAttr(v) : FloatAttr(); };
  bool swiglu = act.kind == tile::ActivationKind::swiglu;
  bool situ = act.kind == tile::ActivationKind::situv2;
  return Tile(tile::ActivationOp::create(b, gate.type(), act.kind, gate.value(), up.value(),
                                         f(swiglu, act.alpha), f(swiglu, act.limit),
                                         f(situ, act.beta), f(situ, act.linearBeta)));
}

void TileBuilder::store(Tile t, Value buffer, Index row, Index col, Index ld, Index validRows,
                        const SplitK &splitK) {
  tile::StoreOp::create(b, t.value(), buffer, row.value(), col.value(), ld.value(),
                        validRows.value(), splitK.workspace, splitK.counters, splitK.splits);
}

void TileBuilder::storeActMx(Tile t, const ActMxOutput &out, Index row, Index col, Index ld,
                             Index cols, Index validRows, const SplitK &splitK) {
  tile::StoreActMxOp::create(
      b, out.kind, t.value(), out.codes, out.scales, row.value(), col.value(), ld.value(),
      cols.value(), validRows.value(), out.p0, out.p1, out.rowWeights, out.doweight, out.debug,
      splitK.workspace, splitK.counters, tile::toTile(out.rounding), splitK.splits, out.scaleRep);
}

void TileBuilder::storeScatterAdd(Tile t, const ScatterAddOutput &out, Index row, Index col,
                                  Index ld, Index validRows) {
  tile::StoreScatterAddOp::create(b, t.value(), out.out, row.value(), col.value(), ld.value(),
                                  validRows.value(), out.rowIds, out.tokens, out.rowWeights,
                                  out.useWeights, out.bias, out.biasRow, out.cols, out.withBias);
}

Tile TileBuilder::loopK(Index lb, Index ub, int64_t step, Tile init,
                        llvm::function_ref<Tile(Index, Tile)> body) {
  auto loop = scf::ForOp::create(b, lb.value(), ub.value(), constant(step).value(),
                                 ValueRange{init.value()});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Tile next = body(Index(this, loop.getInductionVar()), Tile(loop.getRegionIterArg(0)));
    scf::YieldOp::create(b, next.value());
  }
  return Tile(loop.getResult(0));
}

func::FuncOp TileBuilder::finish() {
  func::ReturnOp::create(b);
  return func;
}

} // namespace mxfp4::dsl
