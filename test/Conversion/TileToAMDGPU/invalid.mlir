// What the AMD lowering refuses, with a diagnostic instead of bad code or an
// LLVM abort (raw ROCDL intrinsics on the wrong chip kill the process).
// RUN: mxfp4-opt %s --split-input-file --mxtile-to-amdgpu=chip=gfx950 --verify-diagnostics
// RUN: not mxfp4-opt %s --split-input-file --mxtile-to-amdgpu=chip=gfx942 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not mxfp4-opt %s --split-input-file --mxtile-to-amdgpu=chip=gfx1250 2>&1 | FileCheck %s --check-prefix=GFX1250

// CHIP: mxtile-to-amdgpu: unsupported chip 'gfx942'; expected gfx950 or gfx1250
// GFX1250: on gfx1250 weight scales must use the gfx1250_wmma layout

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
    // expected-error @+1 {{on gfx950 weight scales must use the gfx950_mfma16 layout}}
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>,
          !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
    scf.yield %r : !mxtile.tile<16x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x256xf32> -> memref<?xbf16>
  return
}

// -----

func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %c: memref<?xbf16>, %mi: i32)
    attributes {mxtile.kernel} {
  %m = arith.index_cast %mi : i32 to index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %cK = arith.constant 1024 : index
  %c512 = arith.constant 512 : index
  %cN = arith.constant 256 : index
  %n0 = mxtile.tile_id 0
  %t1 = mxtile.tile_id 1
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %t1, %c16 : index
  %valid = arith.subi %m, %m0 : index
  %zero = mxtile.zero : !mxtile.tile<16x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c512 iter_args(%acc = %zero) -> (!mxtile.tile<16x256xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x512xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x512xbf16> -> !mxtile.tile<16x512xf4E2M1FN>, !mxtile.tile<16x16xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 1024 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x512xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 1024 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
        : memref<?xi8> -> !mxtile.tile<256x16xf8E8M0FNU>
    // expected-error @+1 {{on gfx950 the K tile must be 128 or 256, got 512}}
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
        : !mxtile.tile<16x512xf4E2M1FN>, !mxtile.tile<16x16xf8E8M0FNU>,
          !mxtile.tile<256x512xf4E2M1FN>, !mxtile.tile<256x16xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
    scf.yield %r : !mxtile.tile<16x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x256xf32> -> memref<?xbf16>
  return
}

// -----

func.func @bn(%q: !mxtile.tile<16x128xf4E2M1FN>, %s: !mxtile.tile<16x4xf8E8M0FNU>,
              %w: !mxtile.tile<128x128xf4E2M1FN>, %ws: !mxtile.tile<128x4xf8E8M0FNU>,
              %acc: !mxtile.tile<16x128xf32>) attributes {mxtile.kernel} {
  // expected-error @+1 {{on gfx950 the N tile must be 256 (4 waves x 64 columns), got 128}}
  %r = mxtile.scaled_mma %q, %s, %w, %ws, %acc
      : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
        !mxtile.tile<128x128xf4E2M1FN>, !mxtile.tile<128x4xf8E8M0FNU> -> !mxtile.tile<16x128xf32>
  return
}

// -----

// expected-error @+1 {{kernel 'nomma' has no mxtile.scaled_mma to fix its tile shape}}
func.func @nomma() attributes {mxtile.kernel} {
  return
}

// -----

func.func @outside_loop(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %i: index)
    attributes {mxtile.kernel} {
  %acc = mxtile.zero : !mxtile.tile<16x256xf32>
  %x = mxtile.load %a[%i, %i] ld %i rows %i : memref<?xbf16> -> !mxtile.tile<16x256xbf16>
  // expected-error @+1 {{must sit inside the K loop (scf.for) on gfx950}}
  %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
      : !mxtile.tile<16x256xbf16> -> !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>
  %wt = mxtile.load_weight %w[%i, %i] {k = 256 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
      : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
  %wst = mxtile.load_scales %ws[%i, %i] {k = 256 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
      : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
  %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
      : !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>,
        !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
  return
}

// -----

// The fused epilogue takes no split-K sum on AMD (no moe_gemm there splits K).
func.func @split_act_mx(%a: memref<?xi8>, %as: memref<?xi8>, %w: memref<?xi8>, %ws: memref<?xi8>,
              %codes: memref<?xi8>, %scales: memref<?xi8>, %rw: memref<?xf32>, %p0: f32, %p1: f32,
              %dw: i32, %mi: i32, %colsi: i32, %wsp: memref<?xf32>, %cnt: memref<?xi32>) attributes {mxtile.kernel} {
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
  // expected-error @+1 {{split-K reductions are not lowered for AMD yet}}
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %cLd cols %cols rows %valid
      params(%p0, %p1) weights %rw if %dw reduce(%wsp, %cnt : memref<?xf32>, memref<?xi32>)
      {rounding = #mxtile<rounding even>, splits = 2}
      : !mxtile.tile<32x256xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}
