//===- FakeDevice.h - A Device in host memory, for CPU tests ------*- C++ -*-===//
//
// Lets the API's argument checks, weight preparation and dispatch run in CPU
// CI: memory is host memory (checked for balance and bounds), copies are
// memcpy, and a launch records the kernel and its geometry instead of
// running it (then fails, or succeeds when `launchSucceeds`).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_FAKEDEVICE_H
#define MXFP4_UNITTESTS_TESTUTIL_FAKEDEVICE_H

#include "mxfp4/Runtime/Device.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mxfp4::test {

class FakeDevice : public Device {
public:
  explicit FakeDevice(Arch arch = Arch::GFX950, int multiprocessors = 0)
      : deviceArch(arch), sms(multiprocessors) {}
  ~FakeDevice() override {
    for (auto &[p, n] : live)
      std::free(p);
  }

  Arch arch() const override { return deviceArch; }
  std::string name() const override { return "fake host device"; }
  std::string_view driver() const override { return "fake"; }
  int multiprocessorCount() const override { return sms; }

  Expected<void *> alloc(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex);
    void *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!p)
      return makeError("fake device: out of memory for ", bytes, " bytes");
    live[p] = bytes;
    ++allocations;
    return p;
  }
  void free(void *ptr) override {
    if (!ptr)
      return; // as the drivers
    std::lock_guard<std::mutex> lock(mutex);
    if (live.erase(ptr))
      std::free(ptr);
    else
      ++badFrees;
  }
  Error copyToDevice(void *dst, const void *src, size_t bytes) override {
    if (Error e = checkRange(dst, bytes))
      return e;
    std::memcpy(dst, src, bytes);
    return Error::success();
  }
  Error copyToHost(void *dst, const void *src, size_t bytes) override {
    if (Error e = checkRange(src, bytes))
      return e;
    std::memcpy(dst, src, bytes);
    return Error::success();
  }
  Error fill(void *dst, uint8_t byte, size_t bytes, void *) override {
    if (Error e = checkRange(dst, bytes))
      return e;
    std::memset(dst, byte, bytes);
    return Error::success();
  }
  Error synchronize() override { return Error::success(); }
  /// sm_90a weights: a descriptor whose bytes say nothing (never read here).
  Expected<std::array<uint8_t, 128>> encodeTensorMap(const void *global, std::array<uint64_t, 3>,
                                                     std::array<uint32_t, 3>) override {
    if (Error e = checkRange(global, 16))
      return e;
    return std::array<uint8_t, 128>{};
  }
  Error launch(const CompiledKernel &kernel, const LaunchGeometry &geometry, void **,
               void *) override {
    std::lock_guard<std::mutex> lock(mutex);
    launches.push_back({kernel.symbol, geometry});
    if (launchSucceeds)
      return Error::success();
    return makeError("fake device: cannot run ", kernel.symbol);
  }
  Expected<double> time(const std::function<Error()> &work, void *) override {
    if (Error e = work())
      return e;
    return 0.0;
  }

  struct Launch {
    std::string symbol;
    LaunchGeometry geometry;
  };
  std::vector<Launch> launches;
  bool launchSucceeds = false;
  size_t allocations = 0, badFrees = 0;
  size_t liveAllocations() const {
    std::lock_guard<std::mutex> lock(mutex);
    return live.size();
  }

private:
  /// [p, p + bytes) lies inside one live allocation.
  Error checkRange(const void *p, size_t bytes) const {
    std::lock_guard<std::mutex> lock(mutex);
    auto c = static_cast<const char *>(p);
    for (auto &[base, n] : live) {
      auto b = static_cast<const char *>(base);
      if (c >= b && c <= b + n && bytes <= size_t(b + n - c))
        return Error::success();
    }
    return makeError("fake device: ", bytes, " bytes at 0x", reinterpret_cast<uintptr_t>(p),
                     " are outside every allocation");
  }

  Arch deviceArch;
  int sms;
  mutable std::mutex mutex;
  std::map<void *, size_t> live;
};

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_FAKEDEVICE_H
