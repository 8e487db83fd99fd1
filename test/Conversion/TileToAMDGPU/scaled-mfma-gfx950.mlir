// mxtile-to-amdgpu on gfx950 (wave64, 256 threads): inline quantization with
// packed_scaled_trunc into LDS, B fragments straight from global memory,
// scaled_mfma 16x16x128 with opsel-selected scale bytes. The counts are what
// the tile implies: BM/16 x 4 MFMAs per wave per 128-K step.
// RUN: mxfp4-opt %s --split-input-file --mxtile-to-amdgpu=chip=gfx950 | FileCheck %s

// BM 16, BK 256: one quantization pass of 16 bf16 per thread (two lanes per
// 32-block, one xor shuffle), 8 converts, 2 x 4 MFMAs.
// CHECK:       module attributes {gpu.container_module}
// CHECK:       gpu.module @mxfp4_kernels [#rocdl.target<O = 3, chip = "gfx950">]
// CHECK-LABEL: gpu.func @k(%{{.+}}: memref<1073741824xbf16, #gpu.address_space<global>>,
// CHECK-SAME:    workgroup(%[[LA:.+]] : memref<4096xi8, #gpu.address_space<workgroup>>, %[[LS:.+]] : memref<512xi8, #gpu.address_space<workgroup>>)
// CHECK-SAME:    kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK:       rocdl.readfirstlane
// CHECK:       scf.for
// CHECK:         vector.load %{{.+}} : memref<1073741824xbf16, #gpu.address_space<global>>, vector<16xbf16>
// CHECK:         vector.reduction <maxui>
// CHECK-COUNT-1: gpu.shuffle  xor
// CHECK-NOT:     gpu.shuffle
// CHECK-COUNT-8: amdgpu.packed_scaled_trunc
// CHECK-NOT:     amdgpu.packed_scaled_trunc
// CHECK:         vector.store %{{.+}}, %[[LA]]
// CHECK:         memref.store %{{.+}}, %[[LS]]
// CHECK:         gpu.barrier
// CHECK-COUNT-8: amdgpu.scaled_mfma 16x16x128
// CHECK-NOT:     amdgpu.scaled_mfma
// CHECK:         scf.yield
// CHECK-COUNT-16: memref.store %{{.+}} : memref<1073741824xbf16, #gpu.address_space<global>>
// CHECK-NOT:   mxtile.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %c: memref<?xbf16>, %mi: i32)
    attributes {mxtile.kernel} {
  %m = arith.index_cast %mi : i32 to index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %cK = arith.constant 512 : index
  %c256 = arith.constant 256 : index
  %cN = arith.constant 256 : index
  %n0 = mxtile.tile_id 0
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<16x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<16x256xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x256xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x256xbf16> -> !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 512 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
    scf.yield %r : !mxtile.tile<16x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x256xf32> -> memref<?xbf16>
  return
}

// -----

// BK 128 (K = 384): each scale dword covers two K steps, so the odd step's
// bytes are shifted down and opsel stays 0/1.
// CHECK-LABEL: gpu.func @k
// CHECK:       scf.for
// CHECK-COUNT-4: amdgpu.packed_scaled_trunc
// CHECK-NOT:     amdgpu.packed_scaled_trunc
// CHECK:         gpu.barrier
// CHECK:         arith.shrui
// CHECK:         amdgpu.scaled_mfma 16x16x128 (%{{.+}}[0] * %{{.+}}) * (%{{.+}}[0] * %{{.+}})
// CHECK:         amdgpu.scaled_mfma 16x16x128 (%{{.+}}[0] * %{{.+}}) * (%{{.+}}[1] * %{{.+}})
// CHECK-COUNT-2: amdgpu.scaled_mfma 16x16x128
// CHECK-NOT:     amdgpu.scaled_mfma
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %c: memref<?xbf16>, %mi: i32)
    attributes {mxtile.kernel} {
  %m = arith.index_cast %mi : i32 to index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %cK = arith.constant 384 : index
  %c128 = arith.constant 128 : index
  %cN = arith.constant 256 : index
  %n0 = mxtile.tile_id 0
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<16x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc = %zero) -> (!mxtile.tile<16x256xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 384 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 384 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x4xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<256x128xf4E2M1FN>, !mxtile.tile<256x4xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
    scf.yield %r : !mxtile.tile<16x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x256xf32> -> memref<?xbf16>
  return
}

