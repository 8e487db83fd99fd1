// #mxtile.schedule: one parameter per field of kScheduleFields
// (Kernels/Schedule.h), defaults elided when printed; the round trip is exact.
// RUN: mxfp4-opt %s | mxfp4-opt | FileCheck %s

// CHECK-LABEL: func.func @tile_only()
// CHECK-SAME: attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128>}
func.func @tile_only() attributes {mxtile.kernel,
    mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, split_k = 1, stages = 0,
                                       decode = false, decode_groups = 1>} {
  return
}

// CHECK-LABEL: func.func @decode()
// CHECK-SAME: #mxtile.schedule<bm = 8, bn = 64, bk = 128, split_k = 11, folded_scales = true, decode = true, decode_groups = 3>
func.func @decode() attributes {mxtile.kernel,
    mxtile.schedule = #mxtile.schedule<bm = 8, bn = 64, bk = 128, split_k = 11,
                                       folded_scales = true, decode = true, decode_groups = 3>} {
  return
}

// CHECK-LABEL: func.func @image()
// CHECK-SAME: #mxtile.schedule<bm = 128, bn = 128, bk = 128, stages = 3, two_warpgroups = true, warp_split_k = 2, image_stream = 16, persistent = true>
func.func @image() attributes {mxtile.kernel,
    mxtile.schedule = #mxtile.schedule<bm = 128, bn = 128, bk = 128, stages = 3,
                                       two_warpgroups = true, warp_split_k = 2, image_stream = 16,
                                       persistent = true>} {
  return
}

// CHECK-LABEL: func.func @stream_k()
// CHECK-SAME: #mxtile.schedule<bm = 256, bn = 128, bk = 128, stream_k = true>
func.func @stream_k() attributes {mxtile.kernel,
    mxtile.schedule = #mxtile.schedule<bm = 256, bn = 128, bk = 128, stream_k = true>} {
  return
}
