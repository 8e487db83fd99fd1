// mxfp4-rocdl-device-atomics: f32 adds to global memory become relaxed
// agent-scope adds marked for device memory (the backend's hardware add,
// not a compare-and-swap loop); other atomics are left as they are.
// RUN: mxfp4-opt %s --pass-pipeline='builtin.module(gpu.module(mxfp4-rocdl-device-atomics))' | FileCheck %s

// CHECK-LABEL: llvm.func @adds
// CHECK:       llvm.atomicrmw fadd %arg0, %arg1 syncscope("agent") monotonic
// CHECK-SAME:    rocdl.ignore_denormal_mode, rocdl.no_fine_grained_memory, rocdl.no_remote_memory
// CHECK:       llvm.atomicrmw fadd %arg2, %arg1 acq_rel : !llvm.ptr<3>, f32
// CHECK:       llvm.atomicrmw add %arg0, %arg3 acq_rel : !llvm.ptr<1>, i32
// CHECK:       llvm.atomicrmw fadd %arg0, %arg4 acq_rel : !llvm.ptr<1>, f64
gpu.module @kernels {
  llvm.func @adds(%global: !llvm.ptr<1>, %v: f32, %lds: !llvm.ptr<3>, %i: i32, %d: f64) {
    %0 = llvm.atomicrmw fadd %global, %v acq_rel : !llvm.ptr<1>, f32
    %1 = llvm.atomicrmw fadd %lds, %v acq_rel : !llvm.ptr<3>, f32
    %2 = llvm.atomicrmw add %global, %i acq_rel : !llvm.ptr<1>, i32
    %3 = llvm.atomicrmw fadd %global, %d acq_rel : !llvm.ptr<1>, f64
    llvm.return
  }
}
