// mxtile-to-nvvm diagnostics: a kernel whose schedule is not legal for
// its problem on sm_90a (verifyKernelSpec, the one place that decides),
// whose IR disagrees with its schedule, or that the K-loop lowering does
// not take (buffer roles, argument types, what sits inside and outside
// the K loop). Each case is the dense GEMM tile program (N 256, K 512) with
// one thing changed.
// RUN: mxfp4-opt %s --split-input-file --mxtile-to-nvvm --verify-diagnostics

// Every kernel carries its schedule.
// expected-error @+1 {{kernel 'k' has no schedule ('mxtile.schedule' = #mxtile.schedule<...>)}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel} {
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

// The schedule must describe the tiles the program multiplies.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 8, bn = 128, bk = 128>} {
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
    // expected-error @+1 {{multiplies 16x128 by 128x128 tiles; the schedule says BM 8, BN 128, BK 128}}
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc1
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<128x128xf4E2M1FN>, !mxtile.tile<128x4xf8E8M0FNU> -> !mxtile.tile<16x128xf32>
    scf.yield %r : !mxtile.tile<16x128xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x128xf32> -> memref<?xbf16>
  return
}

// -----

// The N of a GEMM is a constant of its store.
// expected-error @+1 {{on sm_90a a GEMM stores one mxtile.store (or mxtile.store_act_mx or mxtile.store_scatter_add) into a matrix of a constant N (its ld)}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
  %cN = arith.index_cast %m : i32 to index
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

// BN 256 is a gfx950 tile.
// expected-error @+1 {{gemm_a4w4 on sm_90a: BN must be 128 or 64}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 256, bk = 128>} {
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
  %acc0 = mxtile.zero : !mxtile.tile<16x256xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0) -> (!mxtile.tile<16x256xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<256x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 512 : i64, layout = #mxtile<scale_layout sm90_mma16>}
        : memref<?xi8> -> !mxtile.tile<256x4xf8E8M0FNU>
    %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc1
        : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
          !mxtile.tile<256x128xf4E2M1FN>, !mxtile.tile<256x4xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
    scf.yield %r : !mxtile.tile<16x256xf32>
  }
  mxtile.store %acc, %c[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x256xf32> -> memref<?xbf16>
  return
}

// -----

// Every split takes at least two K steps.
// expected-error @+1 {{split-K 4 must leave at least 2 of the 4 K steps to every split}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, split_k = 4>} {
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

// Stages fit shared memory, 2 to 8.
// expected-error @+1 {{stages must be 2..8}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, stages = 9>} {
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

// Two warpgroups are a variant of the image GEMM.
// expected-error @+1 {{two warpgroups (_wg2) are a variant of the sm_90a gemm_qdqa4w4 below BM 128}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, two_warpgroups = true>} {
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

// A persistent grid is a variant of the image GEMM.
// expected-error @+1 {{a persistent grid (_ps) is a variant of the sm_90a gemm_qdqa4w4}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, persistent = true>} {
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

// Stream-K is a variant of the image GEMM.
// expected-error @+1 {{stream-K (_sk) is a variant of the sm_90a gemm_qdqa4w4}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, stream_k = true>} {
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

// The warp-split variant runs at BM 8.
// expected-error @+1 {{the warp-split variant (_wk<W>) is one of the sm_90a gemm_a4w4}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, warp_split_k = 4>} {
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

// The streamed image is a variant of the image GEMM.
// expected-error @+1 {{the streamed image (_is<R>) is a variant of the sm_90a gemm_qdqa4w4 with BM 128}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, image_stream = 8>} {
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

// The decode variant has no stage count.
// expected-error @+1 {{the decode variant (_dec) is one of the sm_90a gemm_a4w4}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, stages = 3, decode = true>} {
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

// Decode warpgroups take equal K steps, two each at least.
// expected-error @+1 {{the decode variant's 3 warpgroups take equal K steps}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, decode = true, decode_groups = 3>} {
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