// -----

// BM 64: 4 row tiles x 4 column tiles x 2 K steps; A scales span two
// 32-row groups of LDS.
// CHECK-LABEL: gpu.func @k
// CHECK-SAME:    workgroup(%{{.+}} : memref<16384xi8, #gpu.address_space<workgroup>>, %{{.+}} : memref<1024xi8, #gpu.address_space<workgroup>>)
// CHECK-COUNT-32: amdgpu.packed_scaled_trunc
// CHECK:         gpu.barrier
// CHECK-COUNT-32: amdgpu.scaled_mfma 16x16x128
// CHECK-NOT:     amdgpu.scaled_mfma
// CHECK-COUNT-64: memref.store %{{.+}} : memref<1073741824xbf16, #gpu.address_space<global>>
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %c: memref<?xbf16>, %mi: i32)
    attributes {mxtile.kernel} {
  %m = arith.index_cast %mi : i32 to index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %cK = arith.constant 512 : index
  %c256 = arith.constant 256 : index
  %cN = arith.constant 256 : index
  %n0 = mxtile.tile_id 0
  %t1 = mxtile.tile_id 1
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %t1, %c64 : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<64x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<64x256xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<64x256xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<64x256xbf16> -> !mxtile.tile<64x256xf4E2M1FN>, !mxtile.tile<64x8xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 512 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<64x256xf4E2M1FN>, !mxtile.tile<64x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<64x256xf32>
    scf.yield %r : !mxtile.tile<64x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<64x256xf32> -> memref<?xbf16>
  return
}

// -----

// MoE stage 1's fused epilogue (AmdStoreActMx.cpp) at BM 32: 2 row tiles
// x 4 registers x 4 column tiles of accumulators, one xor-8 shuffle each
// (wave64), the activations staged in a [32, 132] f32 LDS buffer, then
// 128 (row, block) units in one pass of 256 threads; row-major scales.
// CHECK-LABEL: gpu.func @bm32
// CHECK-SAME:    workgroup({{.*}}, %[[STAGED:.+]] : memref<4224xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-32: gpu.shuffle  xor %{{.+}}, %c8_i32{{.*}}, %c64_i32{{.*}} : f32
// CHECK-NOT:     gpu.shuffle
// CHECK:         gpu.barrier
// CHECK-COUNT-8: vector.load %[[STAGED]]
// CHECK:         memref.store %{{.+}}, %arg5[%{{.+}}]
// CHECK:         vector.store %{{.+}}, %arg4[%{{.+}}] {alignment = 16 : i64}
// CHECK-NOT:     vector.store
// CHECK:         gpu.return
func.func @bm32(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
              %codes: memref<?xi8>, %scales: memref<?xi8>, %rw: memref<?xf32>, %p0: f32, %p1: f32,
              %dw: i32, %mi: i32, %colsi: i32) attributes {mxtile.kernel} {
  %m = arith.index_cast %mi : i32 to index
  %cols = arith.index_cast %colsi : i32 to index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %cK = arith.constant 512 : index
  %c256 = arith.constant 256 : index
  %cLd = arith.constant 768 : index
  %n0i = mxtile.tile_id 0
  %n0 = arith.muli %n0i, %c256 : index
  %t1 = mxtile.tile_id 1
  %cBm = arith.constant 32 : index
  %m0 = arith.muli %t1, %cBm : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<32x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<32x256xf32>) {
    %q, %s = mxtile.load_mx %a, %as[%m0, %k0] ld %cK rows %valid
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<32x256xf4E2M1FN>, !mxtile.tile<32x8xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 512 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<32x256xf4E2M1FN>, !mxtile.tile<32x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<32x256xf32>
    scf.yield %r : !mxtile.tile<32x256xf32>
  }
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw {rounding = #mxtile<rounding even>}
      : !mxtile.tile<32x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}
