//===- Simulator.cpp - Kernels from LLVM IR, and the memory they see ------===//

#include "mxfp4/AmdSim/Simulator.h"

#include "Program.h"

#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/Kernels/TargetInfo.h"
#include "mxfp4/Support/LLVMError.h"
#include "mxfp4/Target/Compile.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace mxfp4::amdsim {

void GlobalMemory::add(const void *base, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  regions[uint64_t(reinterpret_cast<uintptr_t>(base))] = bytes;
}

void GlobalMemory::remove(const void *base) {
  std::lock_guard<std::mutex> lock(mutex);
  regions.erase(uint64_t(reinterpret_cast<uintptr_t>(base)));
}

bool GlobalMemory::contains(uint64_t address, uint64_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = regions.upper_bound(address);
  if (it == regions.begin())
    return false;
  --it;
  return address - it->first <= it->second && bytes <= it->second - (address - it->first);
}

Kernel::Kernel() = default;
Kernel::~Kernel() = default;

unsigned Kernel::waveSize() const { return program->waveSize; }
uint64_t Kernel::ldsBytes() const { return program->ldsBytes; }

Expected<std::unique_ptr<Kernel>> Kernel::fromIR(const std::string &llvmIR,
                                                 const std::string &symbol, unsigned waveSize) {
  if (waveSize != 32 && waveSize != 64)
    return makeError("amdgpu-sim: waves of ", waveSize, " lanes; AMD waves have 32 or 64");
  std::unique_ptr<Kernel> k(new Kernel());
  k->context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diagnostic;
  k->module = llvm::parseAssemblyString(llvmIR, diagnostic, *k->context);
  if (!k->module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    diagnostic.print("amdgpu-sim", os);
    return makeError("amdgpu-sim: the LLVM IR does not parse: ", printable(text, 400));
  }
  if (!llvm::StringRef(k->module->getTargetTriple().str()).starts_with("amdgcn"))
    return makeError("amdgpu-sim: the module targets `",
                     printable(k->module->getTargetTriple().str()), "`, not amdgcn");
  const llvm::Function *f = k->module->getFunction(symbol);
  if (!f)
    return makeError("amdgpu-sim: the module has no kernel `", printable(symbol), "`");
  Expected<Program> p = Program::decode(*f, waveSize);
  if (!p)
    return p.takeError();
  k->program = std::make_unique<Program>(std::move(*p));
  return k;
}

Expected<std::unique_ptr<Kernel>> Kernel::fromSpec(const KernelSpec &spec) {
  if (spec.arch == Arch::SM90A)
    return makeError("amdgpu-sim: ", spec.name(), " is an sm_90a kernel; the simulator runs AMD's");
  if (Error e = verifyKernelSpec(spec))
    return e;
  mlir::DialectRegistry registry;
  registerMxfp4Dialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(mlir::UnknownLoc::get(&ctx));
  buildKernel(*module, spec);
  llvm::Expected<std::string> ir = compileModule(*module, spec.arch, EmitKind::LLVM);
  if (!ir)
    return Error(llvm::toString(ir.takeError()));
  return fromIR(*ir, spec.name(), unsigned(targetInfo(spec.arch).waveSize));
}

Expected<RunStats> Kernel::run(const LaunchGeometry &geometry, void **args,
                               const GlobalMemory &memory, uint64_t orderSeed) const {
  return runProgram(*program, geometry, args, memory, orderSeed);
}

} // namespace mxfp4::amdsim
