//===- main.cpp - Example 4: capture GEMMs into a CUDA graph --------------===//
//
// How an engine puts mxfp4-jit's GEMMs into its CUDA graphs (decode steps
// are captured once and replayed with new inputs in the same buffers):
//  1. JIT the kernels the captured calls need ahead (planGemmA4W4 and the
//     Jit): no compile happens during capture or replay; without a GPU the
//     example stops here;
//  2. on an NVIDIA GPU: one eager call per M on the engine's stream, so the
//     weights' per-stream scratch has grown before capture (a capture that
//     would need it to grow fails and says so);
//  3. capture a decode and a prefill call into one graph on that stream;
//  4. replay it on fresh activations written into the captured buffers,
//     and check each replay bit for bit against the same calls run eagerly.
// The graph entry points come from the driver (libcuda.so.1), as the
// library's own do: the example needs no CUDA toolkit to build.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Support/BF16.h"

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <vector>

using namespace mxfp4;

static int fail(const std::string &msg) {
  std::fprintf(stderr, "cuda-graph: %s\n", msg.c_str());
  return 1;
}

namespace {

/// The driver's stream and graph entry points (cuda.h; handles as void *).
struct Driver {
  using H = void *;
  int (*streamCreate)(H *, unsigned) = nullptr;
  int (*streamDestroy)(H) = nullptr;
  int (*streamSynchronize)(H) = nullptr;
  int (*beginCapture)(H, int) = nullptr;
  int (*endCapture)(H, H *) = nullptr;
  int (*instantiate)(H *, H, unsigned long long) = nullptr;
  int (*launch)(H, H) = nullptr;
  int (*execDestroy)(H) = nullptr;
  int (*graphDestroy)(H) = nullptr;

  bool load() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return false;
    bool ok = true;
    auto sym = [&](auto &fn, const char *name) {
      void *p = dlsym(lib, name);
      ok &= p != nullptr;
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    sym(streamCreate, "cuStreamCreate");
    sym(streamDestroy, "cuStreamDestroy_v2");
    sym(streamSynchronize, "cuStreamSynchronize");
    sym(beginCapture, "cuStreamBeginCapture_v2");
    sym(endCapture, "cuStreamEndCapture");
    sym(instantiate, "cuGraphInstantiateWithFlags");
    sym(launch, "cuGraphLaunch");
    sym(execDestroy, "cuGraphExecDestroy");
    sym(graphDestroy, "cuGraphDestroy");
    return ok;
  }
};

} // namespace

int main() {
  const int64_t n = 7168, k = 2048;
  const int64_t ms[] = {4, 384}; // a decode step and a prefill chunk
  // 1. The kernels of both calls, compiled (or found in the cache) now.
  for (int64_t m : ms) {
    auto plan = planGemmA4W4({Arch::SM90A, n, k, /*scalesBelow128=*/true, 132}, m);
    if (!plan)
      return fail(plan.takeError().message());
    for (const KernelSpec &spec : plan->kernels()) {
      auto kernel = Jit::global().get(spec);
      if (!kernel)
        return fail(kernel.takeError().message());
      std::printf("M=%-4lld %s\n", (long long)m, spec.name().c_str());
    }
  }
  auto devOr = Device::open();
  if (!devOr || (*devOr)->driver() != "cuda") {
    std::printf("no CUDA GPU: %s\n",
                devOr ? "the device is not NVIDIA's" : devOr.takeError().message().c_str());
    return 0;
  }
  Device &dev = **devOr;
  Driver cu;
  void *stream = nullptr, *graph = nullptr, *exec = nullptr;
  if (!cu.load() || cu.streamCreate(&stream, /*CU_STREAM_NON_BLOCKING=*/1) != 0)
    return fail("cannot load the driver's graph entry points or create a stream");

  std::mt19937_64 rng(2026);
  std::vector<uint8_t> wq(size_t(n * k / 2)), ws(size_t(n * k / 32));
  for (auto &b : wq)
    b = uint8_t(rng());
  for (auto &s : ws)
    s = uint8_t(116 + rng() % 11);
  auto w = prepareGemmA4W4Weight(dev, wq, ws, n, k);
  if (!w)
    return fail(w.takeError().message());
  // The buffers the graph captures (inputs rewritten before each replay),
  // and those of the eager calls it is checked against.
  struct Buffers {
    void *a, *out, *eager;
  };
  std::vector<Buffers> bufs;
  for (int64_t m : ms)
    bufs.push_back({*dev.alloc(size_t(m * k * 2)), *dev.alloc(size_t(m * n * 2)),
                    *dev.alloc(size_t(m * n * 2))});
  // 2. Warm-up on the stream: the scratch of its calls grows now.
  for (size_t i = 0; i < bufs.size(); ++i)
    if (Error e = gemmA4W4(dev, stream, bufs[i].a, ms[i], **w, bufs[i].out))
      return fail(e.message());
  cu.streamSynchronize(stream);
  // 3. Capture both calls.
  if (cu.beginCapture(stream, /*CU_STREAM_CAPTURE_MODE_GLOBAL=*/0) != 0)
    return fail("cuStreamBeginCapture failed");
  for (size_t i = 0; i < bufs.size(); ++i)
    if (Error e = gemmA4W4(dev, stream, bufs[i].a, ms[i], **w, bufs[i].out)) {
      cu.endCapture(stream, &graph);
      return fail("capture: " + e.message());
    }
  if (cu.endCapture(stream, &graph) != 0 || cu.instantiate(&exec, graph, 0) != 0)
    return fail("cannot end the capture or instantiate the graph");
  // 4. Replays on fresh inputs, each against the eager calls.
  std::normal_distribution<float> normal;
  bool same = true;
  for (int replay = 0; replay < 3; ++replay) {
    for (size_t i = 0; i < bufs.size(); ++i) {
      std::vector<uint16_t> a(size_t(ms[i] * k));
      for (auto &x : a)
        x = floatToBf16(normal(rng));
      if (Error e = dev.copyToDevice(bufs[i].a, a.data(), a.size() * 2))
        return fail(e.message());
    }
    if (cu.launch(exec, stream) != 0 || cu.streamSynchronize(stream) != 0)
      return fail("cuGraphLaunch failed");
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (Error e = gemmA4W4(dev, stream, bufs[i].a, ms[i], **w, bufs[i].eager))
        return fail(e.message());
      cu.streamSynchronize(stream);
      std::vector<uint16_t> graphOut(size_t(ms[i] * n)), eagerOut(graphOut.size());
      if (Error e = dev.copyToHost(graphOut.data(), bufs[i].out, graphOut.size() * 2))
        return fail(e.message());
      if (Error e = dev.copyToHost(eagerOut.data(), bufs[i].eager, eagerOut.size() * 2))
        return fail(e.message());
      const bool equal = std::memcmp(graphOut.data(), eagerOut.data(), graphOut.size() * 2) == 0;
      same &= equal;
      std::printf("replay %d, M=%-4lld: graph %s the eager call\n", replay, (long long)ms[i],
                  equal ? "matches" : "DIFFERS FROM");
    }
  }
  cu.execDestroy(exec);
  cu.graphDestroy(graph);
  cu.streamDestroy(stream);
  for (const Buffers &b : bufs)
    for (void *p : {b.a, b.out, b.eager})
      dev.free(p);
  std::printf("%s: %s\n", dev.name().c_str(), same ? "PASS" : "FAIL");
  return same ? 0 : 1;
}
