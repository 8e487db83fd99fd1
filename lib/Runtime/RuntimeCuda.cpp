//===- RuntimeCuda.cpp - NVIDIA GPUs through libcuda.so.1 -----------------===//
//
// The driver API, loaded with dlopen. The few types we need are declared
// here with the driver's ABI, so building needs no CUDA SDK.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/Device.h"

#include <algorithm>
#include <dlfcn.h>
#include <mutex>
#include <unordered_map>

namespace mxfp4 {

namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
constexpr int kComputeMajor = 75, kComputeMinor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*
constexpr int kMultiprocessorCount = 16;              // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kMaxDynamicShared = 8; // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kProgrammaticStreamSerialization = 6; // CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_...

/// cuLaunchKernelEx's CUlaunchAttribute and CUlaunchConfig (cuda.h, CUDA 12).
struct CuLaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    unsigned value;
    void *align;
  } value;
};
static_assert(sizeof(CuLaunchAttribute) == 72, "CUlaunchAttribute ABI");
struct CuLaunchConfig {
  unsigned grid[3], block[3], sharedMemBytes;
  CUstream stream;
  CuLaunchAttribute *attrs;
  unsigned numAttrs;
};
static_assert(sizeof(CuLaunchConfig) == 56, "CUlaunchConfig ABI");

/// Entry points, resolved once per process.
struct CudaApi {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext *);
  CUresult (*cuCtxPushCurrent)(CUcontext);
  CUresult (*cuCtxPopCurrent)(CUcontext *);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, void *, void **);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  /// Null where the driver lacks it (then no stream is ever captured).
  CUresult (*cuStreamIsCapturing)(CUstream, int *);
  /// CUDA 12+ drivers; null before.
  CUresult (*cuLaunchKernelEx)(const CuLaunchConfig *, CUfunction, void **, void **);
  CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *, const uint64_t *,
                                     const uint64_t *, const unsigned *, const unsigned *, int, int,
                                     int, int);
  std::string error; ///< why loading failed ("" when usable)

  static const CudaApi &get() {
    static const CudaApi api = load();
    return api;
  }

