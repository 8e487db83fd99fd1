//===- ActivationEmitter.cpp - Epilogue activations as IR ------------------===//

#include "mxfp4/Conversion/ActivationEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace mxfp4 {

Value emitActivation(ImplicitLocOpBuilder &b, tile::ActivationOp op, Value g, Value u) {
  auto vt = cast<VectorType>(g.getType());
  auto splat = [&](float v) -> Value {
    return arith::ConstantOp::create(b, vt, DenseElementsAttr::get(vt, v));
  };
  auto sigmoid = [&](Value x) -> Value {
    Value e = math::ExpOp::create(b, arith::NegFOp::create(b, x));
    return arith::DivFOp::create(b, splat(1.0f), arith::AddFOp::create(b, splat(1.0f), e));
  };
  // tanh(x) = 1 - 2 / (exp(2x) + 1)
  auto tanh = [&](Value x) -> Value {
    Value e = math::ExpOp::create(b, arith::MulFOp::create(b, x, splat(2.0f)));
    Value q = arith::DivFOp::create(b, splat(2.0f), arith::AddFOp::create(b, e, splat(1.0f)));
    return arith::SubFOp::create(b, splat(1.0f), q);
  };
  switch (op.getKind()) {
  case tile::ActivationKind::none:
    return g;
  case tile::ActivationKind::silu: {
    Value r = arith::MulFOp::create(b, g, sigmoid(g));
    return u ? arith::MulFOp::create(b, r, u).getResult() : r;
  }
  case tile::ActivationKind::swiglu: {
    float alpha = op.getAlphaAttr().getValueAsDouble(), limit = op.getLimitAttr().getValueAsDouble();
    Value gc = arith::MinimumFOp::create(b, g, splat(limit));
    Value uc = arith::MaximumFOp::create(b, arith::MinimumFOp::create(b, u, splat(limit)),
                                         splat(-limit));
    Value glu = arith::MulFOp::create(b, gc, sigmoid(arith::MulFOp::create(b, gc, splat(alpha))));
    return arith::MulFOp::create(b, glu, arith::AddFOp::create(b, uc, splat(1.0f)));
  }
  case tile::ActivationKind::situv2: {
    float beta = op.getBetaAttr().getValueAsDouble();
    float lbeta = op.getLinearBetaAttr().getValueAsDouble();
    Value sg = arith::MulFOp::create(
        b, arith::MulFOp::create(b, splat(beta), tanh(arith::DivFOp::create(b, g, splat(beta)))),
        sigmoid(g));
    Value su =
        arith::MulFOp::create(b, splat(lbeta), tanh(arith::DivFOp::create(b, u, splat(lbeta))));
    return arith::MulFOp::create(b, sg, su);
  }
  }
  llvm_unreachable("unknown activation");
}

} // namespace mxfp4
