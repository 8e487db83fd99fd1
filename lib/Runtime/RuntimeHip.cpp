//===- RuntimeHip.cpp - AMD GPUs through libamdhip64 ----------------------===//
//
// HIP's module API, loaded with dlopen; types declared here (no ROCm SDK at
// build time). The chip comes from the KFD topology in sysfs
// (gfx_target_version, e.g. 90500 = gfx950), which avoids depending on the
// layout of hipDeviceProp_t across ROCm versions.
//
// No AMD GPU is available to this project's tests: this file is exercised
// only up to "no device" here; the code objects it loads are pinned by the
// ISA tests.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/Device.h"

#include <dlfcn.h>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>

namespace mxfp4 {

namespace {
using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;
constexpr int kHostToDevice = 1, kDeviceToHost = 2; // hipMemcpyKind

struct HipApi {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipGetDevice)(int *);
  hipError_t (*hipDeviceSynchronize)();
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t, const char *);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, hipStream_t, void **, void **);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipMemcpy)(void *, const void *, size_t, int);
  hipError_t (*hipMemsetAsync)(void *, int, size_t, hipStream_t);
  hipError_t (*hipEventCreate)(hipEvent_t *);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventSynchronize)(hipEvent_t);
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  const char *(*hipGetErrorName)(hipError_t);
  /// Null where the runtime lacks it (then no stream is ever captured).
  hipError_t (*hipStreamIsCapturing)(hipStream_t, int *);
  std::string error;

  static const HipApi &get() {
    static const HipApi api = load();
    return api;
  }

