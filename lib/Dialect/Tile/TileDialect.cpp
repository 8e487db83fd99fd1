//===- TileDialect.cpp - The mxtile dialect -------------------------------===//

#include "mxfp4/Dialect/Tile/TileDialect.h"
#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mxfp4::tile;

#include "mxfp4/Dialect/Tile/TileDialect.cpp.inc"
#include "mxfp4/Dialect/Tile/TileEnums.cpp.inc"

/// `16x256xbf16`: a static 2-D shape and an element type.
static ParseResult parseShape(AsmParser &parser, SmallVector<int64_t> &shape, Type &elementType) {
  if (parser.parseDimensionList(shape, /*allowDynamic=*/false, /*withTrailingX=*/true) ||
      parser.parseType(elementType))
    return failure();
  return success();
}

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape, Type elementType) {
  for (int64_t d : shape)
    printer << d << "x";
  printer << elementType;
}

#define GET_TYPEDEF_CLASSES
#include "mxfp4/Dialect/Tile/TileTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mxfp4/Dialect/Tile/TileAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// The schedule
//===----------------------------------------------------------------------===//

/// The C++ schedule of the attribute's parameters, in ODS order.
static mxfp4::Schedule makeSchedule(int64_t bm, int64_t bn, int64_t bk, int64_t splitK,
                                    bool foldedScales, int64_t stages, bool twoWarpgroups,
                                    bool decode, int64_t decodeGroups, int64_t warpSplitK,
                                    int64_t imageStream, bool persistent, bool streamK) {
  mxfp4::Schedule s;
  s.bm = bm;
  s.bn = bn;
  s.bk = bk;
  s.splitK = splitK;
  s.foldedScales = foldedScales;
  s.stages = stages;
  s.twoWarpgroups = twoWarpgroups;
  s.decode = decode;
  s.decodeGroups = decodeGroups;
  s.warpSplitK = warpSplitK;
  s.imageStream = imageStream;
  s.persistent = persistent;
  s.streamK = streamK;
  return s;
}

mxfp4::Schedule ScheduleAttr::getSchedule() const {
  return makeSchedule(getBm(), getBn(), getBk(), getSplitK(), getFoldedScales(), getStages(),
                      getTwoWarpgroups(), getDecode(), getDecodeGroups(), getWarpSplitK(),
                      getImageStream(), getPersistent(), getStreamK());
}

ScheduleAttr ScheduleAttr::get(MLIRContext *ctx, const mxfp4::Schedule &s) {
  return get(ctx, s.bm, s.bn, s.bk, s.splitK, s.foldedScales, s.stages, s.twoWarpgroups, s.decode,
             s.decodeGroups, s.warpSplitK, s.imageStream, s.persistent, s.streamK);
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t bm,
                                   int64_t bn, int64_t bk, int64_t splitK, bool foldedScales,
                                   int64_t stages, bool twoWarpgroups, bool decode,
                                   int64_t decodeGroups, int64_t warpSplitK, int64_t imageStream,
                                   bool persistent, bool streamK) {
  if (mxfp4::Error e = mxfp4::verifyScheduleFields(
          makeSchedule(bm, bn, bk, splitK, foldedScales, stages, twoWarpgroups, decode,
                       decodeGroups, warpSplitK, imageStream, persistent, streamK)))
    return emitError() << e.message();
  return success();
}

LogicalResult TileDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == getScheduleAttrName()) {
    if (!isa<ScheduleAttr>(attr.getValue()))
      return op->emitError() << "'" << getScheduleAttrName() << "' must be a #mxtile.schedule, got "
                             << attr.getValue();
    if (!op->hasAttr(getKernelAttrName()))
      return op->emitError() << "'" << getScheduleAttrName() << "' belongs on a kernel (an op "
                             << "marked '" << getKernelAttrName() << "')";
    return success();
  }
  if (attr.getName() == getKernelAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << getKernelAttrName() << "' is a unit attribute";
    return success();
  }
  if (attr.getName() == getSimtAttrName()) {
    auto threads = dyn_cast<IntegerAttr>(attr.getValue());
    if (!threads || threads.getInt() < 1 || threads.getInt() > 1024)
      return op->emitError() << "'" << getSimtAttrName()
                             << "' is the kernel's threads, an integer in [1, 1024]";
    if (!op->hasAttr(getKernelAttrName()))
      return op->emitError() << "'" << getSimtAttrName() << "' belongs on a kernel";
    return success();
  }
  return op->emitError() << "unknown mxtile attribute '" << attr.getName().getValue() << "'";
}

LogicalResult TileType::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, Type elementType) {
  if (shape.size() != 2)
    return emitError() << "mxtile tiles are 2-D (rows x columns), got rank " << shape.size();
  if (shape[0] <= 0 || shape[1] <= 0)
    return emitError() << "tile dimensions must be positive, got " << shape[0] << "x" << shape[1];
  if (!elementType.isBF16() && !elementType.isF32() && !isa<Float4E2M1FNType>(elementType) &&
      !isa<Float8E8M0FNUType>(elementType))
    return emitError() << "tile element type must be bf16, f32, f4E2M1FN or f8E8M0FNU, got "
                       << elementType;
  return success();
}

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "mxfp4/Dialect/Tile/TileTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mxfp4/Dialect/Tile/TileAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mxfp4/Dialect/Tile/TileOps.cpp.inc"
      >();
}
