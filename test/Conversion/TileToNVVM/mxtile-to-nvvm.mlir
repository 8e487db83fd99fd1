// mxtile-to-nvvm at the IR level: what each schedule makes of the dense GEMM
// tile program (N 256, K 512, BM 16): TMA stages under mbarriers and their
// phases, wgmma with the weights as the register operand, the decode
// variant's weights straight to registers, folded scales, and the split-K
// reduction through the workspace and per-tile counters.
// RUN: mxfp4-opt %s --split-input-file --mxtile-to-nvvm -o %t
// RUN: FileCheck %s < %t
// RUN: FileCheck %s --check-prefix=COUNT < %t
// RUN: grep -m1 -B15 'mbarrier.try_wait.parity' %t | FileCheck %s --check-prefix=PHASE

// One warpgroup; four stages (the tile's default), each an mbarrier armed
// with the bytes of its weight and scale boxes (128 x 64 + 128 x 4 bytes),
// filled by 3-D bulk tensor copies; the consumer waits on stage s = step %
// 4 with parity (step / 4) % 2. Two m64n16k16 wgmmas per k16 step of each
// 128-K chunk, fenced, committed and waited on in groups.
// CHECK-LABEL: gpu.module @mxfp4_kernels [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">]
// CHECK: gpu.func @plain({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c8704_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg3, %{{.*}}, box[
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned
// PHASE: %[[STAGE:.*]] = arith.remui %[[STEP:.*]], %c4{{.*}} : index
// PHASE: %[[ROUND:.*]] = arith.divui %[[STEP]], %c4{{.*}} : index
// PHASE-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// PHASE-NEXT: %[[PARITY:.*]] = arith.remui %[[ROUND]], %[[TWO]] : index
// PHASE-NEXT: %[[P32:.*]] = arith.index_castui %[[PARITY]] : index to i32
// PHASE: %[[AT:.*]] = arith.muli %[[STAGE]], %c8{{.*}} : index
// PHASE: nvvm.mbarrier.try_wait.parity %{{.*}}, %[[P32]]
// COUNT-LABEL: gpu.func @plain
// COUNT-COUNT-16: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// COUNT-NOT: wgmma.mma_async
// COUNT: gpu.return
func.func @plain(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128>} {
  %mi = arith.index_cast %m : i32 to index
  %t0 = mxtile.tile_id 0
  %c128 = arith.constant 128 : index
  %n0 = arith.muli %t0, %c128 : index
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %mi, %m0 : index
  %cK = arith.constant 512 : index
  %cN = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %acc0 = mxtile.zero : !mxtile.tile<16x128xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0) -> (!mxtile.tile<16x128xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout sm90_mma16>}
        : memref<?xi8> -> !mxtile.tile<128x4xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc1
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<128x128xf4E2M1FN>, !mxtile.tile<128x4xf8E8M0FNU> -> !mxtile.tile<16x128xf32>
    scf.yield %r : !mxtile.tile<16x128xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x128xf32> -> memref<?xbf16>
  return
}
// -----

// Two stages: two mbarriers.
// CHECK-LABEL: gpu.func @stages2
// CHECK-COUNT-2: nvvm.mbarrier.init
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
func.func @stages2(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, stages = 2>} {
  %mi = arith.index_cast %m : i32 to index
  %t0 = mxtile.tile_id 0
  %c128 = arith.constant 128 : index
  %n0 = arith.muli %t0, %c128 : index
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %mi, %m0 : index
  %cK = arith.constant 512 : index
  %cN = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %acc0 = mxtile.zero : !mxtile.tile<16x128xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0) -> (!mxtile.tile<16x128xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout sm90_mma16>}
        : memref<?xi8> -> !mxtile.tile<128x4xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc1
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<128x128xf4E2M1FN>, !mxtile.tile<128x4xf8E8M0FNU> -> !mxtile.tile<16x128xf32>
    scf.yield %r : !mxtile.tile<16x128xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x128xf32> -> memref<?xbf16>
  return
}
// -----

// The decode variant: no TMA and no mbarriers (the weights go from global
// memory to registers steps ahead), a register cap of 128.
// CHECK-LABEL: gpu.func @decode({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, nvvm.maxnreg = 128 : i32}
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK-NOT: nvvm.mbarrier
// CHECK: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16
// CHECK: gpu.return
func.func @decode(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, decode = true>} {
  %mi = arith.index_cast %m : i32 to index
  %t0 = mxtile.tile_id 0
  %c128 = arith.constant 128 : index
  %n0 = arith.muli %t0, %c128 : index
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %mi, %m0 : index
  %cK = arith.constant 512 : index
  %cN = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %acc0 = mxtile.zero : !mxtile.tile<16x128xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0) -> (!mxtile.tile<16x128xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout sm90_mma16>}
        : memref<?xi8> -> !mxtile.tile<128x4xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc1
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<128x128xf4E2M1FN>, !mxtile.tile<128x4xf8E8M0FNU> -> !mxtile.tile<16x128xf32>
    scf.yield %r : !mxtile.tile<16x128xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x128xf32> -> memref<?xbf16>
  return
}
// -----

