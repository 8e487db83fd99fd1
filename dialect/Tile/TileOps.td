//===- TileOps.td - mxtile operations -----------------------*- tablegen -*-===//
//
// The kernel anatomy of the dense A4W4 GEMM: load a BF16 tile (masked rows),
// quantize it to MXFP4, fetch preshuffled weights and scales, scaled MMA,
// activation, and store. Every op here lowers on the targets it claims.
// The MoE stages are grouped GEMMs over sorted rows (group_block).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TILE_OPS
#define MXFP4_TILE_OPS

include "Tile/TileDialect.td"
include "Tile/TileTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Tile_TileIdOp : Tile_Op<"tile_id", [Pure]> {
  let summary = "Index of this workgroup's tile along one grid dimension";
  let description = [{
    Dimension 0 enumerates tiles of the output columns (N), dimension 1 tiles
    of the rows (M). Lowered to the workgroup id.

    ```mlir
    %n = mxtile.tile_id 0
    ```
  }];
  let arguments = (ins ConfinedAttr<I32Attr, [IntMinValue<0>, IntMaxValue<2>]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
}

def Tile_GroupBlockOp : Tile_Op<"group_block", [MemoryEffects<[MemRead]>]> {
  let summary = "A grouped GEMM's row block: its group, the valid rows; ends empty blocks";
  let description = [{
    The rows of a grouped GEMM (a MoE stage) are sorted by group (expert) in
    blocks of BM rows, each block in one group (`moe_place`, Kernels/MoeSort.h).
    For row block `block`, reads its group `groups[block]` and the number of
    valid rows `numValid[0]` from global memory. A workgroup whose block
    starts at or past the valid rows, or whose group is negative (a block
    past the sorted length), ends here: nothing after the op runs. Both
    results are uniform across the workgroup.

    ```mlir
    %expert, %rows = mxtile.group_block %groups, %num_valid [%block]
        : memref<?xi32>, memref<?xi32>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I32], [1]>:$groups, MemRefRankOf<[I32], [1]>:$numValid,
                       Index:$block);
  let results = (outs Index:$group, Index:$rows);
  let assemblyFormat = [{
    $groups `,` $numValid `[` $block `]` attr-dict `:` type($groups) `,` type($numValid)
  }];
}

def Tile_LoadOp : Tile_Op<"load", [
                                   MemoryEffects<[MemRead]>]> {
  let summary = "Load a tile of a row-major global matrix with a row mask";
  let description = [{
    Reads rows `row .. row+R-1` and columns `col .. col+C-1` of a row-major
    matrix with leading dimension `ld` (elements). Rows at or beyond
    `validRows` (relative to `row`, the M tail) read as zero and never touch
    memory; so do columns at or beyond `ld` (the K tail: a row has `ld`
    elements, a multiple of 32 where the tail is not a whole tile).

    ```mlir
    %a = mxtile.load %A[%m0, %k0] ld %c7168 rows %valid
        : memref<?xbf16> -> !mxtile.tile<16x256xbf16>
    ```
  }];
  let arguments = (ins AnyMemRef:$base, Index:$row, Index:$col, Index:$ld,
                       Index:$validRows);
  let results = (outs Tile_FloatTile:$result);
  let assemblyFormat = [{
    $base `[` $row `,` $col `]` `ld` $ld `rows` $validRows
    attr-dict `:` type($base) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_QuantizeOp : Tile_Op<"quantize", [AttrSizedOperandSegments]> {
  let summary = "Quantize a tile to MXFP4 along its columns (K)";
  let description = [{
    Each run of 32 columns of a row is one block: its E8M0 scale follows
    `rounding` and its elements are E2M1, bit for bit the CPU quantizer
    (docs/Numerics.md).

    With `dump`, the lowering also writes what it computed, for tests: the
    packed E2M1 codes row-major (`cols/2` bytes per row at byte column
    `col/2` of a matrix of `ld` elements per row) and the E8M0 scales
    row-major (`ld/32` per row), for rows below `validRows` of the load
    that produced the input.

    With `qdq`, it writes the dequantized tile instead: the BF16 values the
    codes and scales stand for (exact), for rows below `validRows`, in the
    target's activation image of a matrix of `ld` columns (sm_90a: the wgmma
    operand layout of Kernels/Sm90Pipeline.h, `activationImageIndex`).
    `mxtile.load_qdq` reads them back as an MXFP4 tile.

    ```mlir
    %q, %s = mxtile.quantize %a {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x256xbf16> -> !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>
    ```
  }];
  let arguments = (ins Tile_FloatTile:$input, Tile_RoundingAttr:$rounding,
                       Optional<MemRefRankOf<[I8], [1]>>:$dumpData,
                       Optional<MemRefRankOf<[I8], [1]>>:$dumpScales,
                       Optional<MemRefRankOf<[BF16], [1]>>:$qdq);
  let results = (outs Tile_FP4Tile:$data, Tile_ScaleTile:$scales);
  let assemblyFormat = [{
    $input (`dump` `(` $dumpData^ `,` $dumpScales `:` type($dumpData) `,` type($dumpScales) `)`)?
    (`qdq` `(` $qdq^ `:` type($qdq) `)`)?
    attr-dict `:` type($input) `->` type($data) `,` type($scales)
  }];
  let hasVerifier = 1;
}

def Tile_LoadMxOp : Tile_Op<"load_mx", [MemoryEffects<[MemRead]>]> {
  let summary = "Load an MXFP4 tile of a row-major matrix (packed E2M1 + E8M0), rows masked";
  let description = [{
    Rows `row ..` and elements `col ..` of an MXFP4 matrix with `ld` elements
    per row: packed E2M1 codes row-major (`ld/2` bytes per row, even element
    in the low nibble) and E8M0 scales row-major (`ld/32` per row). This is
    how already-quantized activations arrive (what `mxtile.quantize` dumps
    and the quant_mxfp4 kernel writes). Rows at or beyond `validRows`
    (relative to `row`) read as zero codes and never touch memory; so do
    the 32-element blocks at or beyond `ld` (the K tail).
    `scaleRep` other than 1 (2, 4 or 8) reads the scales in gfx1250's
    sorted-row MoE layout with that quant_wmma_rep instead (rows in tiles
    of 16 scaleRep, `ld` a multiple of 128; Format/Layout.h
    gfx1250MoeScaleOffset).

    ```mlir
    %q, %s = mxtile.load_mx %A, %AS[%m0, %k0] ld %c7168 rows %valid
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<64x128xf4E2M1FN>, !mxtile.tile<64x4xf8E8M0FNU>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$data, MemRefRankOf<[I8], [1]>:$scales,
                       Index:$row, Index:$col, Index:$ld, Index:$validRows,
                       DefaultValuedAttr<I64Attr, "1">:$scaleRep);
  let results = (outs Tile_FP4Tile:$result, Tile_ScaleTile:$resultScales);
  let assemblyFormat = [{
    $data `,` $scales `[` $row `,` $col `]` `ld` $ld `rows` $validRows attr-dict
    `:` type($data) `,` type($scales) `->` type($result) `,` type($resultScales)
  }];
  let hasVerifier = 1;
}

def Tile_LoadQdqOp : Tile_Op<"load_qdq", [MemoryEffects<[MemRead]>]> {
  let summary = "Load an MXFP4 tile stored dequantized (BF16 activation image)";
  let description = [{
    Rows `row ..` and elements `col ..` of a BF16 matrix with `ld` columns,
    stored in the target's activation image (what `mxtile.quantize ... qdq`
    writes), whose values are exactly MXFP4: each run of 32 elements of a
    row is E2M1 times one E8M0 scale. Lowerings use the values as they are;
    the codes and scales are what they stand for. Rows at or beyond
    `validRows` are unspecified (the image's padding): only results of rows
    below it may be stored, which `mxtile.store`'s own mask ensures.

    ```mlir
    %q, %s = mxtile.load_qdq %A[%m0, %k0] ld %c7168 rows %valid
        : memref<?xbf16> -> !mxtile.tile<64x128xf4E2M1FN>, !mxtile.tile<64x4xf8E8M0FNU>
    ```
  }];
  let arguments = (ins MemRefRankOf<[BF16], [1]>:$data, Index:$row, Index:$col, Index:$ld,
                       Index:$validRows);
  let results = (outs Tile_FP4Tile:$result, Tile_ScaleTile:$resultScales);
  let assemblyFormat = [{
    $data `[` $row `,` $col `]` `ld` $ld `rows` $validRows attr-dict
    `:` type($data) `->` type($result) `,` type($resultScales)
  }];
  let hasVerifier = 1;
}

def Tile_LoadWeightOp : Tile_Op<"load_weight", [MemoryEffects<[MemRead]>]> {
  let summary = "Fetch a tile of packed E2M1 weights stored in a preshuffled layout";
  let description = [{
    Logical rows `row ..` (N) and elements `col ..` (K) of a `[N, K]` packed
    E2M1 matrix of `k` elements per row, stored in `layout` (Format/Layout.h).
    For MoE, `row` already includes the expert offset.

    `descriptors`, when present, is device memory holding the TMA descriptors
    (CUtensorMap) of the weights and of their scales, 128 bytes each, through
    which sm_90a fetches this tile and its `load_scales` partner
    (Kernels/Sm90Pipeline.h).

    ```mlir
    %w = mxtile.load_weight %W[%n0, %k0] {k = 7168 : i64, layout = #mxtile.weight_layout<gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
    %v = mxtile.load_weight %W[%n0, %k0] via %D {k = 7168 : i64, layout = #mxtile.weight_layout<sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$base, Index:$row, Index:$col,
                       Optional<MemRefRankOf<[I8], [1]>>:$descriptors,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k, Tile_WeightLayoutAttr:$layout);
  let results = (outs Tile_FP4Tile:$result);
  let assemblyFormat = [{
    $base `[` $row `,` $col `]` (`via` $descriptors^)? attr-dict `:` type($base)
    (`,` type($descriptors)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_LoadScalesOp : Tile_Op<"load_scales", [MemoryEffects<[MemRead]>]> {
  let summary = "Fetch a tile of E8M0 scales stored in a preshuffled layout";
  let description = [{
    Logical rows `row ..` and K-blocks `kblock ..` of a `[rows, k/32]` scale
    matrix stored (padded) in `layout`.

    ```mlir
    %s = mxtile.load_scales %S[%n0, %kb0] {k = 7168 : i64, layout = #mxtile.scale_layout<gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I8], [1]>:$base, Index:$row, Index:$kblock,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k, Tile_ScaleLayoutAttr:$layout);
  let results = (outs Tile_ScaleTile:$result);
  let assemblyFormat = "$base `[` $row `,` $kblock `]` attr-dict `:` type($base) `->` type($result)";
  let hasVerifier = 1;
}

def Tile_ZeroOp : Tile_Op<"zero", [Pure]> {
  let summary = "A tile of zeros (accumulator initialisation)";
  let description = [{
    ```mlir
    %acc = mxtile.zero : !mxtile.tile<16x256xf32>
    ```
  }];
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Tile_ScaledMmaOp : Tile_Op<"scaled_mma", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "acc += (sA * A) (sB * B)^T on MXFP4 tiles";
  let description = [{
    `A` is `[M, K]` and `B` is `[N, K]` E2M1 (both K-major, as weights are
    stored), with `[M, K/32]` and `[N, K/32]` E8M0 scales; `acc` is `[M, N]`
    f32. Each scale multiplies its 32-element block before accumulation.

    ```mlir
    %acc1 = mxtile.scaled_mma %qa, %sa, %w, %sw, %acc0
        : !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
    ```
  }];
  let arguments = (ins Tile_FP4Tile:$a, Tile_ScaleTile:$aScales, Tile_FP4Tile:$b,
                       Tile_ScaleTile:$bScales, Tile_F32Tile:$acc);
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = [{
    $a `,` $aScales `,` $b `,` $bScales `,` $acc attr-dict `:` type($a) `,` type($aScales) `,`
    type($b) `,` type($bScales) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ActivationOp : Tile_Op<"activation", [Pure]> {
  let summary = "Elementwise epilogue activation, optionally gated";
  let description = [{
    With one operand `x`: `none` (identity) or `silu` (x * sigmoid(x)).
    With a gate and an `up` operand (MoE stage 1), computed in f32:
    - `silu`:   silu(g) * u
    - `swiglu`: g' * sigmoid(alpha * g') * (u' + 1), g' = min(g, limit),
                u' = clamp(u, -limit, limit) (GPT-OSS: alpha 1.702, limit 7)
    - `situv2`: beta * tanh(g / beta) * sigmoid(g) * linear_beta * tanh(u / linear_beta)
    Parameters are f32 attributes; they are part of the kernel's identity.

    ```mlir
    %h = mxtile.activation swiglu %g, %u {alpha = 1.702 : f32, limit = 7.0 : f32}
        : !mxtile.tile<16x256xf32>, !mxtile.tile<16x256xf32> -> !mxtile.tile<16x256xf32>
    ```
  }];
  let arguments = (ins Tile_ActivationAttr:$kind, Tile_F32Tile:$input, Optional<Tile_F32Tile>:$up,
                       OptionalAttr<F32Attr>:$alpha, OptionalAttr<F32Attr>:$limit,
                       OptionalAttr<F32Attr>:$beta, OptionalAttr<F32Attr>:$linear_beta);
  let results = (outs Tile_F32Tile:$result);
  let assemblyFormat = [{
    custom<ActivationKind>($kind) $input (`,` $up^)? attr-dict `:` type($input) (`,` type($up)^)?
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_StoreOp : Tile_Op<"store", [AttrSizedOperandSegments, MemoryEffects<[MemWrite]>]> {
  let summary = "Store a tile to a row-major global matrix, rows masked";
  let description = [{
    Converts to the memref's element type (f32 -> bf16 rounds to nearest even)
    and writes rows below `validRows` and columns below `ld` (the N tail:
    a row of the matrix has `ld` elements).

    With `reduce(%ws, %counters)` the tile is one of `splits` partial sums of
    a split-K GEMM (split z = the workgroup's id z): it is stored in f32 to
    slice z of `ws` ([splits, rows, ld] f32, rows = `row + validRows`), and
    the last of the `splits` workgroups of this output tile (counted in
    `counters`, one i32 per tile, zero on entry) adds the slices in split
    order (the same bits whatever order the workgroups finish in), converts
    and stores the sum, and leaves its counter zero again. `splits = 0`
    is stream-K (a kernel whose `#mxtile.schedule` has `stream_k`): the partial sums are
    the tile's K segments as the kernel's workgroups divide the iterations,
    summed in K order the same way (`ws` holds two partial tiles per
    workgroup).

    ```mlir
    mxtile.store %acc, %C[%m0, %n0] ld %c8448 rows %valid : !mxtile.tile<16x256xf32> -> memref<?xbf16>
    ```
  }];
  let arguments = (ins Tile_FloatTile:$value, AnyMemRef:$base, Index:$row, Index:$col, Index:$ld,
                       Index:$validRows,
                       Optional<MemRefRankOf<[F32], [1]>>:$workspace,
                       Optional<MemRefRankOf<[I32], [1]>>:$counters,
                       DefaultValuedAttr<I64Attr, "1">:$splits);
  let assemblyFormat = [{
    $value `,` $base `[` $row `,` $col `]` `ld` $ld `rows` $validRows
    (`reduce` `(` $workspace^ `,` $counters `:` type($workspace) `,` type($counters) `)`)?
    attr-dict `:` type($value) `->` type($base)
  }];
  let hasVerifier = 1;
}

def Tile_StoreActMxOp : Tile_Op<"store_act_mx",
    [AttrSizedOperandSegments, MemoryEffects<[MemWrite]>]> {
  let summary = "Store the gated activation of a paired gate/up tile as MXFP4";
  let description = [{
    MoE stage 1's fused epilogue. The tile's columns pair gate and up rows
    in groups of 16: columns 16q + 0..7 are the gate rows of intermediate
    columns 8q + 0..7, columns 16q + 8..15 their up rows (the prepared W1
    of Ops/FusedMoe.h). Row r of the tile (`validRows` of them) is row
    `row + r` of the outputs; its intermediate columns start at `col / 2`.
    For each, in f32: g and u times `rowWeights[row + r]` when `doweight`
    is nonzero, then the activation `kind` with the run-time parameters
    `p0`, `p1` (mxtile.activation's: swiglu alpha, limit; situv2 beta,
    linear_beta), then MXFP4 quantization with `rounding` into packed
    E2M1 `codes` [rows, ld / 2] and E8M0 `scales` [rows, ld / 32] (bit for
    bit the CPU quantizer on those f32 values). 32-column blocks at or
    past `cols` (the real intermediate size; `ld` is padded) get zero
    codes and scale 0x7F. With `debug`, the f32 activations of the columns
    below `cols` are written there too ([rows, cols] f32). `scaleRep`
    other than 1 writes the scales in gfx1250's sorted-row layout instead
    (mxtile.load_mx's).

    `reduce(%ws, %counters)` and `splits` are mxtile.store's split-K.

    ```mlir
    mxtile.store_act_mx swiglu %acc, %codes, %scales [%m0, %n0] ld %c768 cols %c720 rows %valid
        params(%alpha, %limit) weights %w if %doweight {rounding = #mxtile<rounding even>}
        : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
    ```
  }];
  let arguments = (ins Tile_ActivationAttr:$kind, Tile_F32Tile:$value,
                       MemRefRankOf<[I8], [1]>:$codes, MemRefRankOf<[I8], [1]>:$scales,
                       Index:$row, Index:$col, Index:$ld, Index:$cols, Index:$validRows,
                       F32:$p0, F32:$p1, MemRefRankOf<[F32], [1]>:$rowWeights, I32:$doweight,
                       Optional<MemRefRankOf<[F32], [1]>>:$debug,
                       Optional<MemRefRankOf<[F32], [1]>>:$workspace,
                       Optional<MemRefRankOf<[I32], [1]>>:$counters,
                       Tile_RoundingAttr:$rounding,
                       DefaultValuedAttr<I64Attr, "1">:$splits,
                       DefaultValuedAttr<I64Attr, "1">:$scaleRep);
  let assemblyFormat = [{
    custom<ActivationKind>($kind) $value `,` $codes `,` $scales `[` $row `,` $col `]` `ld` $ld
    `cols` $cols `rows` $validRows `params` `(` $p0 `,` $p1 `)` `weights` $rowWeights `if` $doweight
    (`debug` $debug^ `:` type($debug))?
    (`reduce` `(` $workspace^ `,` $counters `:` type($workspace) `,` type($counters) `)`)?
    attr-dict `:` type($value) `,` type($codes) `,` type($scales) `,` type($rowWeights)
  }];
  let hasVerifier = 1;
}

def Tile_StoreScatterAddOp : Tile_Op<"store_scatter_add",
    [AttrSizedOperandSegments, MemoryEffects<[MemWrite]>]> {
  let summary = "Add a tile's weighted rows to their tokens' rows, atomically";
  let description = [{
    MoE stage 2's atomic epilogue. Row r of the tile (`validRows` of them)
    is sorted row `row + r`, of token `rowIds[row + r] & 0xFFFFFF`; rows
    of a token at or past `tokens` (the sorting's padding) add nothing.
    Column c, in f32: (value + bias) times `rowWeights[row + r]` when
    `useWeights` is nonzero, added atomically to element `token * ld + col
    + c` of `out` (f32; the adds of several rows of a token happen in any
    order). With `bias`: element `biasRow + col + c` of it where `col + c`
    is below `cols` and `withBias` is nonzero (a K split adds it once).
    Tiles are whole: `ld` covers `col` plus the tile's columns.

    ```mlir
    mxtile.store_scatter_add %acc, %out [%m0, %n0] ld %c3584 rows %valid ids %ids
        tokens %t weights %w if %use
        : !mxtile.tile<16x128xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>
    ```
  }];
  let arguments = (ins Tile_F32Tile:$value, MemRefRankOf<[F32], [1]>:$out,
                       Index:$row, Index:$col, Index:$ld, Index:$validRows,
                       MemRefRankOf<[I32], [1]>:$rowIds, Index:$tokens,
                       MemRefRankOf<[F32], [1]>:$rowWeights, I32:$useWeights,
                       Optional<MemRefRankOf<[F32], [1]>>:$bias, Optional<Index>:$biasRow,
                       Optional<Index>:$cols, Optional<I32>:$withBias);
  let assemblyFormat = [{
    $value `,` $out `[` $row `,` $col `]` `ld` $ld `rows` $validRows `ids` $rowIds
    `tokens` $tokens `weights` $rowWeights `if` $useWeights
    (`bias` $bias^ `[` $biasRow `]` `cols` $cols `if` $withBias `:` type($bias))?
    attr-dict `:` type($value) `,` type($out) `,` type($rowIds) `,` type($rowWeights)
  }];
  let hasVerifier = 1;
}

#endif // MXFP4_TILE_OPS
