// Verifier diagnostics: each names the operand and the rule it breaks.
// RUN: mxfp4-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{mxtile tiles are 2-D (rows x columns), got rank 3}}
func.func private @rank3(!mxtile.tile<2x2x2xf32>)

// -----

// expected-error @+1 {{tile element type must be bf16, f32, f4E2M1FN or f8E8M0FNU, got 'i32'}}
func.func private @elem(!mxtile.tile<16x16xi32>)

// -----

func.func @quantize_cols(%t: !mxtile.tile<16x48xbf16>) {
  // expected-error @+1 {{quantizes along columns in blocks of 32, but the tile has 48 columns}}
  %q, %s = mxtile.quantize %t {rounding = #mxtile<rounding roundup>}
      : !mxtile.tile<16x48xbf16> -> !mxtile.tile<16x48xf4E2M1FN>, !mxtile.tile<16x1xf8E8M0FNU>
  return
}

// -----

func.func @quantize_scales(%t: !mxtile.tile<16x64xbf16>) {
  // expected-error @+1 {{scale tile must be 16x2 (one scale per 32 columns), got 16x4}}
  %q, %s = mxtile.quantize %t {rounding = #mxtile<rounding roundup>}
      : !mxtile.tile<16x64xbf16> -> !mxtile.tile<16x64xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>
  return
}

// -----

func.func @quantize_elem(%t: !mxtile.tile<16x64xf4E2M1FN>) {
  // expected-error @+1 {{operand #0 must be tile of bf16 or f32}}
  %q, %s = mxtile.quantize %t {rounding = #mxtile<rounding roundup>}
      : !mxtile.tile<16x64xf4E2M1FN> -> !mxtile.tile<16x64xf4E2M1FN>, !mxtile.tile<16x2xf8E8M0FNU>
  return
}

// -----

func.func @mma_k(%a: !mxtile.tile<16x128xf4E2M1FN>, %sa: !mxtile.tile<16x4xf8E8M0FNU>,
                 %b: !mxtile.tile<256x256xf4E2M1FN>, %sb: !mxtile.tile<256x8xf8E8M0FNU>,
                 %acc: !mxtile.tile<16x256xf32>) {
  // expected-error @+1 {{A has K = 128 but B has K = 256 (both operands are K-major)}}
  %r = mxtile.scaled_mma %a, %sa, %b, %sb, %acc
      : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
        !mxtile.tile<256x256xf4E2M1FN>, !mxtile.tile<256x8xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
  return
}

// -----

func.func @mma_acc(%a: !mxtile.tile<16x128xf4E2M1FN>, %sa: !mxtile.tile<16x4xf8E8M0FNU>,
                   %b: !mxtile.tile<256x128xf4E2M1FN>, %sb: !mxtile.tile<256x4xf8E8M0FNU>,
                   %acc: !mxtile.tile<32x256xf32>) {
  // expected-error @+1 {{accumulator must be 16x256 (rows of A x rows of B), got 32x256}}
  %r = mxtile.scaled_mma %a, %sa, %b, %sb, %acc
      : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x4xf8E8M0FNU>,
        !mxtile.tile<256x128xf4E2M1FN>, !mxtile.tile<256x4xf8E8M0FNU> -> !mxtile.tile<32x256xf32>
  return
}

// -----

func.func @mma_scales(%a: !mxtile.tile<16x128xf4E2M1FN>, %sa: !mxtile.tile<16x2xf8E8M0FNU>,
                      %b: !mxtile.tile<256x128xf4E2M1FN>, %sb: !mxtile.tile<256x4xf8E8M0FNU>,
                      %acc: !mxtile.tile<16x256xf32>) {
  // expected-error @+1 {{A scales must be 16x4, got 16x2}}
  %r = mxtile.scaled_mma %a, %sa, %b, %sb, %acc
      : !mxtile.tile<16x128xf4E2M1FN>, !mxtile.tile<16x2xf8E8M0FNU>,
        !mxtile.tile<256x128xf4E2M1FN>, !mxtile.tile<256x4xf8E8M0FNU> -> !mxtile.tile<16x256xf32>
  return
}

// -----

func.func @weight_rows(%w: memref<?xi8>, %i: index) {
  // expected-error @+1 {{gfx950_mfma16 weights come in groups of 16 rows; tile has 8 rows}}
  %t = mxtile.load_weight %w[%i, %i] {k = 256 : i64, layout = #mxtile<weight_layout gfx950_mfma16>}
      : memref<?xi8> -> !mxtile.tile<8x256xf4E2M1FN>
  return
}

// -----

func.func @weight_k(%w: memref<?xi8>, %i: index) {
  // expected-error @+1 {{tile of 256 K-elements must be a multiple of 32 and at most k = 128}}
  %t = mxtile.load_weight %w[%i, %i] {k = 128 : i64, layout = #mxtile<weight_layout rowmajor>}
      : memref<?xi8> -> !mxtile.tile<16x256xf4E2M1FN>
  return
}

// -----

func.func @scales_k(%w: memref<?xi8>, %i: index) {
  // expected-error @+1 {{tile of 8 K-blocks exceeds k / 32 = 4}}
  %t = mxtile.load_scales %w[%i, %i] {k = 128 : i64, layout = #mxtile<scale_layout gfx950_mfma16>}
      : memref<?xi8> -> !mxtile.tile<256x8xf8E8M0FNU>
  return
}

// -----

func.func @load_elem(%a: memref<?xf32>, %i: index) {
  // expected-error @+1 {{loads 'f32' elements but the result tile holds 'bf16'}}
  %t = mxtile.load %a[%i, %i] ld %i rows %i : memref<?xf32> -> !mxtile.tile<16x64xbf16>
  return
}

// -----

func.func @load_rank(%a: memref<4x4xbf16>, %i: index) {
  // expected-error @+1 {{base must be a 1-D memref (rows are addressed with `ld`), got 'memref<4x4xbf16>'}}
  %t = mxtile.load %a[%i, %i] ld %i rows %i : memref<4x4xbf16> -> !mxtile.tile<16x64xbf16>
  return
}

// -----

func.func @swiglu_up(%g: !mxtile.tile<16x64xf32>) {
  // expected-error @+1 {{swiglu needs a gate and an up operand}}
  %r = mxtile.activation swiglu %g {alpha = 1.702 : f32, limit = 7.0 : f32}
      : !mxtile.tile<16x64xf32> -> !mxtile.tile<16x64xf32>
  return
}

// -----

func.func @swiglu_limit(%g: !mxtile.tile<16x64xf32>) {
  // expected-error @+1 {{swiglu needs the 'limit' attribute}}
  %r = mxtile.activation swiglu %g, %g {alpha = 1.702 : f32}
      : !mxtile.tile<16x64xf32>, !mxtile.tile<16x64xf32> -> !mxtile.tile<16x64xf32>
  return
}

// -----

func.func @situ_beta(%g: !mxtile.tile<16x64xf32>) {
  // expected-error @+1 {{'beta' must be > 0, got -1}}
  %r = mxtile.activation situv2 %g, %g {beta = -1.0 : f32, linear_beta = 1.0 : f32}
      : !mxtile.tile<16x64xf32>, !mxtile.tile<16x64xf32> -> !mxtile.tile<16x64xf32>
  return
}

// -----

func.func @silu_alpha(%g: !mxtile.tile<16x64xf32>) {
  // expected-error @+1 {{'alpha' is not a parameter of silu}}
  %r = mxtile.activation silu %g {alpha = 1.0 : f32}
      : !mxtile.tile<16x64xf32> -> !mxtile.tile<16x64xf32>
  return
}

// -----

func.func @unknown_act(%g: !mxtile.tile<16x64xf32>) {
  // expected-error @+1 {{unknown activation 'gelu'; expected none, silu, swiglu or situv2}}
  %r = mxtile.activation gelu %g : !mxtile.tile<16x64xf32> -> !mxtile.tile<16x64xf32>
  return
}

// -----

func.func @store_elem(%t: !mxtile.tile<16x64xf32>, %c: memref<?xi8>, %i: index) {
  // expected-error @+1 {{stores bf16 or f32, but the buffer holds 'i8'}}
  mxtile.store %t, %c[%i, %i] ld %i rows %i : !mxtile.tile<16x64xf32> -> memref<?xi8>
  return
}

// -----

func.func @tile_id() {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint}}
  %i = mxtile.tile_id 3
  return
}

// -----

// The schedule's fields, each on its own (verifyScheduleFields).
// expected-error @+1 {{the tile must be positive, got BM 0, BN 128, BK 128}}
func.func private @zero_tile() attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 0, bn = 128, bk = 128>}

// -----

// expected-error @+1 {{the stage count (_st<N>) must be 0 (the tile's default) or more, got -1}}
func.func private @negative_stages() attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128, stages = -1>}

// -----

// expected-error @+1 {{the warp-split (_wk<W>) and streamed-image (_is<N>) counts must not be negative, got -1 and 0}}
func.func private @negative_warps() attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 8, bn = 32, bk = 128, warp_split_k = -1>}

// -----

// expected-error @+1 {{the decode variant takes at least one warpgroup (_dec<G>), got 0}}
func.func private @no_groups() attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 8, bn = 64, bk = 128, decode = true, decode_groups = 0>}

