//===- Registration.cpp - Dialects, passes and pipelines -------------------===//

#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Dialect/Tile/TilePasses.h"
#include "mxfp4/Target/Compile.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace mxfp4 {

void registerMxfp4Dialects(DialectRegistry &registry) {
  registry.insert<tile::TileDialect, func::FuncDialect, arith::ArithDialect, scf::SCFDialect,
                  cf::ControlFlowDialect, memref::MemRefDialect, vector::VectorDialect,
                  math::MathDialect, gpu::GPUDialect, amdgpu::AMDGPUDialect,
                  ROCDL::ROCDLDialect, NVVM::NVVMDialect, LLVM::LLVMDialect, ub::UBDialect>();
  // convert-gpu-to-rocdl leaves these to their ConvertToLLVM interfaces.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerROCDLDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
}

void buildTileToRocdlPipeline(OpPassManager &pm, StringRef chip) {
  tile::TileToAMDGPUOptions opts;
  opts.chip = chip.str();
  pm.addPass(tile::createTileToAMDGPU(opts));
  OpPassManager &gm = pm.nest<gpu::GPUModuleOp>();
  gm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = chip.str();
  rocdl.useBarePtrCallConv = true;
  // 32-bit indices: every linear index fits (M * N < 2^31), and the address
  // math uses half the registers.
  rocdl.indexBitwidth = 32;
  gm.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  gm.addPass(createConvertVectorToLLVMPass());
  gm.addPass(tile::createRocdlDeviceAtomics());
  gm.addPass(createCanonicalizerPass());
  gm.addPass(createCSEPass());
  gm.addPass(createReconcileUnrealizedCastsPass());
}

void buildTileToNvvmPipeline(OpPassManager &pm) {
  pm.addPass(tile::createTileToNVVM());
  OpPassManager &gm = pm.nest<gpu::GPUModuleOp>();
  gm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  nvvm.indexBitwidth = 32;
  gm.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  gm.addPass(createConvertNVVMToLLVMPass());
  gm.addPass(createCanonicalizerPass());
  gm.addPass(createCSEPass());
  gm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {
struct RocdlPipelineOptions : PassPipelineOptions<RocdlPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("gfx950 or gfx1250"),
                           llvm::cl::init("gfx950")};
};
} // namespace

void registerMxfp4Passes() {
  tile::registerTilePasses();
  PassPipelineRegistration<RocdlPipelineOptions>(
      "mxfp4-to-rocdl", "Lower mxtile kernels to ROCDL/LLVM (the JIT's AMD pipeline)",
      [](OpPassManager &pm, const RocdlPipelineOptions &o) { buildTileToRocdlPipeline(pm, o.chip); });
  PassPipelineRegistration<>("mxfp4-to-nvvm",
                             "Lower mxtile kernels to NVVM/LLVM for sm_90a (the JIT's pipeline)",
                             buildTileToNvvmPipeline);
}

} // namespace mxfp4
