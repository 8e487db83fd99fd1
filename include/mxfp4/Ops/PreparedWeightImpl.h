//===- PreparedWeightImpl.h - Inside a PreparedWeight ------------*- C++ -*-===//
//
// Not part of the API (GemmA4W4.h has that): the device buffers of prepared
// weights, the scratch the GEMMs keep per stream and the launches their
// eager calls resolved. The library's ops and its tests include it;
// applications do not.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_PREPAREDWEIGHTIMPL_H
#define MXFP4_OPS_PREPAREDWEIGHTIMPL_H

#include "mxfp4/JIT/CompiledKernel.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace mxfp4 {

/// A kernel from the JIT and its launch geometry for the rows it runs.
struct ResolvedLaunch {
  std::shared_ptr<const CompiledKernel> kernel;
  LaunchGeometry geometry;
};

/// What one GEMM call launches, resolved: dispatch's plan for an M with
/// each kernel fetched from the JIT and its geometry computed. A call that
/// finds it for its M launches without planning, naming kernels or
/// looking them up (what keeps an eager call's host time down).
struct ResolvedGemm {
  GemmA4W4Plan::Path path = GemmA4W4Plan::Path::Inline;
  int64_t splitM = 0;                ///< GemmA4W4Plan::splitM
  int64_t streamWorkgroupsPerSm = 0; ///< GemmA4W4Plan::streamWorkgroupsPerSm
  std::optional<ResolvedLaunch> quantizer;
  /// One, or two when M is split (the first over rows [0, splitM)).
  std::vector<ResolvedLaunch> gemms;
};

struct PreparedWeight::Impl {
  /// Takes ownership of the device buffers `data` and `scales`.
  Impl(Device &dev, Arch arch, int64_t n, int64_t k, void *data, void *scales)
      : dev(&dev), arch(arch), n(n), k(k), data(data), scales(scales) {}
  ~Impl();
  Impl(const Impl &) = delete;
  Impl &operator=(const Impl &) = delete;

  Device *dev;
  Arch arch;
  int64_t n, k;
  void *data, *scales;
  /// sm_90a: the TMA descriptors of the weights and scales for BN 128 and BN
  /// 64 boxes (4 x 128 bytes).
  void *descriptors = nullptr;
  bool scalesBelow128 = false;

  /// Split-K scratch for `m` rows of output in `splits` parts: an f32
  /// workspace of splits * m * N (pass M rounded up to the M tile: kernels
  /// store whole tiles) and tile counters (zeroed on `stream` when
  /// allocated; kernels leave them zero).
  ///
  /// Scratch belongs to a stream: the calls of one stream run in order and
  /// share it, calls on other streams (from any threads) get their own, so
  /// they may run at the same time on one PreparedWeight. It grows on demand
  /// (at least doubling) and is never freed before the PreparedWeight: work
  /// queued or captured into a graph on the old buffers stays valid.
  /// Growing allocates, which cannot happen while `stream` is captured into
  /// a graph: then these fail with what to do (run the call once on that
  /// stream before capturing).
  /// `columns`: the output's columns when fewer than the weight's N (a
  /// MoE GEMM's N per expert; 0 for N).
  Expected<std::pair<void *, void *>>
  splitKScratch(int64_t m, int64_t splits, void *stream = nullptr, int64_t columns = 0) const;
  /// Device buffers for the MXFP4 activations of up to `m` rows (packed codes
  /// [m, K/2], scales [m, K/32]) when gemmA4W4 quantizes in a separate pass;
  /// `stream`'s, grown like the others.
  Expected<std::pair<void *, void *>> activationScratch(int64_t m, void *stream = nullptr) const;
  /// Scratch for the activation image of M rows (what qdq_mxfp4 writes,
  /// Kernels/Sm90Pipeline.h), grown like the others.
  Expected<void *> qdqScratch(int64_t m, void *stream = nullptr) const;
  /// The streamed image's flags for M rows (one i32 per 128-row block and
  /// 128-K chunk; zeroed when allocated, kernels leave them zero).
  Expected<void *> imageFlagsScratch(int64_t m, void *stream = nullptr) const;

  /// The calls dispatch plans alike share a key (Ops/GemmA4W4.cpp): the
  /// launches resolved for it, or null. What is remembered stays for the
  /// life of the weights (the tuned rows and the JIT's kernels do not
  /// change within a process).
  const ResolvedGemm *resolved(uint64_t key) const;
  /// Remembers `r` for `key` (taking it) and returns the launches to use:
  /// what the key holds (another thread's, if it was first), or `r` itself,
  /// left to the caller, once kMaxResolved keys are held.
  const ResolvedGemm *remember(uint64_t key, std::unique_ptr<const ResolvedGemm> &r) const;
  /// Enough for every M of a serving engine's batch sizes.
  static constexpr size_t kMaxResolved = 4096;

private:
  /// Two device buffers sized per row of output, grown (at least doubling)
  /// on demand by a const GEMM call (the weights do not change).
  struct RowScratch {
    void *first = nullptr, *second = nullptr;
    int64_t rows = 0;
  };
  struct StreamScratch {
    RowScratch splitK, activations, qdq, imageFlags;
  };
  Expected<std::pair<void *, void *>> grow(RowScratch StreamScratch::*which, int64_t m,
                                           size_t firstPerRow, size_t secondPerRow, bool zeroed,
                                           void *stream, const char *what) const;
  /// Guards `scratch` and `retired` (calls may come from several threads).
  mutable std::mutex scratchMutex;
  mutable std::unordered_map<void *, StreamScratch> scratch;
  /// Buffers that grown scratch replaced, freed with the PreparedWeight.
  mutable std::vector<void *> retired;
  /// Guards `resolvedCalls`; entries are never removed, so the pointers
  /// handed out stay valid.
  mutable std::mutex resolvedMutex;
  mutable std::unordered_map<uint64_t, std::unique_ptr<const ResolvedGemm>> resolvedCalls;
};

} // namespace mxfp4

#endif // MXFP4_OPS_PREPAREDWEIGHTIMPL_H
