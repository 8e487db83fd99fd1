// mxtile.store_act_mx and mxtile.load_mx on gfx1250 (AmdStoreActMx.cpp,
// AmdLoadMx.cpp): the gate and up values of an intermediate column sit in
// lanes l and l ^ 8 of an MMA tile, so each accumulator register takes one
// xor-8 shuffle; lanes l % 16 < 8 stage act(g w, u w) in an f32 LDS buffer
// of its own ([BM, BN/2 + 4]); after a barrier each thread quantizes whole
// (row, block) units: eight 4-word LDS loads, one scale byte, one 16-byte
// store of codes. The scales go where scaleRep says: row-major
// (row * K/32 + kb) at 1, else seed 002's sorted-row layout (Format/
// Layout.h gfx1250MoeScaleOffset): t = row / 16R, w = row % 16R / 16,
// byte 4 (((16 t + row % 16) K/128 R) + (kb / 4) R + w) + kb % 4.
// RUN: mxfp4-opt %s --split-input-file --mxtile-to-amdgpu=chip=gfx1250 | FileCheck %s

// BM 16, rep 1: 16 x 132 staged words, 32 shuffles (1 row tile x 8
// registers x 4 column tiles), one unit pass, row-major scales.
// CHECK-LABEL: gpu.func @bm16_rep1
// CHECK-SAME:    workgroup({{.*}}, %[[STAGED:.+]] : memref<2112xf32, #gpu.address_space<workgroup>>)
// CHECK:         scf.for
// CHECK:         gpu.barrier
// CHECK-COUNT-32: gpu.shuffle  xor %{{.+}}, %c8_i32{{.*}}, %c32_i32{{.*}} : f32
// CHECK-NOT:     gpu.shuffle
// CHECK:         memref.store %{{.+}}, %[[STAGED]][%{{.+}}] : memref<2112xf32, #gpu.address_space<workgroup>>
// CHECK:         gpu.barrier
// CHECK-COUNT-8: vector.load %[[STAGED]][%{{.+}}] : memref<2112xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK:         %[[SC:.+]] = arith.select %{{.+}}, %{{.+}}, %c127_i32 : i32
// CHECK-NEXT:    %[[C32:.+]] = arith.constant 32 : index
// CHECK-NEXT:    %[[KB:.+]] = arith.divui %{{.+}}, %[[C32]] : index
// CHECK-NEXT:    arith.constant 32 : index
// CHECK-NEXT:    %[[KBS:.+]] = arith.divui %c768, %{{.+}} : index
// CHECK-NEXT:    %[[RK:.+]] = arith.muli %{{.+}}, %[[KBS]] : index
// CHECK-NEXT:    %[[AT:.+]] = arith.addi %[[RK]], %[[KB]] : index
// CHECK-NEXT:    %[[S:.+]] = arith.trunci %[[SC]] : i32 to i8
// CHECK-NEXT:    memref.store %[[S]], %arg5[%[[AT]]]
// CHECK:         vector.store %{{.+}}, %arg4[%{{.+}}] {alignment = 16 : i64} : memref<1073741824xi8, #gpu.address_space<global>>, vector<16xi8>
// CHECK-NOT:     vector.store
// CHECK:         gpu.return
func.func @bm16_rep1(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
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
  %cBm = arith.constant 16 : index
  %m0 = arith.muli %t1, %cBm : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<16x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<16x256xf32>) {
    %q, %s = mxtile.load_mx %a, %as[%m0, %k0] ld %cK rows %valid
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>
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
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw {rounding = #mxtile<rounding even>}
      : !mxtile.tile<16x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// BM 64, rep 4: 2 unit passes, the layout's arithmetic
// (tiles of 64 rows) before each scale store; load_mx reads the same.
// CHECK-LABEL: gpu.func @bm64_rep4
// CHECK-SAME:    workgroup({{.*}}, %[[STAGED:.+]] : memref<8448xf32, #gpu.address_space<workgroup>>)
// CHECK:         scf.for
// CHECK:         arith.constant 64 : index
// CHECK:         gpu.barrier
// CHECK:         gpu.shuffle  xor
// CHECK:         gpu.barrier
// CHECK-COUNT-2: vector.store %{{.+}}, %arg4[%{{.+}}] {alignment = 16 : i64}
// CHECK-NOT:     vector.store
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @bm64_rep4_scales
// CHECK:         %[[SC:.+]] = arith.select %{{.+}}, %{{.+}}, %c127_i32 : i32
// CHECK-NEXT:    arith.constant 32 : index
// CHECK-NEXT:    %[[KB:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    arith.constant 32 : index
// CHECK-NEXT:    %[[KBS:.+]] = arith.divui %c768, %{{.+}} : index
// CHECK-NEXT:    %[[C:.+]] = arith.constant 64 : index
// CHECK-NEXT:    %[[T:.+]] = arith.divui %[[ROW:.+]], %[[C]] : index
// CHECK-NEXT:    %[[C2:.+]] = arith.constant 64 : index
// CHECK-NEXT:    %[[IN:.+]] = arith.remui %[[ROW]], %[[C2]] : index
// CHECK-NEXT:    arith.constant 16 : index
// CHECK-NEXT:    %[[W:.+]] = arith.divui %[[IN]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 16 : index
// CHECK-NEXT:    %[[L:.+]] = arith.remui %[[ROW]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 16 : index
// CHECK-NEXT:    %[[T16:.+]] = arith.muli %[[T]], %{{.+}} : index
// CHECK-NEXT:    %[[SROW:.+]] = arith.addi %[[T16]], %[[L]] : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[STEPS:.+]] = arith.divui %[[KBS]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[Q:.+]] = arith.divui %[[KB]], %{{.+}} : index
// CHECK-NEXT:    %[[CR:.+]] = arith.constant 4 : index
// CHECK-NEXT:    %[[QR:.+]] = arith.muli %[[Q]], %[[CR]] : index
// CHECK-NEXT:    %[[QRW:.+]] = arith.addi %[[QR]], %[[W]] : index
// CHECK-NEXT:    %[[RS:.+]] = arith.muli %[[SROW]], %[[STEPS]] : index
// CHECK-NEXT:    %[[CR2:.+]] = arith.constant 4 : index
// CHECK-NEXT:    %[[RSR:.+]] = arith.muli %[[RS]], %[[CR2]] : index
// CHECK-NEXT:    %[[DW:.+]] = arith.addi %[[RSR]], %[[QRW]] : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[KR:.+]] = arith.remui %[[KB]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[DW4:.+]] = arith.muli %[[DW]], %{{.+}} : index
// CHECK-NEXT:    %[[AT:.+]] = arith.addi %[[DW4]], %[[KR]] : index
// CHECK-NEXT:    %[[S:.+]] = arith.trunci %[[SC]] : i32 to i8
// CHECK-NEXT:    memref.store %[[S]], %arg5[%[[AT]]]
// CHECK:         vector.store %{{.+}}, %arg4[%{{.+}}] {alignment = 16 : i64}
func.func @bm64_rep4(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
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
  %cBm = arith.constant 64 : index
  %m0 = arith.muli %t1, %cBm : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<64x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<64x256xf32>) {
    %q, %s = mxtile.load_mx %a, %as[%m0, %k0] ld %cK rows %valid {scaleRep = 4}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<64x256xf4E2M1FN>, !mxtile.tile<64x8xf8E8M0FNU>
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
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw {rounding = #mxtile<rounding even>, scaleRep = 4}
      : !mxtile.tile<64x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

func.func @bm64_rep4_scales(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
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
  %cBm = arith.constant 64 : index
  %m0 = arith.muli %t1, %cBm : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<64x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<64x256xf32>) {
    %q, %s = mxtile.load_mx %a, %as[%m0, %k0] ld %cK rows %valid {scaleRep = 4}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<64x256xf4E2M1FN>, !mxtile.tile<64x8xf8E8M0FNU>
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
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw {rounding = #mxtile<rounding even>, scaleRep = 4}
      : !mxtile.tile<64x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

// BM 128, rep 8: 4 unit passes, the layout's arithmetic
// (tiles of 128 rows) before each scale store; load_mx reads the same.
// CHECK-LABEL: gpu.func @bm128_rep8
// CHECK-SAME:    workgroup({{.*}}, %[[STAGED:.+]] : memref<16896xf32, #gpu.address_space<workgroup>>)
// CHECK:         scf.for
// CHECK:         arith.constant 128 : index
// CHECK:         gpu.barrier
// CHECK:         gpu.shuffle  xor
// CHECK:         gpu.barrier
// CHECK-COUNT-4: vector.store %{{.+}}, %arg4[%{{.+}}] {alignment = 16 : i64}
// CHECK-NOT:     vector.store
// CHECK:         gpu.return
// CHECK-LABEL: gpu.func @bm128_rep8_scales
// CHECK:         %[[SC:.+]] = arith.select %{{.+}}, %{{.+}}, %c127_i32 : i32
// CHECK-NEXT:    arith.constant 32 : index
// CHECK-NEXT:    %[[KB:.+]] = arith.divui %{{.+}}, %{{.+}} : index
// CHECK-NEXT:    arith.constant 32 : index
// CHECK-NEXT:    %[[KBS:.+]] = arith.divui %c768, %{{.+}} : index
// CHECK-NEXT:    %[[C:.+]] = arith.constant 128 : index
// CHECK-NEXT:    %[[T:.+]] = arith.divui %[[ROW:.+]], %[[C]] : index
// CHECK-NEXT:    %[[C2:.+]] = arith.constant 128 : index
// CHECK-NEXT:    %[[IN:.+]] = arith.remui %[[ROW]], %[[C2]] : index
// CHECK-NEXT:    arith.constant 16 : index
// CHECK-NEXT:    %[[W:.+]] = arith.divui %[[IN]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 16 : index
// CHECK-NEXT:    %[[L:.+]] = arith.remui %[[ROW]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 16 : index
// CHECK-NEXT:    %[[T16:.+]] = arith.muli %[[T]], %{{.+}} : index
// CHECK-NEXT:    %[[SROW:.+]] = arith.addi %[[T16]], %[[L]] : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[STEPS:.+]] = arith.divui %[[KBS]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[Q:.+]] = arith.divui %[[KB]], %{{.+}} : index
// CHECK-NEXT:    %[[CR:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %[[QR:.+]] = arith.muli %[[Q]], %[[CR]] : index
// CHECK-NEXT:    %[[QRW:.+]] = arith.addi %[[QR]], %[[W]] : index
// CHECK-NEXT:    %[[RS:.+]] = arith.muli %[[SROW]], %[[STEPS]] : index
// CHECK-NEXT:    %[[CR2:.+]] = arith.constant 8 : index
// CHECK-NEXT:    %[[RSR:.+]] = arith.muli %[[RS]], %[[CR2]] : index
// CHECK-NEXT:    %[[DW:.+]] = arith.addi %[[RSR]], %[[QRW]] : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[KR:.+]] = arith.remui %[[KB]], %{{.+}} : index
// CHECK-NEXT:    arith.constant 4 : index
// CHECK-NEXT:    %[[DW4:.+]] = arith.muli %[[DW]], %{{.+}} : index
// CHECK-NEXT:    %[[AT:.+]] = arith.addi %[[DW4]], %[[KR]] : index
// CHECK-NEXT:    %[[S:.+]] = arith.trunci %[[SC]] : i32 to i8
// CHECK-NEXT:    memref.store %[[S]], %arg5[%[[AT]]]
// CHECK:         vector.store %{{.+}}, %arg4[%{{.+}}] {alignment = 16 : i64}
func.func @bm128_rep8(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
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
  %cBm = arith.constant 128 : index
  %m0 = arith.muli %t1, %cBm : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<128x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<128x256xf32>) {
    %q, %s = mxtile.load_mx %a, %as[%m0, %k0] ld %cK rows %valid {scaleRep = 8}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x256xf4E2M1FN>, !mxtile.tile<128x8xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 512 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx1250_wmma>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<128x256xf4E2M1FN>, !mxtile.tile<128x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<128x256xf32>
    scf.yield %r : !mxtile.tile<128x256xf32>
  }
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw {rounding = #mxtile<rounding even>, scaleRep = 8}
      : !mxtile.tile<128x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

func.func @bm128_rep8_scales(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
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
  %cBm = arith.constant 128 : index
  %m0 = arith.muli %t1, %cBm : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<128x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c256 iter_args(%acc = %zero) -> (!mxtile.tile<128x256xf32>) {
    %q, %s = mxtile.load_mx %a, %as[%m0, %k0] ld %cK rows %valid {scaleRep = 8}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x256xf4E2M1FN>, !mxtile.tile<128x8xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 512 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout gfx1250_wmma>}
        : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<128x256xf4E2M1FN>, !mxtile.tile<128x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<128x256xf32>
    scf.yield %r : !mxtile.tile<128x256xf32>
  }
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw {rounding = #mxtile<rounding even>, scaleRep = 8}
      : !mxtile.tile<128x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}
