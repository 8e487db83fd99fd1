//===- Sm90Geometry.h - What an sm_90a kernel occupies -----------*- C++ -*-===//
//
// The K steps, threads and shared memory of an sm_90a GEMM workgroup, and
// stream-K's iterations and workspace, from its spec. Specs know nothing of
// the sm_90a pipeline (KernelSpec.h); this header joins the two.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_SM90GEOMETRY_H
#define MXFP4_KERNELS_SM90GEOMETRY_H

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Kernels/Sm90Pipeline.h"

namespace mxfp4 {

/// Stream-K (Schedule::streamK): the (output tile, K step) iterations of
/// M rows, which its workgroups divide evenly, and the bytes of the f32
/// workspace of `workgroups` of them (two partial tiles each).
int64_t streamKIterations(const KernelSpec &spec, int64_t m);
int64_t streamKWorkspaceBytes(const KernelSpec &spec, int64_t workgroups);

/// The K steps of one workgroup of an sm_90a GEMM (one split's).
int64_t sm90StepsPerWorkgroup(const KernelSpec &spec);
/// The threads of one workgroup of an sm_90a GEMM.
int64_t sm90WorkgroupThreads(const KernelSpec &spec);
/// The shared memory of an sm_90a GEMM workgroup (Kernels/Sm90Pipeline.h).
sm90::SharedLayout sm90SharedLayout(const KernelSpec &spec);

} // namespace mxfp4

#endif // MXFP4_KERNELS_SM90GEOMETRY_H