// sm_90a reads its own weight layout.
// expected-error @+1 {{gemm_a4w4 on sm_90a reads weights in the sm90-mma16 layout}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
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

// The weights' K is the activations' padded to whole tiles, at least two
// 128-element steps (gemmWeightK): K = 128 reads weights of K = 256.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
  %cK = arith.constant 128 : index
  %cN = arith.constant 256 : index
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %acc0 = mxtile.zero : !mxtile.tile<16x128xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0) -> (!mxtile.tile<16x128xf32>) {
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xbf16> -> !mxtile.tile<16x128xbf16>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xbf16> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
    // expected-error @+1 {{reads weights of K = 128; activations of K = 128 take 256 (K padded to whole tiles)}}
    %wt = mxtile.load_weight %w[%n0, %k0] via %d {k = 128 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
    %kb = arith.divui %k0, %c32 : index
    %wst = mxtile.load_scales %ws[%n0, %kb] {k = 128 : i64, layout = #mxtile<scale_layout sm90_mma16>}
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

// Decode groups belong to the decode variant.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    // expected-error @+1 {{warpgroups splitting K (_dec<G>) are a decode variant; got 2 without it}}
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, decode_groups = 2>} {
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

// A persistent grid and stream-K exclude each other.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    // expected-error @+1 {{a persistent grid (_ps) and stream-K (_sk) exclude each other}}
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, persistent = true, stream_k = true>} {
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

// Split-K takes at least one split.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32)
    // expected-error @+1 {{split-K (_ks<N>) takes at least one split, got 0}}
    attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, split_k = 0>} {
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

// The accumulator matches the MMA tile.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
  // expected-error @+1 {{accumulator must match the MMA tile}}
  %acc0 = mxtile.zero : !mxtile.tile<16x64xf32>
  %acc0b = mxtile.zero : !mxtile.tile<16x128xf32>
  %acc = scf.for %k0 = %c0 to %cK step %c128 iter_args(%acc1 = %acc0b) -> (!mxtile.tile<16x128xf32>) {
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

// Weights arrive by TMA through their descriptors.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
    // expected-error @+1 {{on sm_90a weights are fetched by TMA}}
    %wt = mxtile.load_weight %w[%n0, %k0] {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
        : memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
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

// One buffer, one role: the activations are not also the output.
// expected-error @+1 {{argument 0 is used in incompatible roles}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
  mxtile.store %acc, %a[%m0, %n0] ld %cN rows %valid : !mxtile.tile<16x128xf32> -> memref<?xbf16>
  return
}

// -----

// Kernel arguments are 1-D buffers and i32 / f32 / index scalars.
// expected-error @+1 {{unsupported kernel argument type}}
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
             %c: memref<?xbf16>, %m: i32, %extra: f64)
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

// Weights are fetched inside the K loop only.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
  // expected-error @+1 {{is not supported outside the K loop by the sm_90a lowering}}
  %stray = mxtile.load_weight %w[%n0, %c0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
      : memref<?xi8>, memref<?xi8> -> !mxtile.tile<128x128xf4E2M1FN>
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

// One weight fetch per K step.
func.func @k(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
    // expected-error @+1 {{does not fit the K loop the sm_90a lowering pipelines}}
    %wt2 = mxtile.load_weight %w[%n0, %k0] via %d {k = 512 : i64, layout = #mxtile<weight_layout sm90_mma16>}
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

// Inline quantization reads BF16.
func.func @k(%a: memref<?xf32>, %w: memref<?xi8>, %ws: memref<?xi8>, %d: memref<?xi8>,
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
    // expected-error @+1 {{inline quantization on sm_90a takes bf16 input}}
    %x = mxtile.load %a[%m0, %k0] ld %cK rows %valid : memref<?xf32> -> !mxtile.tile<16x128xf32>
    %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding roundup>}
        : !mxtile.tile<16x128xf32> -> !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
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
