//===- Compile.h - From a tile program to GPU code --------------*- C++ -*-===//
//
// The compile stages after the DSL: mxtile -> gpu/amdgpu (per chip) -> ROCDL
// -> LLVM IR -> ISA text or an HSA code object. All in process; linking the
// code object uses Debian's ld.lld (no ROCm).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TARGET_COMPILE_H
#define MXFP4_TARGET_COMPILE_H

#include "mxfp4/JIT/CompiledKernel.h"
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

/// The sm_90a pipeline: mxtile-to-nvvm, then inside the gpu.module scf->cf,
/// gpu->nvvm (bare pointers, 32-bit indices), nvvm->llvm, canonicalize, cse.
void buildTileToNvvmPipeline(mlir::OpPassManager &pm);

/// Lowers `module` (tile kernels) for `arch` and returns `emit` as text (or
/// the code object's bytes). The module is modified in place. With `timings`,
/// appends the wall time of each stage; with `dumpDir`, writes each stage there.
llvm::Expected<std::string> compileModule(mlir::ModuleOp module, Arch arch, EmitKind emit,
                                          std::vector<StageTiming> *timings = nullptr,
                                          llvm::StringRef dumpDir = "");

/// The whole JIT compile of one kernel, in process, in a fresh MLIRContext:
/// DSL -> mxtile -> ROCDL -> ISA -> HSA code object (AMD), or
/// DSL -> mxtile -> NVVM -> PTX (sm_90a; the driver JIT-compiles it). Dumps every stage to
/// MXFP4_DUMP_DIR when that is set.
llvm::Expected<CompiledKernel> compileKernel(const KernelSpec &spec);

/// Compiles sm_90a PTX to a cubin with ptxas when one is available
/// (MXFP4_PTXAS, PATH, /usr/local/cuda/bin); std::nullopt: ship the PTX.
std::optional<std::string> ptxToCubin(llvm::StringRef ptx, llvm::StringRef name,
                                      llvm::StringRef dumpDir = "");

/// Identifies this compiler: project version and commit, LLVM version and the
/// exact pass pipelines. Part of every cache key.
const std::string &compilerFingerprint();

/// Assembles AMD ISA text and links it into an HSA code object with lld
/// running in process (no ROCm, no subprocess).
llvm::Expected<std::string> assembleAndLinkAmd(mlir::MLIRContext &ctx, llvm::StringRef isa,
                                               llvm::StringRef chip);

} // namespace mxfp4

#endif // MXFP4_TARGET_COMPILE_H
