//===- TileBuilder.h - A C++ DSL for mxtile programs -------------*- C++ -*-===//
//
// Kernels are written with this builder, not with raw OpBuilder calls:
//
//   TileBuilder tb(module, "gemm");
//   Buffer a = tb.bufferArg(tb.bf16());  ...  Index m = tb.i32Arg();
//   Tile acc = tb.loopK(tb.constant(0), tb.constant(K), BK, tb.zero(BM, BN),
//                       [&](Index k, Tile acc) { ... return tb.scaledMma(qa, qw, acc); });
//   tb.store(acc, c, row, col, ld, valid);
//
// Index wraps an index-typed value; its operators emit arith ops. Tile wraps
// a !mxtile.tile value. Every method verifies nothing on its own: the ops'
// verifiers run when the module is verified.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_DSL_TILEBUILDER_H
#define MXFP4_DSL_TILEBUILDER_H

#include "mxfp4/Dialect/Tile/TileOps.h"
#include "mxfp4/Format/E8M0.h"
#include "mxfp4/Format/Layout.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mxfp4::dsl {

class TileBuilder;

/// An index-typed scalar.
class Index {
public:
  Index(TileBuilder *tb, mlir::Value v) : tb(tb), v(v) {}
  mlir::Value value() const { return v; }
  Index operator+(Index o) const;
  Index operator-(Index o) const;
  Index operator+(int64_t c) const;
  Index operator*(int64_t c) const;
  Index operator/(int64_t c) const;

private:
  TileBuilder *tb;
  mlir::Value v;
};

/// A tile value.
class Tile {
public:
  Tile() = default;
  explicit Tile(mlir::Value v) : v(v) {}
  mlir::Value value() const { return v; }
  tile::TileType type() const { return mlir::cast<tile::TileType>(v.getType()); }
  int64_t rows() const { return type().getRows(); }
  int64_t cols() const { return type().getCols(); }
  explicit operator bool() const { return bool(v); }

private:
  mlir::Value v;
};

/// MXFP4 data with its E8M0 scales.
struct MxTile {
  Tile data;
  Tile scales;
};

/// Split-K partial results: f32 workspace, per-tile counters, the split count.
struct SplitK {
  mlir::Value workspace, counters;
  int64_t splits = 1;
};

/// MoE stage 1's fused epilogue (mxtile.store_act_mx): the gated
/// activation of a paired gate/up tile, quantized to MXFP4 codes [rows, ld
/// / 2] and scales [rows, ld / 32]; the parameters are run-time values.
struct ActMxOutput {
  tile::ActivationKind kind = tile::ActivationKind::none;
  ScaleRounding rounding = kDefaultScaleRounding;
  mlir::Value codes, scales;
  mlir::Value p0, p1;               ///< f32
  mlir::Value rowWeights, doweight; ///< f32 buffer, i32
  mlir::Value debug;                ///< optional f32 buffer [rows, cols]
  /// The scales' layout (KernelSpec::moeScaleRep; 1: row-major).
  int64_t scaleRep = 1;
};

/// MoE stage 2's atomic epilogue (mxtile.store_scatter_add): the tile's
/// weighted rows added to their tokens' rows of an f32 output.
struct ScatterAddOutput {
  mlir::Value out;                    ///< f32 buffer [tokens, ld]
  mlir::Value rowIds, tokens;         ///< i32 buffer (sorted ids), index
  mlir::Value rowWeights, useWeights; ///< f32 buffer, i32
  /// Optional: f32 bias, the tile's bias row offset and real columns
  /// (index), and an i32 that turns it on.
  mlir::Value bias, biasRow, cols, withBias;
};

/// Activation and its parameters (docs/Numerics.md, mxtile.activation).
struct Activation {
  tile::ActivationKind kind = tile::ActivationKind::none;
  float alpha = 1.702f, limit = 7.0f;     ///< swiglu
  float beta = 1.0f, linearBeta = 1.0f;   ///< situv2
};

class TileBuilder {
public:
  /// Starts kernel `name` (a func.func marked mxtile.kernel) at the end of `module`.
  TileBuilder(mlir::ModuleOp module, llvm::StringRef name);

  mlir::Type bf16() { return b.getBF16Type(); }
  mlir::Type i8() { return b.getI8Type(); }
  mlir::Type f32() { return b.getF32Type(); }

