//===- AmdLink.cpp - ISA text to an HSA code object, in process -----------===//
//
// MLIR's ROCDL target assembles ISA in process but links by running
// `<rocm>/llvm/bin/ld.lld`. We link with lld as a library instead: no ROCm, no
// subprocess. lld keeps global state, so links are serialized.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/Compile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVM/ROCDL/Utils.h"
#include "lld/Common/Driver.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

LLD_HAS_DRIVER(elf)

namespace mxfp4 {

namespace {
/// A temporary file removed on scope exit.
struct TempFile {
  llvm::SmallString<128> path;
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};
} // namespace

llvm::Expected<std::string> assembleAndLinkAmd(mlir::MLIRContext &ctx, llvm::StringRef isa,
                                               llvm::StringRef chip) {
  std::string diag;
  llvm::raw_string_ostream diagOs(diag);
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    diagOs << d << "\n";
    return mlir::success();
  });
  auto emitError = [&] { return mlir::emitError(mlir::UnknownLoc::get(&ctx)); };
  mlir::FailureOr<llvm::SmallVector<char, 0>> object =
      mlir::ROCDL::assembleIsa(isa, "amdgcn-amd-amdhsa", chip, "", emitError);
  if (failed(object))
    return llvm::createStringError("assembling " + chip.str() + " ISA failed: " + diag);

  TempFile in, out;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("mxfp4-kernel", "o", in.path))
    return llvm::createStringError("cannot create a temporary object file: " + ec.message());
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("mxfp4-kernel", "hsaco", out.path))
    return llvm::createStringError("cannot create a temporary code-object file: " + ec.message());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in.path, ec);
    if (ec)
      return llvm::createStringError("cannot write " + in.path.str() + ": " + ec.message());
    os.write(object->data(), object->size());
  }
  static std::mutex lldMutex;
  std::string lldOut, lldErr;
  {
    std::lock_guard<std::mutex> lock(lldMutex);
    llvm::raw_string_ostream so(lldOut), se(lldErr);
    const char *args[] = {"ld.lld", "-shared", in.path.c_str(), "-o", out.path.c_str()};
    lld::Result r = lld::lldMain(args, so, se, {{lld::Gnu, &lld::elf::link}});
    if (r.retCode != 0)
      return llvm::createStringError("linking the " + chip.str() + " code object failed: " +
                                     lldErr);
  }
  auto buf = llvm::MemoryBuffer::getFile(out.path);
  if (!buf)
    return llvm::createStringError("cannot read the linked code object: " +
                                   buf.getError().message());
  return (*buf)->getBuffer().str();
}

} // namespace mxfp4
