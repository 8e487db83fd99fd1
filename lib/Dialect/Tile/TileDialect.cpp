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
