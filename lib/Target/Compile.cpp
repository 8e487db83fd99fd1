//===- Compile.cpp - From a tile program to GPU code ----------------------===//
//
// Runs the pipeline and serializes the gpu.module through its target
// attribute (ROCDL: LLVM IR -> ISA via the in-process AMDGPU backend), then
// assembles and links the code object with lld as a library (AmdLink.cpp).
// Every stage is timed and, on request, dumped.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/Compile.h"
#include "mxfp4/Dialect/Tile/TilePasses.h"
#include "mxfp4/JIT/Version.h"
#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/Support/Env.h"
#include "mxfp4/Support/LLVMError.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <chrono>
#include <mutex>

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

static std::string chipOf(Arch arch) { return std::string(toString(arch)); }

namespace {
/// Warns once per process that MXFP4_DUMP_DIR cannot take the dumps.
void warnDumpFailed(const std::string &dir, llvm::StringRef path, std::error_code ec) {
  static std::once_flag once;
  std::call_once(once, [&] {
    llvm::errs() << "mxfp4-jit: warning: MXFP4_DUMP_DIR=" << dir << ": cannot write " << path
                 << ": " << ec.message() << "; no compile stages are dumped\n";
  });
}

/// Times stages and dumps their output.
class Stages {
public:
  Stages(std::vector<StageTiming> *timings, llvm::StringRef dumpDir, llvm::StringRef name)
      : timings(timings), dumpDir(dumpDir.str()), name(name.str()) {}

  void start() { t0 = std::chrono::steady_clock::now(); }
  void done(llvm::StringRef stage) {
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (timings)
      timings->push_back({stage.str(), ms});
    start();
  }
  void dump(llvm::StringRef suffix, llvm::StringRef text) {
    if (dumpDir.empty())
      return;
    llvm::SmallString<256> path(dumpDir);
    llvm::sys::path::append(path, name + suffix);
    std::error_code ec = llvm::sys::fs::create_directories(dumpDir);
    if (!ec) {
      llvm::raw_fd_ostream os(path, ec);
      if (!ec)
        os << text;
    }
    // A dump asked for and not written is worth one line (per directory).
    if (ec)
      warnDumpFailed(dumpDir, path, ec);
  }
  void dump(llvm::StringRef suffix, mlir::ModuleOp module) {
    if (dumpDir.empty())
      return;
    std::string s;
    llvm::raw_string_ostream os(s);
    module.print(os);
    dump(suffix, s);
  }

private:
  std::vector<StageTiming> *timings;
  std::string dumpDir, name;
  std::chrono::steady_clock::time_point t0;
};
} // namespace

/// gpu.dynamic_shared_memory lowers to an internal zero-size global, which
/// NVPTX demotes to a 1-byte static variable; make it the external, aligned
/// `.extern .shared` array whose size the launch gives (toolchain.md 2.2).
static void externalizeDynamicSharedMemory(ModuleOp module) {
  module.walk([](LLVM::GlobalOp g) {
    if (g.getSymName().starts_with("__dynamic_shmem__")) {
      g.setLinkage(LLVM::Linkage::External);
      g.setAlignment(1024);
    }
  });
}

