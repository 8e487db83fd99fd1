//===- RocdlDeviceAtomics.cpp - Relaxed device-memory f32 atomic adds -----===//
//
// mxfp4-rocdl-device-atomics (TilePasses.td): the scatter epilogue's f32
// atomic adds, once lowered to `llvm.atomicrmw fadd`, become monotonic at
// agent scope with the ROCDL attributes that the LLVM translation turns
// into !amdgpu.no.fine.grained.memory, !amdgpu.no.remote.memory and
// !amdgpu.ignore.denormal.mode, so the backend selects the hardware add.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/Tile/TilePasses.h"

namespace mxfp4::tile {
#define GEN_PASS_DEF_ROCDLDEVICEATOMICS
#include "mxfp4/Dialect/Tile/TilePasses.h.inc"
} // namespace mxfp4::tile

using namespace mlir;

namespace {

struct RocdlDeviceAtomicsPass : mxfp4::tile::impl::RocdlDeviceAtomicsBase<RocdlDeviceAtomicsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    auto *rocdl = ctx->getLoadedDialect<ROCDL::ROCDLDialect>();
    getOperation().walk([&](LLVM::AtomicRMWOp op) {
      auto ptr = dyn_cast<LLVM::LLVMPointerType>(op.getPtr().getType());
      if (op.getBinOp() != LLVM::AtomicBinOp::fadd || !op.getVal().getType().isF32() || !ptr ||
          ptr.getAddressSpace() != ROCDL::ROCDLDialect::kGlobalMemoryAddressSpace)
        return;
      op.setOrdering(LLVM::AtomicOrdering::monotonic);
      op.setSyncscope("agent");
      rocdl->getNoFineGrainedMemoryAttrHelper().setAttr(op, UnitAttr::get(ctx));
      rocdl->getNoRemoteMemoryAttrHelper().setAttr(op, UnitAttr::get(ctx));
      rocdl->getIgnoreDenormalModeAttrHelper().setAttr(op, UnitAttr::get(ctx));
    });
  }
};

} // namespace