// Folded scales: one multiply per dequantized pair instead of two.
// COUNT-LABEL: gpu.func @folded
// COUNT-COUNT-80: arith.mulf
// COUNT-NOT: arith.mulf
// COUNT: gpu.return
func.func @folded(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, folded_scales = true>} {
  %mi = arith.index_cast %m : i32 to index
  %t0 = mxtile.tile_id 0
  %c128 = arith.constant 128 : index
  %n0 = arith.muli %t0, %c128 : index
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %mi, %m0 : index
  %cK = arith.constant 512 : index
  %cN = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %acc0 = mxtile.zero : !mxtile.tile<16x128xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0) -> (!mxtile.tile<16x128xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout sm90_mma16>}
        : memref<?xi8> -> !mxtile.tile<128x4xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc1
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<128x128xf4E2M1FN>, !mxtile.tile<128x4xf8E8M0FNU> -> !mxtile.tile<16x128xf32>
    scf.yield %r : !mxtile.tile<16x128xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x128xf32> -> memref<?xbf16>
  return
}
// -----

// Split-K 4 through the workspace: splits 0..2 store their partial tile
// (f32, 16 bytes a thread), then one thread releases it (device fence) and
// counts itself in; the last split waits for the count of 3, acquires,
// resets the counter to zero and sums the slices in split order.
// CHECK-LABEL: gpu.func @splitk
// CHECK: gpu.block_id  z
// CHECK: arith.cmpi eq, %{{.*}}, %c3_i64 : i64
// CHECK: scf.while
// CHECK: memref.atomic_rmw addi %c0_i32, %arg7
// CHECK: arith.cmpi ult, %{{.*}}, %c3_i32 : i32
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: memref.atomic_rmw addi %c-3_i32, %arg7
// CHECK: } else {
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: gpu.barrier
// CHECK: llvm.fence syncscope("device") acq_rel
// CHECK: memref.atomic_rmw addi %c1_i32, %arg7
func.func @splitk(%arg0: memref<?xbf16>, %arg1: memref<?xi8>, %arg2: memref<?xi8>, %arg3: memref<?xi8>, %arg4: memref<?xbf16>, %arg5: i32, %arg6: memref<?xf32>, %arg7: memref<?xi32>) attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 8, bn = 128, bk = 128, split_k = 4>} {
  %0 = arith.index_cast %arg5 : i32 to index
  %1 = mxtile.tile_id 0
  %c128 = arith.constant 128 : index
  %2 = arith.muli %1, %c128 : index
  %3 = mxtile.tile_id 1
  %c8 = arith.constant 8 : index
  %4 = arith.muli %3, %c8 : index
  %5 = arith.subi %0, %4 : index
  %c2048 = arith.constant 2048 : index
  %c256 = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %6 = mxtile.tile_id 2
  %c16 = arith.constant 16 : index
  %7 = arith.muli %6, %c16 : index
  %c4 = arith.constant 4 : index
  %8 = arith.divui %7, %c4 : index
  %c128_0 = arith.constant 128 : index
  %9 = arith.muli %8, %c128_0 : index
  %c1 = arith.constant 1 : index
  %10 = arith.addi %6, %c1 : index
  %c16_1 = arith.constant 16 : index
  %11 = arith.muli %10, %c16_1 : index
  %c4_2 = arith.constant 4 : index
  %12 = arith.divui %11, %c4_2 : index
  %c128_3 = arith.constant 128 : index
  %13 = arith.muli %12, %c128_3 : index
  %14 = mxtile.zero : <8x128xf32>
  %c128_4 = arith.constant 128 : index
  %15 = scf.for %arg8 = %9 to %13 step %c128_4 iter_args(%arg9 = %14) -> (!mxtile.tile<8x128xf32>) {
    %16 = mxtile.load %arg0[%4, %arg8] ld %c2048 rows %5 : memref<?xbf16> -> <8x128xbf16>
    %data, %scales = mxtile.quantize %16 {rounding = #mxtile<rounding roundup>} : <8x128xbf16> -> <8x128xf4E2M1FN>, <8x4xf8E8M0FNU>
    %17 = mxtile.load_weight %arg1[%2, %arg8] via %arg3 {k = 2048 : i64, layout = #mxtile<weight_layout sm90_mma16>} : memref<?xi8>, memref<?xi8> -> <128x128xf4E2M1FN>
    %c32 = arith.constant 32 : index
    %18 = arith.divui %arg8, %c32 : index
    %19 = mxtile.load_scales %arg2[%2, %18] {k = 2048 : i64, layout = #mxtile<scale_layout sm90_mma16>} : memref<?xi8> -> <128x4xf8E8M0FNU>
    %20 = mxtile.scaled_mma %data, %scales, %17, %19, %arg9 : <8x128xf4E2M1FN>, <8x4xf8E8M0FNU>, <128x128xf4E2M1FN>, <128x4xf8E8M0FNU> -> <8x128xf32>
    scf.yield %20 : !mxtile.tile<8x128xf32>
  }
  mxtile.store %15, %arg4[%4, %2] ld %c256 rows %5 reduce(%arg6, %arg7 : memref<?xf32>, memref<?xi32>) {splits = 4 : i64} : <8x128xf32> -> memref<?xbf16>
  return
}
