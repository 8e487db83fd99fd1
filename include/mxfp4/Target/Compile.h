//===- Compile.h - From a tile program to GPU code --------------*- C++ -*-===//
//
// The compile stages after the DSL: mxtile -> gpu/amdgpu (per chip) -> ROCDL
// -> LLVM IR -> ISA text or an HSA code object. All in process; linking the
// code object uses Debian's ld.lld (no ROCm).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TARGET_COMPILE_H
#define MXFP4_TARGET_COMPILE_H

#include "mxfp4/Kernels/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mxfp4 {

/// What to produce.
enum class EmitKind : uint8_t { Tile, Gpu, LLVM, ISA, Object };

std::optional<EmitKind> parseEmitKind(llvm::StringRef name);

/// Every dialect, translation and target interface the pipelines touch.
void registerMxfp4Dialects(mlir::DialectRegistry &registry);

/// Registers our passes and the named pipelines (`mxfp4-to-rocdl`).
void registerMxfp4Passes();

/// The exact pipeline the JIT runs: mxtile-to-amdgpu{chip}, then inside the
/// gpu.module scf->cf, gpu->rocdl (bare pointers, 32-bit indices),
/// vector->llvm, canonicalize, cse.
void buildTileToRocdlPipeline(mlir::OpPassManager &pm, llvm::StringRef chip);

/// Lowers `module` (tile kernels) for `arch` and returns `emit` as text (or
/// the code object's bytes). The module is modified in place.
llvm::Expected<std::string> compileModule(mlir::ModuleOp module, Arch arch, EmitKind emit);

} // namespace mxfp4

#endif // MXFP4_TARGET_COMPILE_H
