//===- CompiledKernel.h - A code object and how to launch it ----*- C++ -*-===//
//
// What the JIT hands out and the disk cache stores: the code object bytes,
// the kernel symbol, and the launch geometry its spec implies. No MLIR here,
// so runtime-only code can use it.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_JIT_COMPILEDKERNEL_H
#define MXFP4_JIT_COMPILEDKERNEL_H

#include "mxfp4/Kernels/KernelSpec.h"

#include <string>
#include <vector>

namespace mxfp4 {

/// HSACO: AMD code object. PTX: NVIDIA, JIT-compiled by the driver at load.
/// CUBIN: NVIDIA machine code, when ptxas was available at compile time.
enum class BinaryFormat : uint8_t { HSACO, PTX, CUBIN };
std::string_view toString(BinaryFormat f);

/// Wall time of one compile stage.
struct StageTiming {
  std::string stage;
  double ms = 0;
};

/// Grid and block of one launch.
struct LaunchGeometry {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned sharedBytes = 0; ///< dynamic shared memory
  /// The kernel waits for the previous kernel in the stream itself
  /// (griddepcontrol.wait before it reads that kernel's output), so it may
  /// be launched before that kernel finishes (CUDA programmatic dependent
  /// launch; runtimes without it launch as usual).
  bool programmaticDependent = false;
  /// A persistent kernel loops over grid[0] tiles (stream-K over grid[0]
  /// iterations): the launch shrinks grid[0] to this many workgroups per
  /// multiprocessor (0: neither; launchedGridX).
  unsigned persistentPerSm = 0;
};

/// grid[0] as launched on a device of `multiprocessors` SMs (0: unknown):
/// persistent and stream-K grids shrink to the workgroups resident at once.
unsigned launchedGridX(const LaunchGeometry &g, int multiprocessors);

struct CompiledKernel {
  KernelSpec spec;
  std::string symbol; ///< the kernel function in `binary` (= spec.name())
  BinaryFormat format = BinaryFormat::HSACO;
  std::string binary;
  std::vector<StageTiming> timings; ///< empty when it came from the disk cache

  double compileMs() const;
  /// Launch geometry for `m` rows of activations.
  LaunchGeometry geometry(int64_t m) const;
};

/// The binary format the compiler emits first for a target (PTX for sm_90a,
/// possibly compiled on to CUBIN).
BinaryFormat binaryFormatFor(Arch arch);

} // namespace mxfp4

#endif // MXFP4_JIT_COMPILEDKERNEL_H
