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


//===----------------------------------------------------------------------===//
// The schedule
//===----------------------------------------------------------------------===//

// A flag of the schedule: `true` / `false`, elided when false.
class Tile_FlagParameter<string desc> : DefaultValuedParameter<"bool", "false", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (::mlir::succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (::mlir::succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    return $_parser.emitError($_parser.getCurrentLocation(), "expected true or false");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

def Tile_ScheduleAttr : AttrDef<Tile_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "Every scheduling choice of a kernel";
  let description = [{
    How a kernel computes its problem: the workgroup's tile (BM x BN over K
    steps of BK), the K split, the pipeline depth and the sm_90a variants.
    One parameter per row of `kScheduleFields` (include/mxfp4/Kernels/
    Schedule.h), in its order; parameters at their default are not printed.
    A kernel carries it as `mxtile.schedule`:

    ```mlir
    func.func @k(...) attributes {mxtile.kernel,
        mxtile.schedule = #mxtile.schedule<bm = 8, bn = 64, bk = 128, split_k = 11,
                                           folded_scales = true, decode = true>}
    ```

    The verifier checks each field on its own (verifyScheduleFields).
    Whether a schedule is legal for the kernel's problem on a target is
    decided in one place, verifyKernelSpec (Kernels/KernelSpec.h), which
    the lowerings call on the spec they read back from the kernel.
  }];
  let parameters = (ins
    "int64_t":$bm, "int64_t":$bn, "int64_t":$bk,
    DefaultValuedParameter<"int64_t", "1", "workgroups per output tile">:$split_k,
    Tile_FlagParameter<"every weight scale below 128">:$folded_scales,
    DefaultValuedParameter<"int64_t", "0", "TMA stages, 0: the tile's default">:$stages,
    Tile_FlagParameter<"two warpgroups below BM 128">:$two_warpgroups,
    Tile_FlagParameter<"the decode variant">:$decode,
    DefaultValuedParameter<"int64_t", "1", "decode warpgroups splitting K">:$decode_groups,
    DefaultValuedParameter<"int64_t", "0", "warps splitting K">:$warp_split_k,
    DefaultValuedParameter<"int64_t", "0", "the streamed activation image">:$image_stream,
    Tile_FlagParameter<"a persistent grid">:$persistent,
    Tile_FlagParameter<"stream-K">:$stream_k);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The schedule as the C++ struct (Kernels/Schedule.h).
    ::mxfp4::Schedule getSchedule() const;
    static ScheduleAttr get(::mlir::MLIRContext *ctx, const ::mxfp4::Schedule &s);
  }];
}

#endif // MXFP4_TILE_TYPES