// -----

// expected-error @+2 {{expected true or false}}
// expected-error @+1 {{failed to parse Tile_ScheduleAttr parameter 'decode' which is to be a `bool`}}
func.func private @flag_value() attributes {mxtile.kernel, mxtile.schedule = #mxtile.schedule<bm = 8, bn = 64, bk = 128, decode = 1>}

// -----

// expected-error @+1 {{'mxtile.schedule' belongs on a kernel (an op marked 'mxtile.kernel')}}
func.func private @not_a_kernel() attributes {mxtile.schedule = #mxtile.schedule<bm = 16, bn = 128, bk = 128>}

// -----

// expected-error @+1 {{'mxtile.schedule' must be a #mxtile.schedule, got 16 : i64}}
func.func private @wrong_kind() attributes {mxtile.kernel, mxtile.schedule = 16 : i64}

// -----

// The nine attributes that carried schedule facts before #mxtile.schedule
// are gone; a misspelt or stale mxtile attribute is an error, not ignored.
// expected-error @+1 {{unknown mxtile attribute 'mxtile.stages'}}
func.func private @stale() attributes {mxtile.kernel, mxtile.stages = 3 : i64}

// -----

// expected-error @+1 {{'mxtile.kernel' is a unit attribute}}
func.func private @kernel_value() attributes {mxtile.kernel = 1 : i64}

// -----

func.func @store_act_mx_none(%acc: !mxtile.tile<16x128xf32>, %c: memref<?xi8>, %w: memref<?xf32>,
                             %p: f32, %dw: i32, %i: index) {
  // expected-error @+1 {{stores a gated activation (silu, swiglu or situv2), got none}}
  mxtile.store_act_mx none %acc, %c, %c[%i, %i] ld %i cols %i rows %i params(%p, %p) weights %w
      if %dw {rounding = #mxtile<rounding even>} : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

func.func @store_act_mx_cols(%acc: !mxtile.tile<16x96xf32>, %c: memref<?xi8>, %w: memref<?xf32>,
                             %p: f32, %dw: i32, %i: index) {
  // expected-error @+1 {{the tile's columns must be a multiple of 64, got 96}}
  mxtile.store_act_mx silu %acc, %c, %c[%i, %i] ld %i cols %i rows %i params(%p, %p) weights %w
      if %dw {rounding = #mxtile<rounding even>} : !mxtile.tile<16x96xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

func.func @store_act_mx_rep(%acc: !mxtile.tile<16x128xf32>, %c: memref<?xi8>, %w: memref<?xf32>,
                            %p: f32, %dw: i32, %i: index) {
  // expected-error @+1 {{scaleRep is 1 (row-major scales) or gfx1250's quant_wmma_rep 2, 4 or 8, got 3}}
  mxtile.store_act_mx silu %acc, %c, %c[%i, %i] ld %i cols %i rows %i params(%p, %p) weights %w
      if %dw {rounding = #mxtile<rounding even>, scaleRep = 3} : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

func.func @load_mx_rep(%c: memref<?xi8>, %i: index) {
  // expected-error @+1 {{scaleRep is 1 (row-major scales) or gfx1250's quant_wmma_rep 2, 4 or 8, got 16}}
  %q, %s = mxtile.load_mx %c, %c[%i, %i] ld %i rows %i {scaleRep = 16}
      : memref<?xi8>, memref<?xi8> -> !mxtile.tile<64x128xf4E2M1FN>, !mxtile.tile<64x4xf8E8M0FNU>
  return
}

// -----

func.func @store_act_mx_splits(%acc: !mxtile.tile<16x128xf32>, %c: memref<?xi8>, %w: memref<?xf32>,
                               %p: f32, %dw: i32, %i: index) {
  // expected-error @+1 {{splits = 3 needs reduce(workspace, counters)}}
  mxtile.store_act_mx silu %acc, %c, %c[%i, %i] ld %i cols %i rows %i params(%p, %p) weights %w
      if %dw {rounding = #mxtile<rounding even>, splits = 3} : !mxtile.tile<16x128xf32>, memref<?xi8>, memref<?xi8>, memref<?xf32>
  return
}

// -----

func.func @store_scatter_add_cols(%acc: !mxtile.tile<16x18xf32>, %o: memref<?xf32>,
                                  %ids: memref<?xi32>, %use: i32, %i: index) {
  // expected-error @+1 {{adds 4 columns at a time: the tile's columns must be a multiple of 4, got 18}}
  mxtile.store_scatter_add %acc, %o[%i, %i] ld %i rows %i ids %ids tokens %i weights %o if %use
      : !mxtile.tile<16x18xf32>, memref<?xf32>, memref<?xi32>, memref<?xf32>
  return
}
