//===- GemmA4W4.cpp - The dense A4W4 GEMM tile program --------------------===//

#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/DSL/TileBuilder.h"

namespace mxfp4 {

static tile::ActivationKind toTile(Activation a) {
  switch (a) {
  case Activation::None:
    return tile::ActivationKind::none;
  case Activation::Silu:
    return tile::ActivationKind::silu;
  case Activation::Swiglu:
    return tile::ActivationKind::swiglu;
  case Activation::Situv2:
    return tile::ActivationKind::situv2;
  }
  llvm_unreachable("unknown activation");
}

void buildGemmA4W4(mlir::ModuleOp module, const KernelSpec &spec) {
  dsl::TileBuilder tb(module, spec.name());
  mlir::Value a = tb.bufferArg(tb.bf16());
  mlir::Value w = tb.bufferArg(tb.i8());
  mlir::Value ws = tb.bufferArg(tb.i8());
  mlir::Value c = tb.bufferArg(tb.bf16());
  dsl::Index m = tb.i32Arg();
  mlir::Value dumpData, dumpScales;
  if (spec.epilogue == Epilogue::BF16DumpQuant) {
    dumpData = tb.bufferArg(tb.i8());
    dumpScales = tb.bufferArg(tb.i8());
  }

  dsl::SplitK split;
  if (spec.splitK > 1) {
    split.workspace = tb.bufferArg(tb.f32());
    split.counters = tb.bufferArg(tb.builder().getI32Type());
    split.splits = spec.splitK;
  }

  dsl::Index n0 = tb.tileId(0) * spec.bn;
  dsl::Index m0 = tb.tileId(1) * spec.bm;
  dsl::Index valid = m - m0; // rows of this tile that exist (M tail)
  dsl::Index kDim = tb.constant(spec.k), nDim = tb.constant(spec.n);

  // Split z of split-K covers K elements [z * K/splits, (z+1) * K/splits).
  dsl::Index kBegin = tb.constant(0), kEnd = kDim;
  if (spec.splitK > 1) {
    dsl::Index z = tb.tileId(2);
    kBegin = z * (spec.k / spec.splitK);
    kEnd = kBegin + spec.k / spec.splitK;
  }
  dsl::Tile acc = tb.loopK(
      kBegin, kEnd, spec.bk, tb.zero(spec.bm, spec.bn), [&](dsl::Index k0, dsl::Tile acc) {
        dsl::Tile x = tb.load(a, m0, k0, kDim, valid, spec.bm, spec.bk);
        dsl::MxTile qa = tb.quantize(x, spec.rounding, dumpData, dumpScales);
        dsl::MxTile qw = tb.loadWeight(w, ws, n0, k0, spec.k, spec.weightLayout,
                                       spec.scaleLayout, spec.bn, spec.bk);
        return tb.scaledMma(qa, qw, acc);
      });
  if (spec.activation != Activation::None) {
    dsl::Activation act;
    act.kind = toTile(spec.activation);
    act.alpha = act.beta = spec.activationParams[0];
    act.limit = act.linearBeta = spec.activationParams[1];
    acc = tb.activation(act, acc);
  }
  tb.store(acc, c, m0, n0, nDim, valid, split);
  tb.finish();
}

} // namespace mxfp4
