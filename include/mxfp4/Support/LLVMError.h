//===- LLVMError.h - mxfp4::Error <-> llvm::Error at the compiler edge -*- C++ -*-===//
//
// The compiler (MLIR, LLVM codegen, lld) reports llvm::Error; the public API
// reports mxfp4::Error. Only code that links LLVM includes this.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_SUPPORT_LLVMERROR_H
#define MXFP4_SUPPORT_LLVMERROR_H

#include "mxfp4/Support/Error.h"

#include "llvm/Support/Error.h"

namespace mxfp4 {

template <typename T> Expected<T> fromLLVM(llvm::Expected<T> e) {
  if (!e)
    return Error(llvm::toString(e.takeError()));
  return std::move(*e);
}

inline llvm::Error toLLVM(Error e) {
  return e ? llvm::createStringError(e.message()) : llvm::Error::success();
}

} // namespace mxfp4

#endif // MXFP4_SUPPORT_LLVMERROR_H
