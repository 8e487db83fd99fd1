//===- GemmA4W4.cpp - The dense A4W4 GEMM tile program --------------------===//

#include "mxfp4/Kernels/GemmA4W4.h"
#include "mxfp4/DSL/TileBuilder.h"
#include "mxfp4/Dialect/Tile/TileEnumConversion.h"
#include "mxfp4/Kernels/MoeElementwise.h"
#include "mxfp4/Kernels/MoeSort.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mxfp4 {

/// Every scheduling choice goes on the kernel as its #mxtile.schedule; the
/// lowerings read the spec back from it and the ops (readKernelSpec).
static void setSchedule(mlir::ModuleOp module, const KernelSpec &spec) {
  module.lookupSymbol(spec.name())
      ->setAttr(tile::TileDialect::getScheduleAttrName(),
                tile::ScheduleAttr::get(module.getContext(), spec.schedule()));
}

void buildGemmA4W4(mlir::ModuleOp module, const KernelSpec &spec) {
  dsl::TileBuilder tb(module, spec.name());
  // gemm_a4w4 quantizes bf16 activations inline; gemm_mxa4w4 reads them
  // already quantized (codes, then scales), gemm_qdqa4w4 already quantized
  // and dequantized (bf16). moe_gemm is gemm_mxa4w4 over sorted rows,
  // grouped by expert.
  const bool grouped = spec.op == OpKind::MoeGemm;
  const bool mx = spec.op == OpKind::GemmMxA4W4 || grouped, qdq = spec.op == OpKind::GemmQdqA4W4;
  mlir::Value a = tb.bufferArg(mx ? tb.i8() : tb.bf16());
  mlir::Value as = mx ? tb.bufferArg(tb.i8()) : mlir::Value();
  mlir::Value w = tb.bufferArg(tb.i8());
  mlir::Value ws = tb.bufferArg(tb.i8());
  // sm_90a fetches the weights by TMA: their descriptors follow the scales.
  mlir::Value descriptors = spec.arch == Arch::SM90A ? tb.bufferArg(tb.i8()) : mlir::Value();
  // MoE stage 1's fused epilogue stores the activation quantized (codes,
  // scales) instead of C.
  // MoE stage 2's scatter epilogue adds into an f32 [T, N] accumulator.
  const bool actMx = storesActMx(spec.epilogue), scatter = spec.epilogue == Epilogue::Scatter;
  dsl::ActMxOutput actOut;
  dsl::ScatterAddOutput scatterOut;
  mlir::Value c;
  if (actMx) {
    actOut.codes = tb.bufferArg(tb.i8());
    actOut.scales = tb.bufferArg(tb.i8());
  } else if (scatter) {
    scatterOut.out = tb.bufferArg(tb.f32());
  } else {
    c = tb.bufferArg(tb.bf16());
  }
  // moe_gemm: each row block's expert (moe_place's block experts) and the
  // valid rows (num_valid) instead of M.
  mlir::Value groups, numValid;
  if (grouped) {
    groups = tb.bufferArg(tb.builder().getI32Type());
    numValid = tb.bufferArg(tb.builder().getI32Type());
  }
  // The fused epilogue's sorted routing weights and its f32 debug output;
  // the scatter epilogue's sorted ids and weights and the optional bias
  // [E, cols].
  if (actMx) {
    actOut.rowWeights = tb.bufferArg(tb.f32());
    if (spec.epilogue == Epilogue::ActMxDebug)
      actOut.debug = tb.bufferArg(tb.f32());
  }
  if (scatter) {
    scatterOut.rowIds = tb.bufferArg(tb.builder().getI32Type());
    scatterOut.rowWeights = tb.bufferArg(tb.f32());
    scatterOut.bias = tb.bufferArg(tb.f32());
  }
  dsl::Index m(&tb, mlir::Value());
  if (!grouped)
    m = tb.i32Arg();
  // The streamed image's flags (Schedule::imageStream): right after M.
  if (spec.imageStream)
    tb.bufferArg(tb.builder().getI32Type());
  mlir::Value dumpData, dumpScales;
  if (spec.epilogue == Epilogue::BF16DumpQuant) {
    dumpData = tb.bufferArg(tb.i8());
    dumpScales = tb.bufferArg(tb.i8());
  }

  // Split-K and stream-K sum partial tiles through a workspace (splits = 0:
  // stream-K's segments).
  // (The scatter epilogue's splits add their partial tiles on their own.)
  dsl::SplitK split;
  if ((spec.splitK > 1 || spec.streamK) && !scatter) {
    split.workspace = tb.bufferArg(tb.f32());
    split.counters = tb.bufferArg(tb.builder().getI32Type());
    split.splits = spec.streamK ? 0 : spec.splitK;
  }
  // Its run-time scalars: the activation's parameters, doweight, the real
  // intermediate size (spec.n is twice the padded one).
  dsl::Index realCols(&tb, mlir::Value());
  if (actMx) {
    actOut.kind = tile::toTile(spec.activation);
    actOut.rounding = spec.rounding;
    actOut.scaleRep = spec.moeScaleRep;
    actOut.p0 = tb.f32Arg();
    actOut.p1 = tb.f32Arg();
    actOut.doweight = tb.i32Arg().value().getDefiningOp<mlir::arith::IndexCastOp>().getIn();
    realCols = tb.i32Arg();
  }
  // The scatter epilogue's: tokens, use the weights, the real N, has a bias.
  mlir::Value hasBias;
  if (scatter) {
    scatterOut.tokens = tb.i32Arg().value();
    scatterOut.useWeights = tb.i32Arg().value().getDefiningOp<mlir::arith::IndexCastOp>().getIn();
    realCols = tb.i32Arg();
    hasBias = tb.i32Arg().value().getDefiningOp<mlir::arith::IndexCastOp>().getIn();
  }

  dsl::Index n0 = tb.tileId(0) * spec.bn;
  dsl::Index m0 = tb.tileId(1) * spec.bm;
  // The weight rows: the expert's N rows of the [E * N, K] weights.
  dsl::Index weightRow = n0;
  if (grouped) {
    auto [expert, rows] = tb.groupBlock(groups, numValid, tb.tileId(1));
    m = rows;
    weightRow = expert * spec.n + n0;
    if (scatter) {
      // The expert's bias row, added by the first K split only.
      mlir::ImplicitLocOpBuilder &b = tb.builder();
      scatterOut.biasRow = mlir::arith::MulIOp::create(b, expert.value(), realCols.value());
      scatterOut.cols = realCols.value();
      mlir::Value first =
          spec.splitK > 1
              ? mlir::arith::CmpIOp::create(b, mlir::arith::CmpIPredicate::eq, tb.tileId(2).value(),
                                            tb.constant(0).value())
              : mlir::Value();
      scatterOut.withBias =
          first ? mlir::arith::SelectOp::create(b, first, hasBias,
                                                mlir::arith::ConstantIntOp::create(b, 0, 32))
                : hasBias;
    }
  }
  dsl::Index valid = m - m0; // rows of this tile that exist (M tail)
  // The activations and C have K and N columns; the weights' rows and K
  // are padded to whole tiles (gemmWeightRows, gemmWeightK), which the
  // loop covers: the loads read activation columns past K as zeros and the
  // store drops the output columns past N.
  const int64_t weightK = gemmWeightK(spec.arch, spec.k);
  dsl::Index kDim = tb.constant(spec.k), nDim = tb.constant(spec.n);

  // Split z of split-K covers K steps [z * S / splits, (z+1) * S / splits)
  // of the S = K / BK (floors: the splits differ by at most one step).
  dsl::Index kBegin = tb.constant(0), kEnd = tb.constant(weightK);
  if (spec.splitK > 1) {
    dsl::Index z = tb.tileId(2);
    const int64_t steps = weightK / spec.bk;
    kBegin = (z * steps / spec.splitK) * spec.bk;
    kEnd = ((z + 1) * steps / spec.splitK) * spec.bk;
  }
  dsl::Tile acc =
      tb.loopK(kBegin, kEnd, spec.bk, tb.zero(spec.bm, spec.bn), [&](dsl::Index k0, dsl::Tile acc) {
        dsl::MxTile qa;
        if (mx) {
          qa = tb.loadMx(a, as, m0, k0, kDim, valid, spec.bm, spec.bk, spec.moeScaleRep);
        } else if (qdq) {
          qa = tb.loadQdq(a, m0, k0, kDim, valid, spec.bm, spec.bk);
        } else {
          dsl::Tile x = tb.load(a, m0, k0, kDim, valid, spec.bm, spec.bk);
          qa = tb.quantize(x, spec.rounding, dumpData, dumpScales);
        }
        dsl::MxTile qw = tb.loadWeight(w, ws, weightRow, k0, weightK, spec.weightLayout,
                                       spec.scaleLayout, spec.bn, spec.bk, descriptors);
        return tb.scaledMma(qa, qw, acc);
      });
  if (spec.activation != Activation::None && !actMx) {
    dsl::Activation act;
    act.kind = tile::toTile(spec.activation);
    act.alpha = act.beta = spec.activationParams[0];
    act.limit = act.linearBeta = spec.activationParams[1];
    acc = tb.activation(act, acc);
  }
  if (actMx)
    tb.storeActMx(acc, actOut, m0, n0, tb.constant(spec.n / 2), realCols, valid, split);
  else if (scatter)
    tb.storeScatterAdd(acc, scatterOut, m0, n0, nDim, valid);
  else
    tb.store(acc, c, m0, n0, nDim, valid, split);
  tb.finish();
  setSchedule(module, spec);
}

