//===- HostOverhead.cpp - The library's own host time per call ------------===//

#include "HostOverhead.h"

#include <algorithm>
#include <atomic>
#include <chrono>

namespace mxfp4::bench {

namespace {

/// `inner` with launches counted and dropped.
class LaunchlessDevice final : public Device {
public:
  explicit LaunchlessDevice(Device &inner) : inner(inner) {}

  Arch arch() const override { return inner.arch(); }
  std::string name() const override { return inner.name() + " (launches dropped)"; }
  std::string_view driver() const override { return inner.driver(); }
  Expected<void *> alloc(size_t bytes) override { return inner.alloc(bytes); }
  void free(void *p) override { inner.free(p); }
  Error copyToDevice(void *dst, const void *src, size_t bytes) override {
    return inner.copyToDevice(dst, src, bytes);
  }
  Error copyToHost(void *dst, const void *src, size_t bytes) override {
    return inner.copyToHost(dst, src, bytes);
  }
  Error fill(void *dst, uint8_t byte, size_t bytes, void *stream) override {
    return inner.fill(dst, byte, bytes, stream);
  }
  Error synchronize() override { return inner.synchronize(); }
  Expected<bool> capturing(void *stream) override { return inner.capturing(stream); }
  int multiprocessorCount() const override { return inner.multiprocessorCount(); }
  Error launch(const CompiledKernel &, const LaunchGeometry &, void **, void *) override {
    launches.fetch_add(1, std::memory_order_relaxed);
    return Error::success();
  }
  Expected<std::array<uint8_t, 128>> encodeTensorMap(const void *global,
                                                     std::array<uint64_t, 3> dims,
                                                     std::array<uint32_t, 3> box) override {
    return inner.encodeTensorMap(global, dims, box);
  }
  Expected<double> time(const std::function<Error()> &work, void *stream) override {
    return inner.time(work, stream);
  }

  std::atomic<int64_t> launches{0};

private:
  Device &inner;
};

} // namespace

Expected<LibraryHostTime> libraryHostTime(Device &dev, const std::vector<uint8_t> &wFp4,
                                          const std::vector<uint8_t> &wScale, int64_t n, int64_t k,
                                          int64_t m, void *a, void *out, unsigned reps) {
  LaunchlessDevice view(dev);
  Expected<std::unique_ptr<PreparedWeight>> w = prepareGemmA4W4Weight(view, wFp4, wScale, n, k);
  if (!w)
    return w.takeError();
  // The first call resolves its kernels (JIT memory hits: the real run
  // compiled them) and grows scratch; the measured ones are eager calls.
  if (Error e = gemmA4W4(view, nullptr, a, m, **w, out))
    return e;
  LibraryHostTime t;
  t.launches = view.launches.load();
  std::vector<double> us;
  for (unsigned r = 0; r < std::max(reps, 1u); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    Error e = gemmA4W4(view, nullptr, a, m, **w, out);
    us.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (e)
      return e;
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  t.us = us[us.size() / 2];
  return t;
}

} // namespace mxfp4::bench
