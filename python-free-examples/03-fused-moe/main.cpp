//===- main.cpp - Example 3: a fused MoE layer ----------------------------===//
//
// One MoE layer shaped like GPT-OSS's (SwiGLU with alpha 1.702 and limit 7,
// biases on both GEMMs), small enough to check in float64:
//  1. random MXFP4 expert weights (packed E2M1 with E8M0 scales, W1 in the
//     GGUU layout), BF16 hidden states and a top-k routing;
//  2. the float64 reference of the layer on the CPU (referenceMoe, the QDQ
//     math the kernels compute), printed as a checksum; without a GPU the
//     example stops here;
//  3. on a GPU: prepareMoeWeights once, fusedMoeA4W4 (sorting, gathered
//     quantization, both grouped GEMMs, the activation and the weighted sum
//     on the device, no host synchronisation), and the output checked
//     against the reference.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Ops/MoeReference.h"
#include "mxfp4/Support/BF16.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

using namespace mxfp4;

static int fail(const std::string &msg) {
  std::fprintf(stderr, "fused-moe: %s\n", msg.c_str());
  return 1;
}

int main() {
  // 16 experts, 4 per token, hidden 512, intermediate 256: GPT-OSS's layer
  // shrunk (its hidden and inter are 2880, multiples of 32 as these).
  const MoeShape shape{16, 4, 512, 256};
  const int64_t tokens = 40;
  const int64_t e = shape.experts, h = shape.hidden, inter = shape.inter;
  std::mt19937_64 rng(2026);
  auto bytes = [&](size_t n, uint8_t lo, uint8_t span) {
    std::vector<uint8_t> v(n);
    for (uint8_t &b : v)
      b = span ? uint8_t(lo + rng() % span) : uint8_t(rng());
    return v;
  };
  // W1 [E, 2 inter, H/2] (gate rows, then up rows), W2 [E, H, inter/2];
  // scales 2^-11 .. 2^-1 as in real checkpoints.
  std::vector<uint8_t> w1 = bytes(size_t(e * 2 * inter * h / 2), 0, 0);
  std::vector<uint8_t> s1 = bytes(size_t(e * 2 * inter * h / 32), 116, 11);
  std::vector<uint8_t> w2 = bytes(size_t(e * h * inter / 2), 0, 0);
  std::vector<uint8_t> s2 = bytes(size_t(e * h * inter / 32), 116, 11);
  std::normal_distribution<float> normal;
  std::vector<float> b1(size_t(e * 2 * inter)), b2(size_t(e * h));
  for (float &b : b1)
    b = 0.1f * normal(rng);
  for (float &b : b2)
    b = 0.1f * normal(rng);
  std::vector<uint16_t> hidden(size_t(tokens * h));
  for (uint16_t &x : hidden)
    x = floatToBf16(normal(rng));
  // Each token's top-k distinct experts and their softmax weights.
  std::vector<int32_t> ids(size_t(tokens * shape.topk));
  std::vector<float> weights(ids.size());
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<int32_t> experts(static_cast<size_t>(e));
    std::iota(experts.begin(), experts.end(), 0);
    std::shuffle(experts.begin(), experts.end(), rng);
    float sum = 0;
    for (int64_t s = 0; s < shape.topk; ++s) {
      ids[size_t(t * shape.topk + s)] = experts[size_t(s)];
      sum += weights[size_t(t * shape.topk + s)] = std::exp(normal(rng));
    }
    for (int64_t s = 0; s < shape.topk; ++s)
      weights[size_t(t * shape.topk + s)] /= sum;
  }

  FusedMoeOptions options;
  options.activation = swigluGptOss();
  // With a W1 bias stage 1 stores bf16 gate/up rows and quantizes their
  // activation in a second kernel; the reference follows the same path.
  options.fuseActivation = false;

  MoeHostWeights host{shape, w1, s1, w2, s2, b1, b2};
  std::vector<int64_t> all(static_cast<size_t>(tokens));
  std::iota(all.begin(), all.end(), 0);
  std::vector<double> ref =
      referenceMoe(host, hidden, ids, weights, options, {}, /*quantized=*/true, all);
  double refNorm = 0;
  for (double x : ref)
    refNorm += x * x;
  refNorm = std::sqrt(refNorm);
  std::printf("MoE layer E=%lld topk=%lld H=%lld inter=%lld (SwiGLU, biases), %lld tokens: "
              "float64 reference |out| = %.6g\n",
              (long long)e, (long long)shape.topk, (long long)h, (long long)inter,
              (long long)tokens, refNorm);

  auto devOr = Device::open();
  if (!devOr) {
    std::printf("no GPU: %s\n", devOr.takeError().message().c_str());
    return 0;
  }
  Device &dev = **devOr;
  auto layer = prepareMoeWeights(dev, shape, w1, s1, w2, s2, GateUpLayout::Gguu, std::nullopt,
                                 MoeBiases{b1, b2});
  if (!layer)
    return fail(layer.takeError().message());
  auto upload = [&](const void *src, size_t n) -> void * {
    Expected<void *> p = dev.alloc(n);
    if (!p || dev.copyToDevice(*p, src, n))
      return nullptr;
    return *p;
  };
  void *dHidden = upload(hidden.data(), hidden.size() * 2);
  void *dIds = upload(ids.data(), ids.size() * 4);
  void *dWeights = upload(weights.data(), weights.size() * 4);
  Expected<void *> dOut = dev.alloc(size_t(tokens * h * 2));
  if (!dHidden || !dIds || !dWeights || !dOut)
    return fail("device allocation or copy failed");
  if (Error err = fusedMoeA4W4(dev, nullptr, dHidden, tokens, static_cast<int32_t *>(dIds),
                               static_cast<float *>(dWeights), **layer, options, *dOut))
    return fail(err.message());
  std::vector<uint16_t> out(size_t(tokens * h));
  if (Error err = dev.copyToHost(out.data(), *dOut, out.size() * 2))
    return fail(err.message());
  double diff = 0;
  int64_t nonFinite = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double got = bf16ToFloat(out[i]);
    nonFinite += !std::isfinite(got);
    diff += (got - ref[i]) * (got - ref[i]);
  }
  const double relL2 = std::sqrt(diff) / refNorm;
  // bf16 output and the intermediate's requantization near ties: well
  // under 1 % of the output's norm.
  const bool ok = nonFinite == 0 && relL2 <= 1e-2;
  std::printf("%s: fusedMoeA4W4 rel-L2 vs float64 QDQ reference %.2e -> %s\n", dev.name().c_str(),
              relL2, ok ? "PASS" : "FAIL");
  for (void *p : {dHidden, dIds, dWeights, *dOut})
    dev.free(p);
  return ok ? 0 : 1;
}