  /// Appends a global buffer argument (memref<?xelem>).
  mlir::Value bufferArg(mlir::Type elem);
  /// Appends a run-time i32 argument; returns it as an index.
  Index i32Arg();
  /// A run-time f32 argument (SIMT kernels: activation parameters).
  mlir::Value f32Arg();
  /// A SIMT kernel's workgroup memory: `count` elements, an argument in the
  /// workgroup address space that outlining turns into the gpu.func's
  /// workgroup buffer (Conversion/SimtOutlining.h); launches do not pass it.
  mlir::Value workgroupArg(mlir::Type elem, int64_t count);

  Index constant(int64_t v);
  Index tileId(int dim);
  Index min(Index a, Index b);

  Tile load(mlir::Value buffer, Index row, Index col, Index ld, Index validRows, int64_t rows,
            int64_t cols);
  /// With `dumpData`/`dumpScales`, also writes the quantized tile there
  /// (codes, scales); with `qdq`, writes it dequantized (bf16) in the
  /// target's activation image.
  MxTile quantize(Tile t, ScaleRounding rounding, mlir::Value dumpData = {},
                  mlir::Value dumpScales = {}, mlir::Value qdq = {});
  /// An MXFP4 tile [rows, cols] stored dequantized: BF16 at (row, col) of
  /// the activation image of a matrix of `ld` columns (what quantize's `qdq`
  /// writes); rows at or beyond `validRows` are unspecified (never stored).
  MxTile loadQdq(mlir::Value data, Index row, Index col, Index ld, Index validRows, int64_t rows,
                 int64_t cols);
  /// An already-quantized MXFP4 tile [rows, cols] at (row, col) of a row-major
  /// matrix of `ld` elements per row (codes `data`, scales `scales`); rows at
  /// or beyond `validRows` read as zero.
  MxTile loadMx(mlir::Value data, mlir::Value scales, Index row, Index col, Index ld,
                Index validRows, int64_t rows, int64_t cols, int64_t scaleRep = 1);
  /// A grouped GEMM's row block `block` (mxtile.group_block): its group and
  /// the valid rows of the sorted matrix; the workgroup ends here when the
  /// block is empty.
  std::pair<Index, Index> groupBlock(mlir::Value groups, mlir::Value numValid, Index block);
  /// Weights [rows, cols K-elements] at (row, col) of a [*, k] matrix, with its
  /// scales at (row, col / 32), in the given layouts; through the TMA
  /// descriptors in `descriptors` when given (sm_90a).
  MxTile loadWeight(mlir::Value data, mlir::Value scales, Index row, Index col, int64_t k,
                    WeightLayout weightLayout, ScaleLayout scaleLayout, int64_t rows, int64_t cols,
                    mlir::Value descriptors = {});
  Tile zero(int64_t rows, int64_t cols);
  Tile scaledMma(const MxTile &a, const MxTile &b, Tile acc);
  Tile activation(const Activation &act, Tile gate, Tile up = Tile());
  void store(Tile t, mlir::Value buffer, Index row, Index col, Index ld, Index validRows,
             const SplitK &splitK = {});

  /// Stores act(t) quantized (mxtile.store_act_mx): `col` is the tile's
  /// first gate/up column, `ld` the padded and `cols` the real intermediate
  /// size.
  void storeActMx(Tile t, const ActMxOutput &out, Index row, Index col, Index ld, Index cols,
                  Index validRows, const SplitK &splitK = {});

  /// Adds tile `t`'s rows (sorted rows from `row`) at column `col` of their
  /// tokens' rows of `out.out` ([tokens, ld]).
  void storeScatterAdd(Tile t, const ScatterAddOutput &out, Index row, Index col, Index ld,
                       Index validRows);

  /// A K loop lb, lb+step, ... < ub carrying one accumulator tile.
  Tile loopK(Index lb, Index ub, int64_t step, Tile init,
             llvm::function_ref<Tile(Index k, Tile acc)> body);

  /// Closes the kernel (adds the return) and returns it.
  mlir::func::FuncOp finish();

  mlir::ImplicitLocOpBuilder &builder() { return b; }

private:
  mlir::ImplicitLocOpBuilder b;
  mlir::func::FuncOp func;
};

} // namespace mxfp4::dsl

#endif // MXFP4_DSL_TILEBUILDER_H
