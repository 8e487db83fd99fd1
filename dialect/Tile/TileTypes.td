//===- TileTypes.td - mxtile types and attributes -----------*- tablegen -*-===//

#ifndef MXFP4_TILE_TYPES
#define MXFP4_TILE_TYPES

include "Tile/TileDialect.td"
include "mlir/IR/EnumAttr.td"

def Tile_TileType : TypeDef<Tile_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "A 2-D tile owned by the workgroup";
  let description = [{
    `!mxtile.tile<16x256xbf16>`: rows x columns of an element type. Element
    types are `bf16`, `f32` (accumulators, activations), `f4E2M1FN` (packed
    MXFP4 data) and `f8E8M0FNU` (block scales; one column per 32 data columns).
    How a tile is spread over lanes, registers and LDS is the lowering's choice.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape, "::mlir::Type":$elementType);
  let assemblyFormat = "`<` custom<Shape>($shape, $elementType) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRows() const { return getShape()[0]; }
    int64_t getCols() const { return getShape()[1]; }
  }];
}

def Tile_AnyTile : Type<CPred<"::llvm::isa<::mxfp4::tile::TileType>($_self)">, "mxtile tile">;

// A tile whose element type satisfies `pred` (C++ over `elem`, an mlir::Type).
class Tile_TileOf<string summary, string pred>
    : Type<And<[CPred<"::llvm::isa<::mxfp4::tile::TileType>($_self)">,
                CPred<"[](::mlir::Type elem) { return " # pred # "; }("
                      "::llvm::cast<::mxfp4::tile::TileType>($_self).getElementType())">]>,
           "tile of " # summary, "::mxfp4::tile::TileType">;

def Tile_F32Tile : Tile_TileOf<"f32", "elem.isF32()">;
def Tile_FloatTile : Tile_TileOf<"bf16 or f32", "elem.isBF16() || elem.isF32()">;
def Tile_FP4Tile : Tile_TileOf<"f4E2M1FN", "::llvm::isa<::mlir::Float4E2M1FNType>(elem)">;
def Tile_ScaleTile : Tile_TileOf<"f8E8M0FNU", "::llvm::isa<::mlir::Float8E8M0FNUType>(elem)">;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Tile_Rounding : I32EnumAttr<"ScaleRoundingKind", "E8M0 scale rounding (docs/Numerics.md)", [
    I32EnumAttrCase<"roundup", 0>, I32EnumAttrCase<"even", 1>,
    I32EnumAttrCase<"floor", 2>, I32EnumAttrCase<"nearest", 3>]> {
  let cppNamespace = "::mxfp4::tile";
  let genSpecializedAttr = 0;
}
def Tile_RoundingAttr : EnumAttr<Tile_Dialect, Tile_Rounding, "rounding">;

def Tile_WeightLayout : I32EnumAttr<"WeightLayoutKind", "packed E2M1 weight layout", [
    I32EnumAttrCase<"rowmajor", 0>, I32EnumAttrCase<"gfx950_mfma16", 1>,
    I32EnumAttrCase<"sm90_mma16", 2>]> {
  let cppNamespace = "::mxfp4::tile";
  let genSpecializedAttr = 0;
}
def Tile_WeightLayoutAttr : EnumAttr<Tile_Dialect, Tile_WeightLayout, "weight_layout">;

def Tile_ScaleLayout : I32EnumAttr<"ScaleLayoutKind", "E8M0 scale layout", [
    I32EnumAttrCase<"rowmajor", 0>, I32EnumAttrCase<"gfx950_mfma16", 1>,
    I32EnumAttrCase<"gfx1250_wmma", 2>, I32EnumAttrCase<"sm90_mma16", 3>]> {
  let cppNamespace = "::mxfp4::tile";
  let genSpecializedAttr = 0;
}
def Tile_ScaleLayoutAttr : EnumAttr<Tile_Dialect, Tile_ScaleLayout, "scale_layout">;

def Tile_Activation : I32EnumAttr<"ActivationKind", "epilogue activation", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"silu", 1>,
    I32EnumAttrCase<"swiglu", 2>, I32EnumAttrCase<"situv2", 3>]> {
  let cppNamespace = "::mxfp4::tile";
  let genSpecializedAttr = 0;
}
def Tile_ActivationAttr : EnumAttr<Tile_Dialect, Tile_Activation, "activation">;

#endif // MXFP4_TILE_TYPES
