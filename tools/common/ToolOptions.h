//===- ToolOptions.h - Command lines that behave like tools' --*- C++ -*-===//
//
// Every mxfp4 tool declares its flags in one category, toolCategory(), and
// parses with parseToolOptions: `--help` lists only them (LLVM's own
// options move behind `--help-hidden`), `--version` prints the project
// version and the compiler fingerprint that keys the kernel cache.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_COMMON_TOOLOPTIONS_H
#define MXFP4_TOOLS_COMMON_TOOLOPTIONS_H

#include "mxfp4/JIT/Version.h"
#include "mxfp4/Target/Compile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace mxfp4::tools {

/// The category of a tool's own flags (one per tool binary).
inline llvm::cl::OptionCategory &toolCategory() {
  static llvm::cl::OptionCategory category("Options");
  return category;
}

/// Moves every flag registered so far outside toolCategory() (LLVM's and
/// MLIR's own) behind `--help-hidden`, and makes `--version` print ours.
/// mxfp4-opt calls it before MlirOptMain registers the flags it shows.
inline void hideLibraryOptions() {
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "mxfp4-jit " << version() << "\ncompiler fingerprint: " << compilerFingerprint() << "\n";
  });
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *o = entry.second;
    bool ours = false;
    for (llvm::cl::OptionCategory *c : o->Categories)
      ours |= c == &toolCategory();
    if (!ours && o->getOptionHiddenFlag() == llvm::cl::NotHidden)
      o->setHiddenFlag(llvm::cl::Hidden);
  }
}

/// Parses the command line after hiding every flag outside toolCategory().
inline void parseToolOptions(int argc, char **argv, const char *overview) {
  hideLibraryOptions();
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);
}

} // namespace mxfp4::tools

#endif // MXFP4_TOOLS_COMMON_TOOLOPTIONS_H
