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

#endif // MXFP4_TILE_PASSES
