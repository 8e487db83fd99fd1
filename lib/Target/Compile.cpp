//===- Compile.cpp - From a tile program to GPU code ----------------------===//
//
// Runs the pipeline and serializes the gpu.module through its target
// attribute (ROCDL: LLVM IR -> ISA via the in-process AMDGPU backend). A code
// object needs a linker: MLIR's ROCDL target runs `<toolkit>/llvm/bin/ld.lld`,
// so we point the toolkit at a private directory holding a link to Debian's
// ld.lld; nothing from ROCm is used.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/Compile.h"
#include "mxfp4/Dialect/Tile/TilePasses.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir;

namespace mxfp4 {

std::optional<EmitKind> parseEmitKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<EmitKind>>(name)
      .Case("tile", EmitKind::Tile)
      .Case("gpu", EmitKind::Gpu)
      .Case("llvm", EmitKind::LLVM)
      .Case("isa", EmitKind::ISA)
      .Case("obj", EmitKind::Object)
      .Default(std::nullopt);
}

/// A directory laid out like a ROCm toolkit as far as MLIR looks:
/// `<dir>/llvm/bin/ld.lld` -> Debian's ld.lld. Created once per process.
static llvm::Expected<std::string> lldToolkit() {
  static std::string dir;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!llvm::sys::fs::exists(MXFP4_LD_LLD)) {
      error = std::string("cannot link a code object: ld.lld not found at ") + MXFP4_LD_LLD +
              " (install Debian's lld-22)";
      return;
    }
    llvm::SmallString<128> tmp;
    llvm::sys::path::system_temp_directory(/*erasedOnReboot=*/true, tmp);
    llvm::sys::path::append(tmp, "mxfp4-jit-toolkit-" + std::to_string(getuid()));
    llvm::SmallString<128> bin(tmp);
    llvm::sys::path::append(bin, "llvm", "bin");
    llvm::SmallString<128> link(bin);
    llvm::sys::path::append(link, "ld.lld");
    if (std::error_code ec = llvm::sys::fs::create_directories(bin)) {
      error = "cannot create " + std::string(bin) + ": " + ec.message();
      return;
    }
    if (!llvm::sys::fs::exists(link))
      if (std::error_code ec = llvm::sys::fs::create_link(MXFP4_LD_LLD, link);
          ec && !llvm::sys::fs::exists(link)) {
        error = "cannot link " + std::string(link) + ": " + ec.message();
        return;
      }
    dir = std::string(tmp);
  });
  if (!error.empty())
    return llvm::createStringError(error);
  return dir;
}

static std::string chipOf(Arch arch) { return toString(arch).str(); }

llvm::Expected<std::string> compileModule(ModuleOp module, Arch arch, EmitKind emit) {
  std::string diagnostics;
  llvm::raw_string_ostream diagOs(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    diagOs << d.getLocation() << ": " << d << "\n";
    for (Diagnostic &note : d.getNotes())
      diagOs << "  note: " << note << "\n";
    return success();
  });
  auto fail = [&](llvm::StringRef stage) {
    return llvm::createStringError("%s failed:\n%s", stage.str().c_str(), diagnostics.c_str());
  };
  if (failed(module.verify()))
    return fail("verifying the tile program");
  auto print = [&]() {
    std::string s;
    llvm::raw_string_ostream os(s);
    module.print(os);
    return s;
  };
  if (emit == EmitKind::Tile)
    return print();
  if (arch == Arch::SM90A)
    return llvm::createStringError("sm_90a: the NVIDIA lowering does not exist yet; use gfx950 "
                                   "or gfx1250");

  PassManager pm(module.getContext());
  if (emit == EmitKind::Gpu) {
    tile::TileToAMDGPUOptions opts;
    opts.chip = chipOf(arch);
    pm.addPass(tile::createTileToAMDGPU(opts));
  } else {
    buildTileToRocdlPipeline(pm, chipOf(arch));
  }
  if (failed(pm.run(module)))
    return fail("lowering for " + chipOf(arch));
  if (emit == EmitKind::Gpu)
    return print();

  std::string toolkit;
  if (emit == EmitKind::Object) {
    llvm::Expected<std::string> dir = lldToolkit();
    if (!dir)
      return dir.takeError();
    toolkit = *dir;
  }
  std::string result;
  gpu::CompilationTarget target = emit == EmitKind::Object ? gpu::CompilationTarget::Binary
                                  : emit == EmitKind::LLVM ? gpu::CompilationTarget::Offload
                                                           : gpu::CompilationTarget::Assembly;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    auto targetAttr = cast<gpu::TargetAttrInterface>(gpuModule.getTargetsAttr()[0]);
    gpu::TargetOptions opts(toolkit, {}, {}, {}, target);
    std::optional<SmallVector<char, 0>> bytes = targetAttr.serializeToObject(gpuModule, opts);
    if (!bytes)
      return fail("generating " + chipOf(arch) + " code");
    if (emit != EmitKind::LLVM) {
      result.append(bytes->begin(), bytes->end());
      continue;
    }
    // Offload is LLVM bitcode; print it as text.
    llvm::LLVMContext llvmCtx;
    auto ir = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(llvm::StringRef(bytes->data(), bytes->size()), "kernel"), llvmCtx);
    if (!ir)
      return ir.takeError();
    llvm::raw_string_ostream os(result);
    (*ir)->print(os, nullptr);
  }
  return result;
}

} // namespace mxfp4
