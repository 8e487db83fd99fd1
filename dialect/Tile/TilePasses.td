//===- TilePasses.td - mxtile lowering passes ---------------*- tablegen -*-===//

#ifndef MXFP4_TILE_PASSES
#define MXFP4_TILE_PASSES

include "mlir/Pass/PassBase.td"

def TileToAMDGPU : Pass<"mxtile-to-amdgpu", "::mlir::ModuleOp"> {
  let summary = "Lower mxtile kernels to gpu.module/gpu.func with amdgpu and rocdl ops";
  let description = [{
    Every `func.func` marked `mxtile.kernel` becomes a `gpu.func` in a
    `gpu.module` targeting `chip`, with the lane layout, LDS staging and
    instruction choice of that chip:

    - gfx950 (wave64, 256 threads): inline quantization with
      `amdgpu.packed_scaled_trunc` (v_cvt_scalef32_pk_fp4_bf16), A staged
      through LDS, B read from global in 16-byte loads in the
      gfx950_mfma16 layout, `amdgpu.scaled_mfma` 16x16x128 with the scale
      byte picked by opsel.
    - gfx1250 (wave32): `rocdl.cvt.scalef32.pk8.fp4.bf16` and
      `amdgpu.scaled_wmma` 16x16x128.

    Raw ROCDL intrinsics are only emitted for the chip that has them; any
    other chip is a diagnostic, never an LLVM abort.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"gfx950\"",
           "AMD chip: gfx950 or gfx1250">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::amdgpu::AMDGPUDialect", "::mlir::ROCDL::ROCDLDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect", "::mlir::math::MathDialect",
  ];
}

def RocdlDeviceAtomics : Pass<"mxfp4-rocdl-device-atomics", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make the kernels' f32 atomic adds relaxed device-memory adds";
  let description = [{
    Runs after the conversion to ROCDL/LLVM. The kernels' only f32 atomic
    adds are MoE stage 2's scatter epilogue (mxtile.store_scatter_add): an
    accumulation into a device allocation that nothing reads before the
    kernel ends. `memref.atomic_rmw` lowers them to system-scope acq_rel
    `atomicrmw fadd`, which the AMDGPU backend can only expand into a
    compare-and-swap loop (the memory might be fine-grained or remote).
    This pass makes every `llvm.atomicrmw fadd` on global f32 memory
    monotonic at agent scope and marks it with the ROCDL attributes of
    the metadata `amdgpu.no.fine.grained.memory`,
    `amdgpu.no.remote.memory` and `amdgpu.ignore.denormal.mode`, so that
    it selects the hardware add (global_atomic_add_f32).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::ROCDL::ROCDLDialect"];
}

def TileToNVVM : Pass<"mxtile-to-nvvm", "::mlir::ModuleOp"> {
  let summary = "Lower mxtile kernels to gpu.module/gpu.func with nvvm ops (sm_90a)";
  let description = [{
    Every `func.func` marked `mxtile.kernel` becomes a `gpu.func` in a
    `gpu.module` targeting sm_90a. Hopper has no FP4 tensor cores: weights
    are dequantized to BF16 in registers (E8M0 scale folded in), activations
    are quantized inline to MXFP4 exactly as the CPU quantizer does and
    dequantized to BF16 in shared memory (or read as qdq_mxfp4's image),
    and `wgmma.mma_async` m64nBMk16 BF16 accumulates in FP32, the weights as
    its register A operand. The K loop is pipelined: TMA stages under
    mbarriers, or (the decode variant) weights straight to registers steps
    ahead (lib/Conversion/TileToNVVM/NvLowering.h).

    The lowering expects the dense GEMM's K-loop form (load, quantize,
    load_weight, load_scales, scaled_mma); other forms are diagnosed.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::vector::VectorDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect", "::mlir::math::MathDialect",
  ];
}

#endif // MXFP4_TILE_PASSES