llvm::Expected<std::string> compileModule(ModuleOp module, Arch arch, EmitKind emit,
                                          std::vector<StageTiming> *timings,
                                          llvm::StringRef dumpDir) {
  std::string name = "module";
  if (auto fns = module.getOps<func::FuncOp>(); !fns.empty())
    name = (*fns.begin()).getSymName().str();
  Stages stages(timings, dumpDir, name);
  stages.start();
  stages.dump(".tile.mlir", module);
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
  const bool nvidia = arch == Arch::SM90A;
  PassManager pm(module.getContext());
  if (emit == EmitKind::Gpu) {
    if (nvidia) {
      pm.addPass(tile::createTileToNVVM());
    } else {
      tile::TileToAMDGPUOptions opts;
      opts.chip = chipOf(arch);
      pm.addPass(tile::createTileToAMDGPU(opts));
    }
  } else if (nvidia) {
    buildTileToNvvmPipeline(pm);
  } else {
    buildTileToRocdlPipeline(pm, chipOf(arch));
  }
  if (failed(pm.run(module)))
    return fail("lowering for " + chipOf(arch));
  if (arch == Arch::SM90A)
    externalizeDynamicSharedMemory(module);
  stages.done("lower");
  stages.dump(".lowered.mlir", module);
  if (emit == EmitKind::Gpu)
    return print();

  std::string result;
  gpu::CompilationTarget target =
      emit == EmitKind::LLVM ? gpu::CompilationTarget::Offload : gpu::CompilationTarget::Assembly;
  for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
    auto targetAttr = cast<gpu::TargetAttrInterface>(gpuModule.getTargetsAttr()[0]);
    gpu::TargetOptions opts({}, {}, {}, {}, target);
    std::optional<SmallVector<char, 0>> bytes = targetAttr.serializeToObject(gpuModule, opts);
    if (!bytes)
      return fail("generating " + chipOf(arch) + " code");
    if (emit == EmitKind::ISA || emit == EmitKind::Object) {
      llvm::StringRef isa(bytes->data(), bytes->size());
      stages.done(nvidia ? "ptx" : "isa");
      stages.dump(nvidia ? ".ptx" : ".s", isa);
      // The NVIDIA code object is the PTX itself: the driver compiles it.
      if (emit == EmitKind::ISA || nvidia) {
        result.append(isa.begin(), isa.end());
        continue;
      }
      llvm::Expected<std::string> hsaco =
          assembleAndLinkAmd(*module.getContext(), isa, chipOf(arch));
      if (!hsaco)
        return hsaco.takeError();
      stages.done("link");
      stages.dump(".hsaco", *hsaco);
      result += *hsaco;
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

/// ptxas, if one is available (MXFP4_PTXAS, PATH, /usr/local/cuda/bin).
static std::optional<std::string> findPtxas() {
  std::string forced = env::ptxas();
  if (forced == "none")
    return std::nullopt;
  if (!forced.empty())
    return forced;
  if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return std::string("/usr/local/cuda/bin/ptxas");
  return std::nullopt;
}

std::optional<std::string> ptxToCubin(llvm::StringRef ptx, llvm::StringRef name,
                                      llvm::StringRef dumpDir) {
  static const std::optional<std::string> ptxas = findPtxas();
  if (!ptxas)
    return std::nullopt;
  llvm::SmallString<128> in, out;
  if (llvm::sys::fs::createTemporaryFile("mxfp4-kernel", "ptx", in) ||
      llvm::sys::fs::createTemporaryFile("mxfp4-kernel", "cubin", out))
    return std::nullopt;
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(in);
    llvm::sys::fs::remove(out);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return std::nullopt;
    os << ptx;
  }
  std::string err;
  llvm::StringRef args[] = {*ptxas, "-arch=sm_90a", "-O3", in, "-o", out};
  int rc = llvm::sys::ExecuteAndWait(*ptxas, args, std::nullopt, {}, 0, 0, &err);
  auto buf = rc == 0 ? llvm::MemoryBuffer::getFile(out) : nullptr;
  if (rc != 0 || !buf) {
    // The PTX still works (the driver compiles it); say why once per kernel.
    llvm::errs() << "mxfp4-jit: warning: ptxas failed for " << name << " ("
                 << (err.empty() ? "exit " + std::to_string(rc) : err) << "); shipping PTX\n";
    return std::nullopt;
  }
  std::string cubin = (*buf)->getBuffer().str();
  Stages(nullptr, dumpDir, name).dump(".cubin", cubin);
  return cubin;
}

llvm::Expected<CompiledKernel> compileKernel(const KernelSpec &spec) {
  if (Error e = verifyKernelSpec(spec))
    return toLLVM(std::move(e));
  CompiledKernel k;
  k.spec = spec;
  k.symbol = spec.name();
  k.format = binaryFormatFor(spec.arch);
  auto t0 = std::chrono::steady_clock::now();
  DialectRegistry registry;
  registerMxfp4Dialects(registry);
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  buildKernel(*module, spec);
  k.timings.push_back(
      {"build",
       std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
  std::string dump = env::dumpDir();
  llvm::Expected<std::string> bin =
      compileModule(*module, spec.arch, EmitKind::Object, &k.timings, dump);
  if (!bin)
    return bin.takeError();
  k.binary = std::move(*bin);
  if (spec.arch == Arch::SM90A) {
    auto t1 = std::chrono::steady_clock::now();
    if (std::optional<std::string> cubin = ptxToCubin(k.binary, k.symbol, dump)) {
      k.binary = std::move(*cubin);
      k.format = BinaryFormat::CUBIN;
      k.timings.push_back(
          {"ptxas", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1)
                        .count()});
    }
  }
  if (!dump.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (const StageTiming &t : k.timings)
      os << t.stage << " " << llvm::format("%.3f", t.ms) << " ms\n";
    Stages(nullptr, dump, k.symbol).dump(".timings.txt", text);
  }
  return k;
}

const std::string &compilerFingerprint() {
  static const std::string fp = [] {
    DialectRegistry registry;
    registerMxfp4Dialects(registry);
    MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
    std::string s;
    llvm::raw_string_ostream os(s);
    os << compilerIdentity() << "LLVM " LLVM_VERSION_STRING "; ";
    for (llvm::StringRef chip : {"gfx950", "gfx1250"}) {
      PassManager pm(&ctx);
      buildTileToRocdlPipeline(pm, chip);
      pm.printAsTextualPipeline(os);
      os << "; ";
    }
    return s;
  }();
  return fp;
}

} // namespace mxfp4