private:
  static HipApi load() {
    HipApi a{};
    void *h = nullptr;
    for (const char *lib : {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"})
      if ((h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!h) {
      a.error = "libamdhip64.so not found";
      return a;
    }
    bool ok = true;
    auto sym = [&](auto &fn, const char *name) {
      void *p = dlsym(h, name);
      ok &= p != nullptr;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(a.hipInit, "hipInit");
    sym(a.hipGetDeviceCount, "hipGetDeviceCount");
    sym(a.hipSetDevice, "hipSetDevice");
    sym(a.hipGetDevice, "hipGetDevice");
    sym(a.hipDeviceSynchronize, "hipDeviceSynchronize");
    sym(a.hipModuleLoadData, "hipModuleLoadData");
    sym(a.hipModuleGetFunction, "hipModuleGetFunction");
    sym(a.hipModuleLaunchKernel, "hipModuleLaunchKernel");
    sym(a.hipMalloc, "hipMalloc");
    sym(a.hipFree, "hipFree");
    sym(a.hipMemcpy, "hipMemcpy");
    sym(a.hipMemsetAsync, "hipMemsetAsync");
    sym(a.hipEventCreate, "hipEventCreate");
    sym(a.hipEventRecord, "hipEventRecord");
    sym(a.hipEventSynchronize, "hipEventSynchronize");
    sym(a.hipEventElapsedTime, "hipEventElapsedTime");
    sym(a.hipEventDestroy, "hipEventDestroy");
    sym(a.hipGetErrorName, "hipGetErrorName");
    a.hipStreamIsCapturing =
        reinterpret_cast<decltype(a.hipStreamIsCapturing)>(dlsym(h, "hipStreamIsCapturing"));
    if (!ok)
      a.error = "libamdhip64 lacks a HIP entry point we need";
    return a;
  }
};

Error check(hipError_t r, const char *call, std::string_view kernel = "") {
  if (r == 0)
    return Error::success();
  const char *name = HipApi::get().hipGetErrorName ? HipApi::get().hipGetErrorName(r) : "?";
  std::string msg = std::string(call) + " failed: " + name + " (" + std::to_string(r) + ")";
  if (!kernel.empty())
    msg += strCat(" for kernel ", kernel);
  return Error(std::move(msg));
}

/// The gfx target of GPU `ordinal` from the KFD topology (nodes without a
/// gfx_target_version are CPUs).
std::optional<Arch> kfdArch(int ordinal) {
  int gpu = 0;
  for (int node = 0; node < 64; ++node) {
    std::ifstream file("/sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties");
    if (!file)
      break;
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    size_t at = text.find("gfx_target_version ");
    if (at == std::string::npos)
      continue;
    unsigned version = unsigned(std::strtoul(text.c_str() + at + 19, nullptr, 10));
    if (version == 0)
      continue;
    if (gpu++ != ordinal)
      continue;
    if (version == 90500)
      return Arch::GFX950;
    if (version == 120500)
      return Arch::GFX1250;
    return std::nullopt;
  }
  return std::nullopt;
}

/// The device current on the calling thread for a scope (HIP's current
/// device is per thread: an engine's own threads may have another one, or
/// the default 0), and what was current before after it.
class DeviceScope {
public:
  explicit DeviceScope(int ordinal) {
    const HipApi &api = HipApi::get();
    if (api.hipGetDevice(&previous) == 0 && previous != ordinal)
      switched = api.hipSetDevice(ordinal) == 0;
  }
  ~DeviceScope() {
    if (switched)
      (void)HipApi::get().hipSetDevice(previous);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  int previous = -1;
  bool switched = false;
};

class HipDevice final : public Device {
public:
  HipDevice(int ordinal, Arch arch) : ordinal(ordinal), devArch(arch) {}
  Arch arch() const override { return devArch; }
  std::string name() const override { return "AMD GPU " + std::to_string(ordinal); }
  std::string_view driver() const override { return "hip"; }

  Expected<void *> alloc(size_t bytes) override {
    DeviceScope scope(ordinal);
    void *p = nullptr;
    if (auto e = check(api().hipMalloc(&p, bytes), "hipMalloc"))
      return e;
    return p;
  }
  void free(void *p) override {
    if (!p)
      return;
    DeviceScope scope(ordinal);
    (void)api().hipFree(p);
  }
  Error copyToDevice(void *dst, const void *src, size_t n) override {
    DeviceScope scope(ordinal);
    return check(api().hipMemcpy(dst, src, n, kHostToDevice), "hipMemcpy");
  }
  Error copyToHost(void *dst, const void *src, size_t n) override {
    DeviceScope scope(ordinal);
    return check(api().hipMemcpy(dst, src, n, kDeviceToHost), "hipMemcpy");
  }
  Error fill(void *dst, uint8_t byte, size_t n, void *stream) override {
    DeviceScope scope(ordinal);
    return check(api().hipMemsetAsync(dst, byte, n, hipStream_t(stream)), "hipMemsetAsync");
  }
  Error synchronize() override {
    DeviceScope scope(ordinal);
    return check(api().hipDeviceSynchronize(), "hipDeviceSynchronize");
  }
  Expected<bool> capturing(void *stream) override {
    DeviceScope scope(ordinal);
    if (!api().hipStreamIsCapturing)
      return false;
    int status = 0; // hipStreamCaptureStatusNone / Active / Invalidated
    if (auto e =
            check(api().hipStreamIsCapturing(hipStream_t(stream), &status), "hipStreamIsCapturing"))
      return e;
    return status != 0;
  }
  Error launch(const CompiledKernel &k, const LaunchGeometry &g, void **args,
               void *stream) override {
    DeviceScope scope(ordinal);
    Expected<hipFunction_t> fn = function(k);
    if (!fn)
      return fn.takeError();
    return check(api().hipModuleLaunchKernel(*fn, g.grid[0], g.grid[1], g.grid[2], g.block[0],
                                             g.block[1], g.block[2], g.sharedBytes,
                                             hipStream_t(stream), args, nullptr),
                 "hipModuleLaunchKernel", k.symbol);
  }
  Expected<double> time(const std::function<Error()> &work, void *stream) override {
    DeviceScope scope(ordinal);
    hipEvent_t start = nullptr, stop = nullptr;
    if (auto e = check(api().hipEventCreate(&start), "hipEventCreate"))
      return e;
    if (auto e = check(api().hipEventCreate(&stop), "hipEventCreate"))
      return e;
    Error err = check(api().hipEventRecord(start, hipStream_t(stream)), "hipEventRecord");
    if (!err)
      err = work();
    if (!err)
      err = check(api().hipEventRecord(stop, hipStream_t(stream)), "hipEventRecord");
    if (!err)
      err = check(api().hipEventSynchronize(stop), "hipEventSynchronize");
    float ms = 0;
    if (!err)
      err = check(api().hipEventElapsedTime(&ms, start, stop), "hipEventElapsedTime");
    api().hipEventDestroy(start);
    api().hipEventDestroy(stop);
    if (err)
      return err;
    return double(ms);
  }

private:
  static const HipApi &api() { return HipApi::get(); }

  Expected<hipFunction_t> function(const CompiledKernel &k) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = functions.find(k.symbol); it != functions.end())
      return it->second;
    if (k.format != BinaryFormat::HSACO)
      return makeError("kernel ", k.symbol, " is ", toString(k.format),
                       "; an AMD device loads HSA code objects");
    hipModule_t mod = nullptr;
    if (auto e =
            check(api().hipModuleLoadData(&mod, k.binary.data()), "hipModuleLoadData", k.symbol))
      return e;
    hipFunction_t fn = nullptr;
    if (auto e = check(api().hipModuleGetFunction(&fn, mod, k.symbol.c_str()),
                       "hipModuleGetFunction", k.symbol))
      return e;
    functions[k.symbol] = fn;
    return fn;
  }

  int ordinal;
  Arch devArch;
  std::mutex mutex;
  std::unordered_map<std::string, hipFunction_t> functions;
};
} // namespace

Expected<std::unique_ptr<Device>> openHipDevice(int ordinal) {
  const HipApi &api = HipApi::get();
  if (!api.error.empty())
    return Error(api.error);
  if (auto e = check(api.hipInit(0), "hipInit"))
    return e;
  int count = 0;
  if (auto e = check(api.hipGetDeviceCount(&count), "hipGetDeviceCount"))
    return e;
  if (ordinal < 0 || ordinal >= count)
    return Error("no HIP device " + std::to_string(ordinal));
  std::optional<Arch> arch = kfdArch(ordinal);
  if (!arch)
    return Error("AMD GPU " + std::to_string(ordinal) +
                 " is neither gfx950 nor gfx1250 (KFD topology)");
  if (auto e = check(api.hipSetDevice(ordinal), "hipSetDevice"))
    return e;
  return std::make_unique<HipDevice>(ordinal, *arch);
}

} // namespace mxfp4