void buildQuantizeMx(mlir::ModuleOp module, const KernelSpec &spec) {
  dsl::TileBuilder tb(module, spec.name());
  mlir::Value a = tb.bufferArg(tb.bf16());
  // quant_mxfp4 writes codes and scales, qdq_mxfp4 the dequantized values.
  const bool qdq = spec.op == OpKind::QdqMx;
  mlir::Value codes = qdq ? mlir::Value() : tb.bufferArg(tb.i8());
  mlir::Value scales = qdq ? mlir::Value() : tb.bufferArg(tb.i8());
  mlir::Value out = qdq ? tb.bufferArg(tb.bf16()) : mlir::Value();
  dsl::Index m = tb.i32Arg();
  // The streamed image's flags (Schedule::imageStream): right after M.
  if (spec.imageStream)
    tb.bufferArg(tb.builder().getI32Type());
  // One BM x BK block per workgroup: x = K / BK blocks, y = M / BM rows
  // (streamed: a loop over the blocks, which maps the same ids).
  dsl::Index k0 = tb.tileId(0) * spec.bk;
  dsl::Index m0 = tb.tileId(1) * spec.bm;
  dsl::Tile x = tb.load(a, m0, k0, tb.constant(spec.k), m - m0, spec.bm, spec.bk);
  tb.quantize(x, spec.rounding, codes, scales, out);
  tb.finish();
  setSchedule(module, spec);
}

void buildKernel(mlir::ModuleOp module, const KernelSpec &spec) {
  if (spec.op == OpKind::MoeCount || spec.op == OpKind::MoePlace)
    buildMoeSort(module, spec);
  else if (isSimt(spec.op))
    buildMoeElementwise(module, spec);
  else if (isQuantizer(spec.op))
    buildQuantizeMx(module, spec);
  else
    buildGemmA4W4(module, spec);
}

} // namespace mxfp4
