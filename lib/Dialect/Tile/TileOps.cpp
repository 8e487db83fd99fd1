//===- TileOps.cpp - mxtile operation verifiers ---------------------------===//
//
// Verifiers check what a lowering relies on: tile shapes that agree across
// operands, the 32-column block structure of MXFP4, and the parameters each
// activation needs. Messages name the operand and the rule.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Format/Layout.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mxfp4::tile;

static constexpr int64_t kBlock = 32;

static ParseResult parseActivationKind(OpAsmParser &parser, ActivationKindAttr &kind) {
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ActivationKind> k = symbolizeActivationKind(keyword);
  if (!k)
    return parser.emitError(loc) << "unknown activation '" << keyword
                                 << "'; expected none, silu, swiglu or situv2";
  kind = ActivationKindAttr::get(parser.getContext(), *k);
  return success();
}

static void printActivationKind(OpAsmPrinter &printer, Operation *, ActivationKindAttr kind) {
  printer << stringifyActivationKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "mxfp4/Dialect/Tile/TileOps.cpp.inc"

/// Global buffers are 1-D; the op supplies the 2-D addressing.
static LogicalResult verifyBuffer(Operation *op, Value base, StringRef what) {
  auto type = cast<MemRefType>(base.getType());
  if (type.getRank() != 1)
    return op->emitOpError() << what << " must be a 1-D memref (rows are addressed with `ld`), got "
                             << type;
  return success();
}

LogicalResult LoadOp::verify() {
  if (failed(verifyBuffer(*this, getBase(), "base")))
    return failure();
  Type elem = getBase().getType().getElementType();
  if (elem != getResult().getType().getElementType())
    return emitOpError() << "loads " << elem << " elements but the result tile holds "
                         << getResult().getType().getElementType();
  return success();
}

LogicalResult QuantizeOp::verify() {
  if (bool(getDumpData()) != bool(getDumpScales()))
    return emitOpError() << "dump takes both a data and a scale buffer";
  if (getDumpData() && getQdq())
    return emitOpError() << "writes either the codes and scales (dump) or the dequantized "
                            "values (qdq), not both";
  TileType in = getInput().getType(), data = getData().getType(), scales = getScales().getType();
  if (in.getCols() % kBlock != 0)
    return emitOpError() << "quantizes along columns in blocks of 32, but the tile has "
                         << in.getCols() << " columns";
  if (data.getShape() != in.getShape())
    return emitOpError() << "data tile must have the input's shape " << in.getRows() << "x"
                         << in.getCols() << ", got " << data.getRows() << "x" << data.getCols();
  if (scales.getRows() != in.getRows() || scales.getCols() != in.getCols() / kBlock)
    return emitOpError() << "scale tile must be " << in.getRows() << "x" << in.getCols() / kBlock
                         << " (one scale per 32 columns), got " << scales.getRows() << "x"
                         << scales.getCols();
  return success();
}

/// An MXFP4 tile `t` with its scales `st`: whole 32-element blocks, one
/// scale per row and block.
static LogicalResult verifyMxTile(Operation *op, TileType t, TileType st) {
  if (t.getCols() % kBlock != 0)
    return op->emitOpError() << "tile of " << t.getCols()
                             << " K-elements must be a multiple of 32";
  if (st.getRows() != t.getRows() || st.getCols() != t.getCols() / kBlock)
    return op->emitOpError() << "scales must be " << t.getRows() << "x" << t.getCols() / kBlock
                             << ", got " << st.getRows() << "x" << st.getCols();
  return success();
}

/// The scale layout of MoE intermediates (Format/Layout.h).
static LogicalResult verifyScaleRep(Operation *op, int64_t rep) {
  if (!mxfp4::isGfx1250MoeScaleRep(rep))
    return op->emitOpError() << "scaleRep is 1 (row-major scales) or gfx1250's quant_wmma_rep "
                                "2, 4 or 8, got "
                             << rep;
  return success();
}

LogicalResult LoadMxOp::verify() {
  if (failed(verifyScaleRep(*this, getScaleRep())))
    return failure();
  return verifyMxTile(*this, getResult().getType(), getResultScales().getType());
}

LogicalResult LoadQdqOp::verify() {
  return verifyMxTile(*this, getResult().getType(), getResultScales().getType());
}

LogicalResult LoadWeightOp::verify() {
  TileType t = getResult().getType();
  int64_t k = getK();
  if (k % kBlock != 0)
    return emitOpError() << "k = " << k << " must be a multiple of 32";
  if (t.getCols() > k || t.getCols() % kBlock != 0)
    return emitOpError() << "tile of " << t.getCols() << " K-elements must be a multiple of 32 and "
                         << "at most k = " << k;
  if (getLayout() == WeightLayoutKind::gfx950_mfma16) {
    if (t.getRows() % 16 != 0)
      return emitOpError() << "gfx950_mfma16 weights come in groups of 16 rows; tile has "
                           << t.getRows() << " rows";
    if (k % 64 != 0)
      return emitOpError() << "gfx950_mfma16 weights need k % 64 == 0, got k = " << k;
  }
  return success();
}

LogicalResult LoadScalesOp::verify() {
  TileType t = getResult().getType();
  if (getK() % kBlock != 0)
    return emitOpError() << "k = " << getK() << " must be a multiple of 32";
  if (t.getCols() > getK() / kBlock)
    return emitOpError() << "tile of " << t.getCols() << " K-blocks exceeds k / 32 = "
                         << getK() / kBlock;
  return success();
}

LogicalResult ScaledMmaOp::verify() {
  TileType a = getA().getType(), as = getAScales().getType(), b = getB().getType(),
           bs = getBScales().getType(), acc = getAcc().getType();
  if (a.getCols() != b.getCols())
    return emitOpError() << "A has K = " << a.getCols() << " but B has K = " << b.getCols()
                         << " (both operands are K-major)";
  if (a.getCols() % kBlock != 0)
    return emitOpError() << "K = " << a.getCols() << " must be a multiple of 32";
  int64_t kb = a.getCols() / kBlock;
  if (as.getRows() != a.getRows() || as.getCols() != kb)
    return emitOpError() << "A scales must be " << a.getRows() << "x" << kb << ", got "
                         << as.getRows() << "x" << as.getCols();
  if (bs.getRows() != b.getRows() || bs.getCols() != kb)
    return emitOpError() << "B scales must be " << b.getRows() << "x" << kb << ", got "
                         << bs.getRows() << "x" << bs.getCols();
  if (acc.getRows() != a.getRows() || acc.getCols() != b.getRows())
    return emitOpError() << "accumulator must be " << a.getRows() << "x" << b.getRows()
                         << " (rows of A x rows of B), got " << acc.getRows() << "x"
                         << acc.getCols();
  if (getResult().getType() != acc)
    return emitOpError() << "result type must equal the accumulator type";
  return success();
}

LogicalResult ActivationOp::verify() {
  ActivationKind kind = getKind();
  StringRef name = stringifyActivationKind(kind);
  if (getUp() && getUp().getType() != getInput().getType())
    return emitOpError() << "gate and up tiles must have the same type";
  if (getResult().getType() != getInput().getType())
    return emitOpError() << "result must have the input's type";
  bool gated = kind == ActivationKind::swiglu || kind == ActivationKind::situv2;
  if (gated && !getUp())
    return emitOpError() << name << " needs a gate and an up operand";
  if (kind == ActivationKind::none && getUp())
    return emitOpError() << "'none' takes one operand";
  auto needs = [&](std::optional<APFloat> v, StringRef attr, bool positive) -> LogicalResult {
    if (!v)
      return emitOpError() << name << " needs the '" << attr << "' attribute";
    if (positive && !(v->convertToFloat() > 0.0f))
      return emitOpError() << "'" << attr << "' must be > 0, got " << v->convertToFloat();
    return success();
  };
  auto unused = [&](bool present, StringRef attr) -> LogicalResult {
    if (present)
      return emitOpError() << "'" << attr << "' is not a parameter of " << name;
    return success();
  };
  bool isSwiglu = kind == ActivationKind::swiglu, isSitu = kind == ActivationKind::situv2;
  if (isSwiglu && (failed(needs(getAlphaAttr() ? std::optional(getAlphaAttr().getValue())
                                               : std::nullopt,
                                "alpha", false)) ||
                   failed(needs(getLimitAttr() ? std::optional(getLimitAttr().getValue())
                                               : std::nullopt,
                                "limit", true))))
    return failure();
  if (isSitu && (failed(needs(getBetaAttr() ? std::optional(getBetaAttr().getValue())
                                            : std::nullopt,
                              "beta", true)) ||
                 failed(needs(getLinearBetaAttr()
                                  ? std::optional(getLinearBetaAttr().getValue())
                                  : std::nullopt,
                              "linear_beta", true))))
    return failure();
  if (failed(unused(!isSwiglu && getAlphaAttr(), "alpha")) ||
      failed(unused(!isSwiglu && getLimitAttr(), "limit")) ||
      failed(unused(!isSitu && getBetaAttr(), "beta")) ||
      failed(unused(!isSitu && getLinearBetaAttr(), "linear_beta")))
    return failure();
  return success();
}

LogicalResult StoreOp::verify() {
  if (failed(verifyBuffer(*this, getBase(), "base")))
    return failure();
  if (bool(getWorkspace()) != bool(getCounters()))
    return emitOpError() << "reduce takes both a workspace and a counter buffer";
  if (getWorkspace() && getSplits() < 2 && getSplits() != 0)
    return emitOpError() << "a split-K reduction needs splits >= 2 (or 0: stream-K), got "
                         << getSplits();
  if (!getWorkspace() && getSplits() != 1)
    return emitOpError() << "splits = " << getSplits() << " needs reduce(workspace, counters)";
  Type elem = getBase().getType().getElementType();
  if (!elem.isBF16() && !elem.isF32())
    return emitOpError() << "stores bf16 or f32, but the buffer holds " << elem;
  return success();
}

LogicalResult StoreScatterAddOp::verify() {
  if (getValue().getType().getCols() % 4 != 0)
    return emitOpError() << "adds 4 columns at a time: the tile's columns must be a multiple of "
                            "4, got "
                         << getValue().getType().getCols();
  if (bool(getBias()) != (getBiasRow() && getCols() && getWithBias()))
    return emitOpError() << "a bias comes with its row offset, the real columns and the i32 "
                            "that turns it on (all or none)";
  return success();
}

LogicalResult StoreActMxOp::verify() {
  if (failed(verifyScaleRep(*this, getScaleRep())))
    return failure();
  ActivationKind kind = getKind();
  if (kind == ActivationKind::none)
    return emitOpError() << "stores a gated activation (silu, swiglu or situv2), got none";
  TileType t = getValue().getType();
  if (t.getCols() % 64 != 0)
    return emitOpError() << "pairs 8 gate and 8 up columns into 8 intermediate columns, 32 of "
                            "which make an MXFP4 block: the tile's columns must be a multiple "
                            "of 64, got "
                         << t.getCols();
  if (bool(getWorkspace()) != bool(getCounters()))
    return emitOpError() << "reduce takes both a workspace and a counter buffer";
  if (getWorkspace() && getSplits() < 2)
    return emitOpError() << "a split-K reduction needs splits >= 2, got " << getSplits();
  if (!getWorkspace() && getSplits() != 1)
    return emitOpError() << "splits = " << getSplits() << " needs reduce(workspace, counters)";
  return success();
}
