// mxtile-to-amdgpu on gfx1250 (wave32, 128 threads): quantization with the
// gfx1250-only rocdl.cvt.scalef32.pk8.fp4.bf16 (amdgpu.packed_scaled_trunc
// has no gfx1250 lowering), scaled_wmma 16x16x128 with the four K-block
// scales of a row per lane, weight scales in the gfx1250_wmma layout.
// RUN: mxfp4-opt %s --split-input-file --mxtile-to-amdgpu=chip=gfx1250 | FileCheck %s

// BM 16, BK 256: one 32-block per thread (no shuffle), 4 pk8 converts.
// CHECK:       gpu.module @mxfp4_kernels [#rocdl.target<O = 3, chip = "gfx1250">]
// CHECK-LABEL: gpu.func @k
// CHECK-SAME:    kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK:       scf.for
// CHECK:         vector.load %{{.+}}, vector<32xbf16>
// CHECK-NOT:     gpu.shuffle
// CHECK-COUNT-4: rocdl.cvt.scalef32.pk8.fp4.bf16 %{{.+}}, %{{.+}} : i32
// CHECK-NOT:     rocdl.cvt.scalef32.pk8.fp4.bf16
// CHECK:         gpu.barrier
// CHECK:         vector.load %{{.+}} : memref<{{[0-9]+}}xi8, #gpu.address_space<workgroup>>, vector<32xi8>
// CHECK:         vector.shuffle
// CHECK-COUNT-8: amdgpu.scaled_wmma 16x16x128
// CHECK-NOT:     amdgpu.scaled_wmma
// CHECK-COUNT-32: memref.store %{{.+}} : memref<1073741824xbf16, #gpu.address_space<global>>
// CHECK-NOT:   amdgpu.packed_scaled_trunc
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
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx1250_wmma>}
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

// BM 64: 32 WMMAs per K step.
// CHECK-LABEL: gpu.func @k
// CHECK-COUNT-16: rocdl.cvt.scalef32.pk8.fp4.bf16
// CHECK-COUNT-32: amdgpu.scaled_wmma 16x16x128
// CHECK-NOT:     amdgpu.scaled_wmma
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
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx1250_wmma>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<64x256xf4E2M1FN>, !mxtile.tile<64x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<64x256xf32>
    scf.yield %r : !mxtile.tile<64x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<64x256xf32> -> memref<?xbf16>
  return
}