private:
  static CudaApi load() {
    CudaApi a{};
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      a.error = "libcuda.so.1 not found";
      return a;
    }
    bool ok = true;
    auto sym = [&](auto &fn, const char *name, const char *v2 = nullptr) {
      void *p = v2 ? dlsym(h, v2) : nullptr;
      if (!p)
        p = dlsym(h, name);
      if (!p)
        ok = false;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(a.cuInit, "cuInit");
    sym(a.cuDeviceGetCount, "cuDeviceGetCount");
    sym(a.cuDeviceGet, "cuDeviceGet");
    sym(a.cuDeviceGetName, "cuDeviceGetName");
    sym(a.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(a.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(a.cuCtxGetCurrent, "cuCtxGetCurrent");
    sym(a.cuCtxPushCurrent, "cuCtxPushCurrent", "cuCtxPushCurrent_v2");
    sym(a.cuCtxPopCurrent, "cuCtxPopCurrent", "cuCtxPopCurrent_v2");
    sym(a.cuCtxSynchronize, "cuCtxSynchronize");
    sym(a.cuModuleLoadDataEx, "cuModuleLoadDataEx");
    sym(a.cuModuleGetFunction, "cuModuleGetFunction");
    sym(a.cuFuncSetAttribute, "cuFuncSetAttribute");
    sym(a.cuLaunchKernel, "cuLaunchKernel");
    sym(a.cuMemAlloc, "cuMemAlloc", "cuMemAlloc_v2");
    sym(a.cuMemFree, "cuMemFree", "cuMemFree_v2");
    sym(a.cuMemcpyHtoD, "cuMemcpyHtoD", "cuMemcpyHtoD_v2");
    sym(a.cuMemcpyDtoH, "cuMemcpyDtoH", "cuMemcpyDtoH_v2");
    sym(a.cuMemsetD8Async, "cuMemsetD8Async");
    sym(a.cuEventCreate, "cuEventCreate");
    sym(a.cuEventRecord, "cuEventRecord");
    sym(a.cuEventSynchronize, "cuEventSynchronize");
    sym(a.cuEventElapsedTime, "cuEventElapsedTime", "cuEventElapsedTime_v2");
    sym(a.cuEventDestroy, "cuEventDestroy", "cuEventDestroy_v2");
    sym(a.cuGetErrorName, "cuGetErrorName");
    a.cuStreamIsCapturing =
        reinterpret_cast<decltype(a.cuStreamIsCapturing)>(dlsym(h, "cuStreamIsCapturing"));
    a.cuLaunchKernelEx =
        reinterpret_cast<decltype(a.cuLaunchKernelEx)>(dlsym(h, "cuLaunchKernelEx"));
    a.cuTensorMapEncodeTiled =
        reinterpret_cast<decltype(a.cuTensorMapEncodeTiled)>(dlsym(h, "cuTensorMapEncodeTiled"));
    if (!ok)
      a.error = "libcuda.so.1 lacks a driver API entry point we need (driver too old?)";
    return a;
  }
};

Error check(CUresult r, const char *call, std::string_view kernel = "") {
  if (r == 0)
    return Error::success();
  const char *name = "unknown error";
  if (CudaApi::get().cuGetErrorName)
    CudaApi::get().cuGetErrorName(r, &name);
  std::string msg = std::string(call) + " failed: " + name + " (" + std::to_string(r) + ")";
  if (!kernel.empty())
    msg += strCat(" for kernel ", kernel);
  return Error(std::move(msg));
}

/// The device's context, current on the calling thread for a scope: an
/// engine calls from threads of its own, which may have no context current
/// or another device's. What was current before comes back after.
class ContextScope {
public:
  explicit ContextScope(CUcontext ctx) {
    const CudaApi &api = CudaApi::get();
    CUcontext current = nullptr;
    if (api.cuCtxGetCurrent(&current) == 0 && current == ctx)
      return;
    // If this fails, the call it guards reports the missing context.
    pushed = api.cuCtxPushCurrent(ctx) == 0;
  }
  ~ContextScope() {
    CUcontext popped = nullptr;
    if (pushed)
      (void)CudaApi::get().cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  bool pushed = false;
};

class CudaDevice final : public Device {
public:
  CudaDevice(CUdevice dev, CUcontext ctx, std::string name, Arch arch, int multiprocessors)
      : dev(dev), ctx(ctx), devName(std::move(name)), devArch(arch),
        multiprocessors(multiprocessors) {}

  Arch arch() const override { return devArch; }
  std::string name() const override { return devName; }
  std::string_view driver() const override { return "cuda"; }

  Expected<void *> alloc(size_t bytes) override {
    ContextScope scope(ctx);
    CUdeviceptr p = 0;
    if (auto e = check(api().cuMemAlloc(&p, bytes), "cuMemAlloc"))
      return e;
    return reinterpret_cast<void *>(p);
  }
  void free(void *p) override {
    if (!p)
      return;
    ContextScope scope(ctx);
    (void)api().cuMemFree(CUdeviceptr(p));
  }
  Expected<std::array<uint8_t, 128>> encodeTensorMap(const void *global,
                                                     std::array<uint64_t, 3> dims,
                                                     std::array<uint32_t, 3> box) override {
    if (!api().cuTensorMapEncodeTiled)
      return Error("cuTensorMapEncodeTiled is missing from libcuda.so.1 (a CUDA 12+ driver is "
                   "needed for TMA)");
    constexpr int kUint32 = 2, kNone = 0, kL2Promote256 = 3;
    const uint64_t strides[2] = {dims[0] * 4, dims[0] * dims[1] * 4};
    const unsigned elementStrides[3] = {1, 1, 1};
    alignas(64) std::array<uint8_t, 128> map{};
    if (auto e = check(api().cuTensorMapEncodeTiled(map.data(), kUint32, 3,
                                                    const_cast<void *>(global), dims.data(),
                                                    strides, box.data(), elementStrides, kNone,
                                                    kNone, kL2Promote256, kNone),
                       "cuTensorMapEncodeTiled"))
      return e;
    return map;
  }
  Error copyToDevice(void *dst, const void *src, size_t bytes) override {
    ContextScope scope(ctx);
    return check(api().cuMemcpyHtoD(CUdeviceptr(dst), src, bytes), "cuMemcpyHtoD");
  }
  Error copyToHost(void *dst, const void *src, size_t bytes) override {
    ContextScope scope(ctx);
    return check(api().cuMemcpyDtoH(dst, CUdeviceptr(src), bytes), "cuMemcpyDtoH");
  }
  Error fill(void *dst, uint8_t byte, size_t bytes, void *stream) override {
    ContextScope scope(ctx);
    return check(api().cuMemsetD8Async(CUdeviceptr(dst), byte, bytes, CUstream(stream)),
                 "cuMemsetD8Async");
  }
  Error synchronize() override {
    ContextScope scope(ctx);
    return check(api().cuCtxSynchronize(), "cuCtxSynchronize");
  }
  Expected<bool> capturing(void *stream) override {
    ContextScope scope(ctx);
    if (!api().cuStreamIsCapturing)
      return false;
    int status = 0; // CU_STREAM_CAPTURE_STATUS_NONE / _ACTIVE / _INVALIDATED
    if (auto e = check(api().cuStreamIsCapturing(CUstream(stream), &status), "cuStreamIsCapturing"))
      return e;
    return status != 0;
  }
  int multiprocessorCount() const override { return multiprocessors; }

  Error launch(const CompiledKernel &k, const LaunchGeometry &geometry, void **args,
               void *stream) override {
    ContextScope scope(ctx);
    Expected<CUfunction> fn = function(k);
    if (!fn)
      return fn.takeError();
    LaunchGeometry g = geometry;
    // Persistent and stream-K grids: as many workgroups as are resident at once.
    g.grid[0] = launchedGridX(g, multiprocessors);
    if (g.programmaticDependent && api().cuLaunchKernelEx) {
      // May start while the previous kernel in the stream runs: the kernel
      // waits for it (griddepcontrol.wait) after its prologue.
      CuLaunchAttribute attr{};
      attr.id = kProgrammaticStreamSerialization;
      attr.value.value = 1;
      CuLaunchConfig cfg{{g.grid[0], g.grid[1], g.grid[2]},
                         {g.block[0], g.block[1], g.block[2]},
                         g.sharedBytes,
                         CUstream(stream),
                         &attr,
                         1};
      return check(api().cuLaunchKernelEx(&cfg, *fn, args, nullptr), "cuLaunchKernelEx", k.symbol);
    }
    return check(api().cuLaunchKernel(*fn, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
                                      g.block[2], g.sharedBytes, CUstream(stream), args, nullptr),
                 "cuLaunchKernel", k.symbol);
  }

  Expected<double> time(const std::function<Error()> &work, void *stream) override {
    ContextScope scope(ctx);
    CUevent start = nullptr, stop = nullptr;
    if (auto e = check(api().cuEventCreate(&start, 0), "cuEventCreate"))
      return e;
    if (auto e = check(api().cuEventCreate(&stop, 0), "cuEventCreate"))
      return e;
    auto cleanup = [&] {
      api().cuEventDestroy(start);
      api().cuEventDestroy(stop);
    };
    Error err = check(api().cuEventRecord(start, CUstream(stream)), "cuEventRecord");
    if (!err)
      err = work();
    if (!err)
      err = check(api().cuEventRecord(stop, CUstream(stream)), "cuEventRecord");
    if (!err)
      err = check(api().cuEventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    if (!err)
      err = check(api().cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    cleanup();
    if (err)
      return err;
    return double(ms);
  }

private:
  static const CudaApi &api() { return CudaApi::get(); }

  Expected<CUfunction> function(const CompiledKernel &k) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = functions.find(k.symbol); it != functions.end())
      return it->second;
    if (k.format == BinaryFormat::HSACO)
      return Error("kernel " + k.symbol +
                   " is an hsaco code object; an "
                   "NVIDIA device loads PTX or CUBIN");
    // PTX is JIT-compiled by the driver and must be NUL-terminated (a cubin
    // does not mind the extra byte).
    std::string image = k.binary;
    image.push_back('\0');
    CUmodule mod = nullptr;
    if (auto e = check(api().cuModuleLoadDataEx(&mod, image.data(), 0, nullptr, nullptr),
                       "cuModuleLoadDataEx", k.symbol))
      return e;
    CUfunction fn = nullptr;
    if (auto e = check(api().cuModuleGetFunction(&fn, mod, k.symbol.c_str()), "cuModuleGetFunction",
                       k.symbol))
      return e;
    if (unsigned smem = k.geometry(1).sharedBytes; smem > 48 * 1024)
      if (auto e = check(api().cuFuncSetAttribute(fn, kMaxDynamicShared, int(smem)),
                         "cuFuncSetAttribute", k.symbol))
        return e;
    functions[k.symbol] = fn;
    return fn;
  }

  CUdevice dev;
  CUcontext ctx;
  std::string devName;
  Arch devArch;
  int multiprocessors; ///< 0 if the driver did not say
  std::mutex mutex;
  std::unordered_map<std::string, CUfunction> functions;
};
} // namespace

Expected<std::unique_ptr<Device>> openCudaDevice(int ordinal) {
  const CudaApi &api = CudaApi::get();
  if (!api.error.empty())
    return Error(api.error);
  if (auto e = check(api.cuInit(0), "cuInit"))
    return e;
  int count = 0;
  if (auto e = check(api.cuDeviceGetCount(&count), "cuDeviceGetCount"))
    return e;
  if (ordinal < 0 || ordinal >= count)
    return Error("no CUDA device " + std::to_string(ordinal) + " (found " + std::to_string(count) +
                 ")");
  CUdevice dev;
  if (auto e = check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet"))
    return e;
  char name[256] = {};
  (void)api.cuDeviceGetName(name, sizeof(name), dev);
  int major = 0, minor = 0;
  (void)api.cuDeviceGetAttribute(&major, kComputeMajor, dev);
  (void)api.cuDeviceGetAttribute(&minor, kComputeMinor, dev);
  int multiprocessors = 0;
  (void)api.cuDeviceGetAttribute(&multiprocessors, kMultiprocessorCount, dev);
  if (major != 9 || minor != 0)
    return Error(std::string(name) + " is sm_" + std::to_string(major) + std::to_string(minor) +
                 "; mxfp4-jit's NVIDIA target is sm_90a (H100/H200)");
  CUcontext ctx = nullptr;
  if (auto e = check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain"))
    return e;
  // Current on this thread unless the caller has a context of its own
  // there; every call makes it current for its duration anyway.
  CUcontext current = nullptr;
  if (auto e = check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent"))
    return e;
  if (!current)
    if (auto e = check(api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"))
      return e;
  return std::make_unique<CudaDevice>(dev, ctx, name, Arch::SM90A, multiprocessors);
}

} // namespace mxfp4
