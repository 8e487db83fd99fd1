//===- SimtOutlining.cpp - SIMT kernels into the target module ------------===//

#include "mxfp4/Conversion/SimtOutlining.h"
#include "mxfp4/Conversion/KernelOutlining.h"
#include "mxfp4/Dialect/Tile/TileOps.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace mxfp4 {

/// The static shape global buffers take under the bare-pointer convention
/// (nominal: the kernels index them with their own bounds).
static constexpr int64_t kNominalElements = int64_t(1) << 27;

static bool isWorkgroup(MemRefType t) {
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(t.getMemorySpace());
  return space && space.getValue() == gpu::AddressSpace::Workgroup;
}

bool isSimtKernel(func::FuncOp kernel) {
  return kernel->hasAttr(tile::TileDialect::getSimtAttrName());
}

LogicalResult outlineSimtKernel(func::FuncOp kernel, gpu::GPUModuleOp gpuModule) {
  MLIRContext *ctx = kernel.getContext();
  auto threads = kernel->getAttrOfType<IntegerAttr>(tile::TileDialect::getSimtAttrName());
  if (!threads)
    return kernel.emitError() << "is not a SIMT kernel";
  SmallVector<Type> argTypes, workgroupTypes;
  for (BlockArgument arg : kernel.getArguments()) {
    Type t = arg.getType();
    auto mt = dyn_cast<MemRefType>(t);
    if (mt && isWorkgroup(mt)) {
      if (!mt.hasStaticShape())
        return kernel.emitError() << "workgroup memory must have a static shape, got " << t;
      workgroupTypes.push_back(mt);
    } else if (mt) {
      if (mt.getRank() != 1 || mt.getMemorySpace())
        return kernel.emitError() << "global buffers are 1-D memrefs, got " << t;
      argTypes.push_back(MemRefType::get({kNominalElements}, mt.getElementType()));
    } else if (t.isSignlessInteger(32) || t.isIndex() || t.isF32()) {
      argTypes.push_back(t);
    } else {
      return kernel.emitError() << "unsupported SIMT kernel argument type " << t;
    }
  }
  auto func =
      createKernelFunc(gpuModule, kernel, argTypes, workgroupTypes, int32_t(threads.getInt()));
  OpBuilder b(ctx);
  b.setInsertionPointToStart(&func.getBody().front());
  IRMapping mapping;
  unsigned next = 0, nextWorkgroup = 0;
  for (BlockArgument arg : kernel.getArguments()) {
    auto mt = dyn_cast<MemRefType>(arg.getType());
    if (mt && isWorkgroup(mt)) {
      mapping.map(arg, func.getWorkgroupAttributions()[nextWorkgroup++]);
    } else if (mt) {
      // The body indexes the dynamic memref it was written with.
      mapping.map(arg, memref::CastOp::create(b, kernel.getLoc(), mt, func.getArgument(next++)));
    } else {
      mapping.map(arg, func.getArgument(next++));
    }
  }
  for (Operation &op : kernel.getBody().front()) {
    if (isa<func::ReturnOp>(op)) {
      gpu::ReturnOp::create(b, op.getLoc());
      continue;
    }
    if (op.getDialect() && op.getDialect()->getNamespace() == "mxtile")
      return op.emitOpError() << "has no place in a SIMT kernel";
    b.clone(op, mapping);
  }
  kernel.erase();
  return success();
}

void selectApproximateExp2(gpu::GPUModuleOp gpuModule,
                           function_ref<Value(OpBuilder &, Location, Value)> select) {
  gpuModule.walk([&](math::Exp2Op op) {
    if (!op.getType().isF32() ||
        !arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn))
      return;
    OpBuilder b(op);
    op.replaceAllUsesWith(select(b, op.getLoc(), op.getOperand()));
    op.erase();
  });
}

} // namespace mxfp4
