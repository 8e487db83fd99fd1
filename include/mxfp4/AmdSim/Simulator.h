//===- Simulator.h - Run AMD kernels on the CPU -----------------*- C++ -*-===//
//
// Executes the LLVM IR that the AMD pipeline emits for a kernel (after
// mxtile -> ROCDL -> LLVM IR, before instruction selection) on the host,
// with the semantics of the GPU: a grid of workgroups, waves of 64 (gfx950)
// or 32 (gfx1250) lanes in lockstep, LDS per workgroup, s_barrier, and the
// AMDGPU intrinsics the kernels call. The wave-level instructions (scaled
// MFMA and WMMA, the FP4 conversions, cross-lane reads) are written from
// the ISA documents (WaveOps.h), not from the lowering's lane layouts, so a
// kernel that runs here checks those layouts independently.
//
// What it models and what it does not: docs/AmdSimulator.md.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_AMDSIM_SIMULATOR_H
#define MXFP4_AMDSIM_SIMULATOR_H

#include "mxfp4/JIT/CompiledKernel.h"
#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace llvm {
class Function;
class LLVMContext;
class Module;
} // namespace llvm

namespace mxfp4::amdsim {

/// Host buffers the kernels see as global memory. Every load and store is
/// checked to lie inside one of them.
class GlobalMemory {
public:
  void add(const void *base, size_t bytes);
  void remove(const void *base);
  /// Whether [address, address + bytes) lies inside one buffer.
  bool contains(uint64_t address, uint64_t bytes) const;

private:
  mutable std::mutex mutex;
  std::map<uint64_t, uint64_t> regions; ///< base -> bytes
};

/// What a launch executed.
struct RunStats {
  uint64_t workgroups = 0;
  uint64_t laneInstructions = 0; ///< IR instructions, summed over lanes
  uint64_t waveOps = 0;          ///< MFMA, WMMA and cross-lane operations
  uint64_t barriers = 0;
};

class Program;

/// One kernel of an LLVM IR module, decoded for execution.
class Kernel {
public:
  /// Parses `llvmIR` (textual LLVM IR of an amdgcn module) and decodes its
  /// kernel `symbol` for waves of `waveSize` lanes.
  static Expected<std::unique_ptr<Kernel>> fromIR(const std::string &llvmIR,
                                                  const std::string &symbol, unsigned waveSize);
  /// Builds the kernel of `spec` (gfx950 or gfx1250) with the JIT's own
  /// pipeline up to LLVM IR and decodes it.
  static Expected<std::unique_ptr<Kernel>> fromSpec(const KernelSpec &spec);
  ~Kernel();

  /// Runs the grid of `geometry`; `args` as for Device::launch (an array of
  /// pointers to each argument). Pointer arguments must lie in `memory`.
  /// Workgroups run one at a time, in id order (x fastest), or with
  /// `orderSeed` != 0 in a random order drawn from it: a GPU promises no
  /// order, so kernels whose workgroups cooperate must not depend on one.
  Expected<RunStats> run(const LaunchGeometry &geometry, void **args, const GlobalMemory &memory,
                         uint64_t orderSeed = 0) const;

  unsigned waveSize() const;
  /// Bytes of LDS one workgroup uses (static allocations).
  uint64_t ldsBytes() const;

private:
  Kernel();
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<Program> program;
};

} // namespace mxfp4::amdsim

#endif // MXFP4_AMDSIM_SIMULATOR_H
