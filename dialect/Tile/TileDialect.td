//===- TileDialect.td - The mxtile dialect ------------------*- tablegen -*-===//
//
// mxtile describes one workgroup's tile program for MXFP4 GEMM-like kernels:
// what is loaded, quantized, multiplied and stored, not which lane does it.
// The target lowerings (lib/Conversion) choose lanes, instructions and staging.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TILE_DIALECT
#define MXFP4_TILE_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Tile_Dialect : Dialect {
  let name = "mxtile";
  let cppNamespace = "::mxfp4::tile";
  let summary = "Tile programs for MXFP4 GEMM and MoE kernels";
  let description = [{
    A tile program is a `func.func` marked `mxtile.kernel` whose body works on
    `!mxtile.tile` values: 2-D tiles owned by the whole workgroup. Global
    buffers are 1-D memrefs addressed with explicit row/column offsets and a
    leading dimension, so one program serves every M at run time.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
  let extraClassDeclaration = [{
    /// The unit attribute that marks a func.func as a tile kernel.
    static constexpr ::llvm::StringLiteral getKernelAttrName() { return "mxtile.kernel"; }
    /// The kernel's #mxtile.schedule (TileTypes.td).
    static constexpr ::llvm::StringLiteral getScheduleAttrName() { return "mxtile.schedule"; }
    /// On a SIMT kernel (no tiles: upstream gpu, scf, arith and memref ops,
    /// outlined as they are; Conversion/SimtOutlining.h): its threads (i64).
    static constexpr ::llvm::StringLiteral getSimtAttrName() { return "mxtile.simt"; }
  }];
  let hasOperationAttrVerify = 1;
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // MXFP4_TILE_DIALECT
