// Every mxtile op parses, verifies and prints back to something that parses
// to the same thing.
// RUN: mxfp4-opt %s | mxfp4-opt | FileCheck %s
// RUN: mxfp4-opt %s --mlir-print-op-generic | mxfp4-opt | FileCheck %s

// CHECK-LABEL: func.func @dense
func.func @dense(%a: memref<?xbf16>, %w: memref<?xi8>, %ws: memref<?xi8>, %c: memref<?xbf16>,
                 %m: index) attributes {mxtile.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %k = arith.constant 7168 : index
  %n = arith.constant 8448 : index
  // CHECK: %[[N0:.+]] = mxtile.tile_id 0
  // CHECK: %[[M0:.+]] = mxtile.tile_id 1
  %n0 = mxtile.tile_id 0
  %m0 = mxtile.tile_id 1
  // CHECK: mxtile.zero : <16x256xf32>
  %acc = mxtile.zero : !mxtile.tile<16x256xf32>
  // CHECK: mxtile.load %{{.+}}[%[[M0]], %{{.+}}] ld %{{.+}} rows %{{.+}} : memref<?xbf16> -> <16x256xbf16>
  %x = mxtile.load %a[%m0, %c0] ld %k rows %m : memref<?xbf16> -> !mxtile.tile<16x256xbf16>
  // CHECK: mxtile.quantize %{{.+}} {rounding = #mxtile<rounding even>} : <16x256xbf16> -> <16x256xf4E2M1FN>, <16x8xf8E8M0FNU>
  %q, %s = mxtile.quantize %x {rounding = #mxtile<rounding even>}
      : !mxtile.tile<16x256xbf16> -> !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>
  // CHECK: mxtile.load_weight %{{.+}}[%[[N0]], %{{.+}}] {k = 7168 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
  %wt = mxtile.load_weight %w[%n0, %c0] {k = 7168 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
      : memref<?xi8> -> !mxtile.tile<256x256xf4E2M1FN>
  // CHECK: mxtile.load_scales %{{.+}} {k = 7168 : i64, layout = #mxtile<scale_layout gfx1250_wmma>}
  %wst = mxtile.load_scales %ws[%n0, %c0] {k = 7168 : i64, layout = #mxtile<scale_layout gfx1250_wmma>}
      : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
  // CHECK: mxtile.scaled_mma
  // CHECK-SAME: -> <16x256xf32>
  %r = mxtile.scaled_mma %q, %s, %wt, %wst, %acc
      : !mxtile.tile<16x256xf4E2M1FN>, !mxtile.tile<16x8xf8E8M0FNU>,
        !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
  // CHECK: mxtile.activation silu %{{.+}} : <16x256xf32> -> <16x256xf32>
  %h = mxtile.activation silu %r : !mxtile.tile<16x256xf32> -> !mxtile.tile<16x256xf32>
  // CHECK: mxtile.activation swiglu %{{.+}}, %{{.+}} {alpha = 1.702000e+00 : f32, limit = 7.000000e+00 : f32}
  %g = mxtile.activation swiglu %r, %h {alpha = 1.702 : f32, limit = 7.0 : f32}
      : !mxtile.tile<16x256xf32>, !mxtile.tile<16x256xf32> -> !mxtile.tile<16x256xf32>
  // CHECK: mxtile.activation situv2 %{{.+}}, %{{.+}} {beta = 4.000000e+00 : f32, linear_beta = 2.500000e+01 : f32}
  %t = mxtile.activation situv2 %r, %g {beta = 4.0 : f32, linear_beta = 25.0 : f32}
      : !mxtile.tile<16x256xf32>, !mxtile.tile<16x256xf32> -> !mxtile.tile<16x256xf32>
  // CHECK: mxtile.store %{{.+}}, %{{.+}}[%[[M0]], %[[N0]]] ld %{{.+}} rows %{{.+}} : <16x256xf32> -> memref<?xbf16>
  mxtile.store %t, %c[%m0, %n0] ld %n rows %m : !mxtile.tile<16x256xf32> -> memref<?xbf16>
  return
}

// MoE stage 1's fused epilogue: run-time activation parameters, the
// routing weights, optional debug output and split-K.
// CHECK-LABEL: func.func @store_act_mx
func.func @store_act_mx(%acc: !mxtile.tile<16x128xf32>, %codes: memref<?xi8>,
                        %scales: memref<?xi8>, %w: memref<?xf32>, %dbg: memref<?xf32>,
                        %ws: memref<?xf32>, %cnt: memref<?xi32>, %p0: f32, %p1: f32,
                        %dw: i32, %m0: index, %n0: index, %valid: index) {
  %ld = arith.constant 768 : index
  %cols = arith.constant 720 : index
  // CHECK: mxtile.store_act_mx swiglu %{{.+}}, %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] ld %{{.+}} cols %{{.+}} rows %{{.+}} params(%{{.+}}, %{{.+}}) weights %{{.+}} if %{{.+}} {rounding = #mxtile<rounding even>} : <16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  mxtile.store_act_mx swiglu %acc, %codes, %scales[%m0, %n0] ld %ld cols %cols rows %valid
      params(%p0, %p1) weights %w if %dw {rounding = #mxtile<rounding even>}
      : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  // CHECK: mxtile.store_act_mx situv2 {{.+}} debug %{{.+}} : memref<?xf32> reduce(%{{.+}}, %{{.+}} : memref<?xf32>, memref<?xi32>) {rounding = #mxtile<rounding floor>, splits = 4 : i64}
  mxtile.store_act_mx situv2 %acc, %codes, %scales[%m0, %n0] ld %ld cols %cols rows %valid
      params(%p0, %p1) weights %w if %dw debug %dbg : memref<?xf32>
      reduce(%ws, %cnt : memref<?xf32>, memref<?xi32>) {rounding = #mxtile<rounding floor>, splits = 4}
      : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  // gfx1250's sorted-row scale layout, written here and read by load_mx.
  // CHECK: mxtile.store_act_mx silu {{.+}} {rounding = #mxtile<rounding even>, scaleRep = 4 : i64}
  mxtile.store_act_mx silu %acc, %codes, %scales[%m0, %n0] ld %ld cols %cols rows %valid
      params(%p0, %p1) weights %w if %dw {rounding = #mxtile<rounding even>, scaleRep = 4}
      : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  // CHECK: mxtile.load_mx {{.+}} ld %{{.+}} rows %{{.+}} {scaleRep = 4 : i64}
  %q, %s = mxtile.load_mx %codes, %scales[%m0, %n0] ld %ld rows %valid {scaleRep = 4}
      : memref<?xi8>, memref<?xi8> -> !mxtile.tile<64x128xf4E2M1FN>, !mxtile.tile<64x4xf8E8M0FNU>
  return
}

// MoE stage 2's atomic epilogue: sorted ids and weights, optional bias.
// CHECK-LABEL: func.func @store_scatter_add
func.func @store_scatter_add(%acc: !mxtile.tile<16x128xf32>, %out: memref<?xf32>,
                             %ids: memref<?xi32>, %w: memref<?xf32>, %bias: memref<?xf32>,
                             %use: i32, %with: i32, %m0: index, %n0: index, %valid: index,
                             %t: index, %brow: index) {
  %ld = arith.constant 3584 : index
  %cols = arith.constant 3520 : index
  // CHECK: mxtile.store_scatter_add %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] ld %{{.+}} rows %{{.+}} ids %{{.+}} tokens %{{.+}} weights %{{.+}} if %{{.+}} : <16x128xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>
  mxtile.store_scatter_add %acc, %out[%m0, %n0] ld %ld rows %valid ids %ids tokens %t
      weights %w if %use : !mxtile.tile<16x128xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>
  // CHECK: mxtile.store_scatter_add {{.+}} bias %{{.+}}[%{{.+}}] cols %{{.+}} if %{{.+}} : memref<?xf32> : <16x128xf32>
  mxtile.store_scatter_add %acc, %out[%m0, %n0] ld %ld rows %valid ids %ids tokens %t
      weights %w if %use bias %bias[%brow] cols %cols if %with : memref<?xf32>
      : !mxtile.tile<16x128xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>
  return
}
