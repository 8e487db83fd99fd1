//===- Points.h - What mxfp4-tune measures on the GPU ------------*- C++ -*-===//
//
// The inputs of the points and their contenders (Protocol.h). Dense:
// random weights (scales below 128, as real checkpoints) and activations
// per shape, one contender per candidate plan (Tuning/Candidates.h),
// checked per element against the float64 QDQ reference on sampled rows.
// MoE: one model's layer with random weights and routing, one contender
// per block_m, checked against the float64 layer (Ops/MoeReference.h) on
// sampled tokens as the GPU tests check it. The seed is printed.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_TOOLS_TUNE_POINTS_H
#define MXFP4_TOOLS_TUNE_POINTS_H

#include "Protocol.h"

#include "mxfp4/Format/ReferenceGemm.h"
#include "mxfp4/Ops/MoeReference.h"
#include "mxfp4/Tuning/Candidates.h"

#include <memory>
#include <vector>

namespace mxfp4 {

/// Device buffers freed with it.
class Buffers {
public:
  explicit Buffers(Device &dev) : dev(dev) {}
  ~Buffers();
  Buffers(const Buffers &) = delete;
  Buffers &operator=(const Buffers &) = delete;
  Expected<void *> alloc(size_t bytes);
  void clear();

private:
  Device &dev;
  std::vector<void *> owned;
};

class DensePoints {
public:
  DensePoints(Device &dev, uint64_t seed) : dev(dev), seed(seed), buffers(dev) {}
  /// Inputs for (N, K, M), reusing the weights of the same shape.
  Error prepare(int64_t n, int64_t k, int64_t m);
  std::vector<Contender> contenders(const std::vector<DenseCandidate> &candidates);

private:
  Error run(const DenseCandidate &c);
  Expected<double> check(const DenseCandidate &c);

  Device &dev;
  uint64_t seed;
  Buffers buffers;
  int64_t n = 0, k = 0, m = 0, capacityM = 0;
  std::unique_ptr<PreparedWeight> weights;
  MxMatrix hostWeights;
  std::vector<uint16_t> hostA;
  void *deviceA = nullptr, *deviceC = nullptr;
  std::vector<int64_t> sampleRows;
  GemmResult reference;
};

/// The block_m a MoE point tries: every one the target allows; the default
/// (the heuristic's) first.
std::vector<int64_t> moeBlockMs(Arch arch, const MoeShape &shape, int64_t tokens);

class MoePoints {
public:
  MoePoints(Device &dev, uint64_t seed) : dev(dev), seed(seed), buffers(dev) {}
  /// Inputs for `model` at `tokens`, reusing the weights of the same model.
  Error prepare(const MoeModel &model, int64_t tokens);
  std::vector<Contender> contenders(const std::vector<int64_t> &blockMs);
  /// The stages' moe_gemm kernels fusedMoeA4W4 runs at `blockM` (a row's
  /// `kernels`).
  Expected<std::vector<KernelSpec>> stageGemms(int64_t blockM) const;

private:
  Error run(int64_t blockM);
  Expected<double> check(int64_t blockM);

  Device &dev;
  uint64_t seed;
  Buffers buffers;
  const MoeModel *model = nullptr;
  int64_t tokens = 0;
  std::vector<uint8_t> w1, s1, w2, s2;
  std::unique_ptr<MoeWeights> weights;
  std::vector<uint16_t> hostHidden;
  std::vector<int32_t> ids;
  std::vector<float> routing;
  void *hidden = nullptr, *out = nullptr, *deviceIds = nullptr, *deviceRouting = nullptr;
  std::vector<int64_t> sampleTokens;
  std::vector<double> reference;
};

} // namespace mxfp4

#endif // MXFP4_TOOLS_TUNE_POINTS_H
