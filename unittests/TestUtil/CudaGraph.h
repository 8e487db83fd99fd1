//===- CudaGraph.h - Capturing work into a CUDA graph in tests --*- C++ -*-===//
//
// What an inference engine does with our calls: a stream of its own, the
// calls captured into a graph, the graph replayed. Through the driver API,
// loaded with dlopen as the runtime loads it (no CUDA SDK to build).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_UNITTESTS_TESTUTIL_CUDAGRAPH_H
#define MXFP4_UNITTESTS_TESTUTIL_CUDAGRAPH_H

#include "TestUtil/DeviceBuffer.h"
#include "TestUtil/Expected.h"
#include "mxfp4/Support/Error.h"

#include <dlfcn.h>
#include <memory>
#include <string>

/// Opens the device as `dev` and a CudaGraph as `graph` in a test body, or
/// skips the test where there is no CUDA device.
#define OPEN_CUDA_GRAPH_OR_SKIP(dev, graph)                                                        \
  OPEN_DEVICE_OR_SKIP(dev);                                                                        \
  if (dev.driver() != "cuda")                                                                      \
    GTEST_SKIP() << "CUDA graphs need a CUDA device";                                              \
  auto graph##Or = ::mxfp4::test::CudaGraph::create();                                             \
  ASSERT_OK(graph##Or);                                                                            \
  ::mxfp4::test::CudaGraph &graph = **graph##Or

namespace mxfp4::test {

/// A non-blocking stream that captures into a graph (global capture mode:
/// anything unsafe on any thread invalidates the capture) and replays it.
class CudaGraph {
public:
  static Expected<std::unique_ptr<CudaGraph>> create() {
    const Api &a = api();
    if (!a.ok)
      return Error("the driver lacks the stream capture and graph entry points");
    auto g = std::unique_ptr<CudaGraph>(new CudaGraph());
    if (Error e = check(a.streamCreate(&g->s, /*CU_STREAM_NON_BLOCKING=*/1), "cuStreamCreate"))
      return e;
    return g;
  }
  ~CudaGraph() {
    dropGraph();
    if (s)
      api().streamDestroy(s);
  }
  void *stream() const { return s; }

  Error begin() {
    return check(api().beginCapture(s, /*CU_STREAM_CAPTURE_MODE_GLOBAL=*/0),
                 "cuStreamBeginCapture");
  }
  /// Ends the capture and instantiates what it recorded.
  Error end() {
    // The previous graph goes after the capture: destroying one during a
    // global-mode capture is an unsafe call that invalidates it.
    Handle captured = nullptr;
    Error e = check(api().endCapture(s, &captured), "cuStreamEndCapture");
    dropGraph();
    if (e)
      return e;
    graph = captured;
    return check(api().instantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  }
  /// Captures what `work` (returning an Error) enqueues on stream(): begin,
  /// work, end; `work`'s error first, then the capture's.
  template <typename Work> Error capture(Work &&work) {
    if (Error e = begin())
      return e;
    Error failed = work();
    Error ended = end();
    if (failed)
      return failed;
    return ended;
  }
  /// Runs the graph and waits for it.
  Error replay() {
    if (Error e = check(api().launch(exec, s), "cuGraphLaunch"))
      return e;
    return check(api().streamSynchronize(s), "cuStreamSynchronize");
  }

private:
  using Handle = void *;
  struct Api {
    int (*streamCreate)(Handle *, unsigned);
    int (*streamDestroy)(Handle);
    int (*streamSynchronize)(Handle);
    int (*beginCapture)(Handle, int);
    int (*endCapture)(Handle, Handle *);
    int (*instantiate)(Handle *, Handle, unsigned long long);
    int (*launch)(Handle, Handle);
    int (*execDestroy)(Handle);
    int (*graphDestroy)(Handle);
    int (*errorName)(int, const char **);
    bool ok = false;
  };
  static const Api &api() {
    static const Api a = [] {
      Api a{};
      void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
      if (!h)
        return a;
      bool ok = true;
      auto sym = [&](auto &fn, const char *name) {
        void *p = dlsym(h, name);
        ok &= p != nullptr;
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      };
      sym(a.streamCreate, "cuStreamCreate");
      sym(a.streamDestroy, "cuStreamDestroy_v2");
      sym(a.streamSynchronize, "cuStreamSynchronize");
      sym(a.beginCapture, "cuStreamBeginCapture_v2");
      sym(a.endCapture, "cuStreamEndCapture");
      sym(a.instantiate, "cuGraphInstantiateWithFlags");
      sym(a.launch, "cuGraphLaunch");
      sym(a.execDestroy, "cuGraphExecDestroy");
      sym(a.graphDestroy, "cuGraphDestroy");
      sym(a.errorName, "cuGetErrorName");
      a.ok = ok;
      return a;
    }();
    return a;
  }
  static Error check(int r, const char *call) {
    if (r == 0)
      return Error::success();
    const char *name = "unknown error";
    api().errorName(r, &name);
    return Error(std::string(call) + " failed: " + name);
  }
  void dropGraph() {
    if (exec)
      api().execDestroy(exec);
    if (graph)
      api().graphDestroy(graph);
    exec = graph = nullptr;
  }
  CudaGraph() = default;
  Handle s = nullptr, graph = nullptr, exec = nullptr;
};

} // namespace mxfp4::test

#endif // MXFP4_UNITTESTS_TESTUTIL_CUDAGRAPH_H
