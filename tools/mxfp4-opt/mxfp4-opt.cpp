//===- mxfp4-opt.cpp - The mxfp4-jit optimizer driver ----------------------===//
//
// MlirOptMain with the mxtile dialect, our passes and the named pipelines, so
// lit tests run exactly what the JIT runs (`--mxfp4-to-rocdl=chip=gfx950`).
// `--help` shows mlir-opt's flags and the passes; LLVM's own flags are
// behind `--help-hidden` (tools/common/ToolOptions.h).
//
//===----------------------------------------------------------------------===//

#include "ToolOptions.h"
#include "mxfp4/Target/Compile.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mxfp4::tools::hideLibraryOptions();
  mlir::DialectRegistry registry;
  mxfp4::registerMxfp4Dialects(registry);
  mxfp4::registerMxfp4Passes();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "mxfp4-jit optimizer driver\n", registry));
}
