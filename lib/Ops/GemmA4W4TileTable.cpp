//===- GemmA4W4TileTable.cpp - The tile table of the dense A4W4 GEMM ------===//
//
// selectGemmA4W4Tile: per target, shape and M, the tile gemmA4W4 runs
// unless its options force another. On sm_90a, measured winners for the
// seed's and the models' shapes, then rules (decode, small batches, BM
// 128 / 192 / 256 by the waves they fill) for everything else; the logs
// each number comes from are in docs/results/.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Ops/GemmA4W4.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace mxfp4 {

namespace {
/// A measured winner for one shape and range of M on sm_90a, over the rule
/// below (docs/results/2026-11-30-h200-tile-sweep-{44f86b0,f143bd9,9fb6bae}.log,
/// and for the dequantize-once GEMM ...-sweep-{70e25c4,b8b5090}.log and
/// ...-splitk-sweep-dc2811f.log, ...-two-warpgroups-sweep-e82be11.log; the
/// rule's time in the comment). Only
/// measured M so far; tuning appends and widens.
struct MeasuredTile {
  int64_t n, k, mMin, mMax;
  GemmA4W4Tile tile; ///< bm, splitK, bk (0: default), preQuantize, stages, two warpgroups,
                     ///< persistent, stream-K
};
/// The same tile with BN 64.
constexpr GemmA4W4Tile narrow(GemmA4W4Tile t) {
  t.bn = sm90::kNarrowTileRows;
  return t;
}
/// The same tile with BN 192 (three warpgroups).
constexpr GemmA4W4Tile wide(GemmA4W4Tile t) {
  t.bn = sm90::kWideTileRows;
  return t;
}
/// The same tile as the decode variant.
constexpr GemmA4W4Tile decode(GemmA4W4Tile t) {
  t.decode = true;
  return t;
}
/// The same tile as the decode variant with `groups` warpgroups splitting
/// each workgroup's K steps.
constexpr GemmA4W4Tile decodeGroups(GemmA4W4Tile t, int64_t groups) {
  t.decode = true;
  t.decodeGroups = groups;
  return t;
}
/// The warp-split variant (Sm90WarpSplitK.cpp) with `warps` warps at BM 8,
/// BN 32.
constexpr GemmA4W4Tile warpSplit(int64_t warps) {
  GemmA4W4Tile t;
  t.bm = 8;
  t.bn = 32;
  t.warpSplitK = warps;
  return t;
}
// The decode variant at BN 64 (...-decode-inline-sweep-a249c92.log; the
// entry it replaced in the same runs in parentheses): 7168x4224 M = 1 / 8
// 15.2 / 15.1 us (17.8 / 17.2), 1536x7168 M = 1 / 8 10.0 / 10.5 (11.1 /
// 11.9), 7168x768 M = 1 / 8 7.2 / 7.6 (7.5 / 8.2). At BN 128 (8448x7168,
// 8 splits) it only matched the K loop: 21.5 / 21.2 against 21.4 / 21.7.
// 8448x7168 M = 1 / 8 at BN 64 x 14 splits (4 steps each, 1848 workgroups
// at seven a SM): 21.0 / 20.9 us against 21.5 / 21.7 for the rule's BN 128
// K loop x 8 splits in the same run (...-decode-bn64-sweep-5f1e89f.log).
constexpr MeasuredTile kSm90Measured[] = {
    {8448, 7168, 1, 8, narrow(decode({8, 14, 0, false}))},
    // 8 < M <= 32 on the image in two warpgroups (...-small-m-sweep-e8112a4.log;
    // the inline BM 16 rule's time in parentheses): M = 9 / 16 21.1 / 21.4 us
    // (31.3 / 32.6), M = 20 / 32 24.1 / 24.1-24.3 (33.7; BM 128 x 2: 28.6-29.0).
    {8448, 7168, 9, 16, {16, 6, 0, true, 4, true}},
    {8448, 7168, 17, 32, {32, 4, 0, true, 5, true}},
    {8448, 7168, 33, 64, {128, 2, 0, true}}, // M = 64: 30.1 us (rule: 37.3)
    // Persistent BM 128 (whole rounds of 528 / 1056 tiles): M = 1024 155.2
    // us against 158.1 for the rule's BM 256, M = 2048 301.2 / 301.8 against
    // 315.3-317.8 (...-persistent-m2048-sweep-db753af.log,
    // ...-qbm-and-m1024-sweep-1695463.log).
    {8448, 7168, 1024, 1024, {128, 1, 0, true, 0, false, true}},
    {8448, 7168, 2048, 2048, {128, 1, 0, true, 0, false, true}},
    // M = 24 / 32: 23.2 / 23.5 us against 27.5 / 27.0 for one warpgroup x 7
    // splits (...-small-m-bench-635ef30.log).
    {7168, 7168, 17, 32, {32, 4, 0, true, 5, true}},
    {7168, 4224, 1, 8, narrow(decode({8, 11, 0, false}))},
    {7168, 4224, 9, 16, {16, 3, 0, true, 6, true}}, // M = 12 / 16: 18.0 / 18.1 us (20.7 / 21.2)
    {7168, 4224, 17, 32, narrow({32, 3, 0, true})}, // M = 24 / 32: 18.6 / 18.7 us (23.3 / 23.4)
    {7168, 4224, 128, 128, narrow({128, 1, 0, true, 4})}, // 21.8 us (22.9)
    {1536, 7168, 1, 8, narrow(decode({8, 14, 0, false}))},
    // Two warpgroups, 8 stages: M = 24 / 32 13.0 / 12.6-13.0 us against
    // 13.4-13.6 on the default 4 (...-small-m-sweep-e8112a4.log; the inline
    // rule: 19.3 at M = 24).
    {1536, 7168, 17, 32, {32, 8, 0, true, 8, true}},
    // BN 64: 56 tiles of 128 rows leave 76 SMs idle; 112 of 64 rows
    // (...-bn64-sweep-32a34fd.log, the BN 128 entry in parentheses).
    // Six warps of one chunk each (the rule's warp-split tile), M = 1 / 8:
    // 5.8-5.9 / 6.0-6.1 us against 6.2-6.4 / 6.4 for the entry it replaces
    // in the same runs, three decode warpgroups of two K steps
    // (...-warp-split-table-f409a7ee2e6a.log; that one against one warpgroup of
    // three BK 256 steps: 6.3 / 6.5 vs 7.2 / 7.5, ...-decode-groups-sweep-0e70b78.log).
    {7168, 768, 1, 8, warpSplit(6)},
    // M = 16 / 24 / 32: 8.4 / 8.4 / 8.4 us (rule: 9.3 / 11.1 / 9.9).
    {7168, 768, 9, 32, narrow({32, 1, 256, true, 6})},
    {7168, 768, 128, 128, narrow({128, 1, 0, true})}, // 9.6 us (11.5)
    // 4 stages instead of 5: 31.5 / 31.7 us against 32.1 / 32.4 in the same
    // runs (...-sweep-afd9ff2.log, ...-bulk-epilogue-d650bfe).
    {1536, 7168, 512, 512, {128, 2, 0, true, 4}},
    // BN 192 x BM 128 on 4 stages: 8 x 16 tiles, 128 of the 132 SMs, each
    // converted weight fragment feeding 128 tokens as at BN 128 but a step's
    // activations feeding 1.5x the MMAs: 71.7-72.6 us against 76.8-77.3 for
    // BM 192 x BN 128 (the entry before) in the same runs; 3 / 5 stages 89.7 /
    // 73.6 (...-bn192-sweep-e174bed.log, ...-bn192-sweep-d38ee7c.log).
    {1536, 7168, 2048, 2048, wide({128, 1, 0, true, 4})},
    // M = 1024: BN 192 x 2 splits (a cluster of two), 43.6 us against 66.6
    // for the rule's tile (4 splits 54.6, one 64.0).
    {1536, 7168, 1024, 1024, wide({128, 2, 0, true, 4})},
    // The model shapes: 1536x4224 M = 2048 45.7 us against 55.4 for the
    // rule's stream-K (M = 1024: 41.9 against 32.8, so only 2048), 9216x7168
    // M = 2048 336.9 against 353.2 (...-bn192-sweep-e174bed.log).
    {1536, 4224, 2048, 2048, wide({128, 1, 0, true, 4})},
    {9216, 7168, 2048, 2048, wide({128, 1, 0, true, 4})},
};
} // namespace

/// SMs of the H200 the rules below were measured on.
static constexpr int64_t kSm90Sms = 132;

/// The most splits up to `most` that divide `steps` K steps evenly, at least
/// two steps each; 1 if none does.
static int64_t evenSplit(int64_t steps, int64_t most) {
  for (int64_t s = std::min(most, steps / 2); s > 1; --s)
    if (steps % s == 0)
      return s;
  return 1;
}

/// The rule's tile for 8 < M <= 32 with long K: the image at BM 16 / 32
/// in two warpgroups, split over K. Where one workgroup a SM gives each
/// split at most 16 K steps, one wave of them on 8 stages (which also keeps
/// a second BM 32 workgroup off each SM: the grid would not spread evenly);
/// else split so that two workgroups share each SM, on as many stages as two
/// of them fit (at most a split's steps + 1). One wave, M = 24
/// (...-small-batch-splits-sweep-7fb7940.log, ...-2bf3023.log): 4096x4096 4
/// splits 14.0 us against 14.9 for 8 two a SM; 2048x7168 8 splits 13.5, 14
/// two a SM 16.2-16.5; 1024x8192 16 splits 13.7-13.8 on 8 stages, 14.5-14.6
/// on 5 (8 splits of 8 steps: 13.2-13.6, but 4096x2048 M = 16 in 2 splits of
/// 8 took 12.0 against 10.5 for 4 of 4: ...-small-batch-rule-bench-5db4e46.log).
/// Two a SM: 4096x14336 (28 steps a wave) 7 splits 25.3-25.5, one wave 26.3;
/// 8448x7168 (M = 16: 4 splits on 8 stages 22.6 us, 21.4 at best; M = 20: 4
/// on 6 24.8, 24.1 at best; the inline BM 16 rule: 32.6 / 33.7) and
/// 7168x4224 (M = 16: 3 on 8, 18.2; the rule: 21.2)
/// (...-small-m-sweep-e8112a4.log, ...-small-m-rule-sweep-16a98f9.log).
static GemmA4W4Tile sm90SmallBatchTile(int64_t n, int64_t k, int64_t m) {
  GemmA4W4Tile t;
  t.bm = m <= 16 ? 16 : 32;
  t.preQuantize = true;
  t.twoWarpgroups = true;
  const int64_t tiles = n / sm90::kTileRows, steps = k / 128;
  const int64_t oneWave = evenSplit(steps, kSm90Sms / tiles);
  if (oneWave > 1 && steps / oneWave <= 16) {
    t.splitK = oneWave;
    t.stages = 8;
    return t;
  }
  // At most 16 splits: the workspace sum's loads come a group at a time
  // (test/Target/ptx-sm90a-staged.test), but each split past that adds a
  // slice to read back.
  const int64_t want = (2 * kSm90Sms + tiles - 1) / tiles;
  t.splitK = evenSplit(steps, std::min<int64_t>(want, 16));
  // Stages past a split's steps + 1 would only hold shared memory.
  const int64_t perSm = (tiles * t.splitK + kSm90Sms - 1) / kSm90Sms;
  for (int64_t st = std::min<int64_t>(8, steps / t.splitK + 1); st >= 3 && !t.stages; --st)
    if (sm90::workgroupsPerSm(sm90::sharedLayout(t.bm, 128, true, st)) >= perSm)
      t.stages = st;
  return t;
}

/// The rule's tile for M <= 8: the decode variant (Sm90DecodeKLoop.cpp) at
/// BN 64, its K steps split evenly, 4 steps a split where they divide so
/// (then 3, 5, 2, 6); short K (the seed's 7168x768) in 256-K steps, unsplit.
/// The model shapes of `mxfp4-bench --preset=model-dense`, M = 1 (M = 8),
/// against the K loop the rule took before
/// (docs/results/2026-12-02-h200-decode-rule-sweep-59e28d8.log): 9216x7168
/// 14 splits 19.5 us (20.5) against 26.0 (28.2; 7 / 8 / 28 splits: 22.2-23.0);
/// 7168x4608 9 or 12 splits 13.4 (14.0) against 15.2 (15.9); 3584x7168 14
/// splits 12.2 (12.8) against 14.1 (14.5); 7168x3584 7 splits 11.7 (12.4)
/// against 13.6 (13.8); 1536x4224 11 splits 8.0 (8.3) against 10.0 (10.3;
/// 3 splits: 13.1). No even split (a prime count of steps): none.
/// Short K whose 128-K steps G = 4, 3 or 2 warpgroups can share two or
/// three each, unsplit: G warpgroups a workgroup, four only where the N
/// tiles fit one a SM and three where they fit two (80 registers a
/// thread), M = 1 / 8, against the rule before in the same run
/// (docs/results/2026-12-02-h200-decode-groups-sweep-0e70b78.log):
/// 7168x512 G = 2 5.7 / 6.1 us (6.1 / 6.6), 7168x768 G = 3 6.3 / 6.5 (7.2
/// / 7.5), 7168x1024 G = 4 6.9 / 7.0 (8.1 / 8.5), 7168x1536 G = 4 8.3 / 8.4
/// (9.2 / 9.6), 2048x1536 G = 4 6.9 / 7.0 (7.2 / 7.3), 4096x1024 G = 4 6.4 /
/// 6.4 (7.6 / 7.9), 32768x512 G = 2 8.8 / 9.0 (10.3 / 11.0); not 24576x1536
/// (384 tiles: G = 2 of six steps 14.5 / 15.4, the rule's 3 splits 13.8 /
/// 14.7).
static std::optional<GemmA4W4Tile> sm90DecodeTile(int64_t n, int64_t k) {
  if (n % sm90::kNarrowTileRows != 0 || k % 128 != 0)
    return std::nullopt;
  GemmA4W4Tile t;
  t.bm = 8;
  t.bn = sm90::kNarrowTileRows;
  t.decode = true;
  const int64_t tiles = n / sm90::kNarrowTileRows;
  // Workgroups of G warpgroups that fit a SM at 80 registers a thread: four
  // -> 1, three -> 2, two -> 3 (any tile count).
  auto fits = [&](int64_t groups) {
    return groups == 4 ? tiles <= kSm90Sms : groups == 3 ? tiles <= 2 * kSm90Sms : true;
  };
  for (int64_t groups : {4, 3, 2}) {
    const int64_t each = k / 128 / groups;
    if ((k / 128) % groups == 0 && each >= 2 && each <= 3 && fits(groups)) {
      t.bk = 128;
      t.decodeGroups = groups;
      return t;
    }
  }
  if (k < 2048 && k % 256 == 0 && k / 256 >= 2 && k / 256 <= 4) {
    t.bk = 256;
    return t;
  }
  const int64_t steps = k / 128;
  for (int64_t perSplit : {4, 3, 5, 2, 6})
    if (steps % perSplit == 0) {
      t.splitK = steps / perSplit;
      return t;
    }
  return std::nullopt;
}

/// The rule's tile for M <= 8 at short K: the warp-split variant, one
/// 128-K chunk a warp (K / 128 = 2..16 warps in one workgroup per 32 rows),
/// where those warps fit about one wave (at most 48 an SM). M = 1 / 8
/// against the decode rule below in the same runs (BN 32;
/// docs/results/2026-12-03-h200-warp-split-table-f409a7ee2e6a.log, the table
/// with and without it): 7168x512 5.3 / 5.6 us (5.6 / 5.7), 7168x1024 6.3 /
/// 6.6 (7.0 / 7.3), 4096x1024 5.4 / 5.8 (6.3 / 6.3), 2048x1536 5.3 / 5.6
/// (6.9 / 7.1), 2048x2048 5.8 / 6.1 (7.5 / 7.7), 4096x640 5.1 / 5.2 (6.3 /
/// 6.5), 7168x768 5.8 / 6.0 (6.2 / 6.3). Where
/// warps take several chunks in turn it loses (each chunk's quantization
/// and MMAs are one warp's chain): 8448x7168 8 warps 20.9 / 21.4 (18.3 /
/// 19.3), 7168x4224 11 warps 15.6 / 15.9 (12.9 / 13.7), 1536x4096 16 warps
/// 8.7 / 9.2 (8.2 / 8.4); so does a grid of several waves: 24576x1536 (768
/// workgroups of 12 warps) 16.6 / 18.5 (13.9 / 14.6).
static std::optional<GemmA4W4Tile> sm90WarpSplitTile(int64_t n, int64_t k) {
  const int64_t chunks = k / 128;
  if (n % 32 != 0 || k % 128 != 0 || chunks < 2 || chunks > sm90::kMaxSplitKWarps ||
      n / 32 * chunks > 48 * kSm90Sms)
    return std::nullopt;
  return warpSplit(chunks);
}

/// The sm_90a rule for shapes and M the measured entries do not cover.
static GemmA4W4Tile sm90RuleTile(int64_t n, int64_t k, int64_t m, bool warpSplit) {
  // The decode variant at M <= 8, and at BM 16 up to M = 16 where its grid
  // is at most six workgroups an SM (M = 9 / 12 / 16;
  // ...-decode-bm16-sweep-1bff748.log, the tile it replaces in parentheses): 1536x7168 (336
  // workgroups) 11.2-11.3 us (13.4-13.6), 1536x4224 (264) 9.6-9.8 (11.5-11.6), 7168x3584 (784)
  // 15.7-15.8 (18.7-19.0), 3584x7168 (784) 16.7-16.9 (16.6-16.8); larger
  // grids lose: 7168x4608 (1008) 17.9 (17.7), 7168x4224 (1232) 19.4
  // (17.9), 8448x7168 (1848) 28.3 (21.2); so does short K (7168x768, BK
  // 256: 8.6 against 7.9-8.5). Up to M = 32 in two BM 16 row tiles, which
  // convert every weight twice, only where that grid is one wave of four a
  // SM (1536x4224 M = 24 / 32: 528 workgroups, 10.6 / 10.7 us against
  // 11.8-11.9 / 11.6-11.8; 1536x7168 (672) 15.2 / 15.4 against 13.0,
  // 7168x3584 (1568) 20.4 / 20.5 against 17.0-17.2;
  // ...-decode-bm16-m32-sweep-ad4c3b4.log).
  if (m <= 8 && warpSplit)
    if (std::optional<GemmA4W4Tile> t = sm90WarpSplitTile(n, k)) {
      // Past one wave of its workgroups (~21 warps an SM at 96 registers),
      // three or four decode warpgroups a workgroup did as well at M = 1
      // and 0.5-0.7 us better at M = 8: 7168x1536 8.2 / 8.9 us (8.2 / 8.4),
      // 16384x768 8.0 / 8.7 (7.9 / 8.0); other tiles lost to it there:
      // 16384x1024 8.7 / 9.3 (10.6 / 11.5), 32768x512 8.2 / 8.7 (8.9 /
      // 9.1), 7168x2048 9.0 / 9.8 (9.9 / 10.3)
      // (docs/results/2026-12-03-h200-warp-split-table-f409a7ee2e6a.log).
      std::optional<GemmA4W4Tile> d = sm90DecodeTile(n, k);
      if (n / 32 <= 21 / t->warpSplitK * kSm90Sms || !d || d->decodeGroups < 3)
        return *t;
    }
  if (m <= 32)
    if (std::optional<GemmA4W4Tile> t = sm90DecodeTile(n, k)) {
      if (m <= 8)
        return *t;
      // Short K's warpgroups at BM 16 up to M = 16 where the N tiles fit one
      // workgroup a SM (96 registers a thread), M = 12 / 16 against the rule
      // before (...-decode-groups-sweep-0e70b78.log): 7168x1024 (four) 7.8 /
      // 7.9 us (9.8 / 9.7), 7168x1536 (four) 9.6 / 9.6 (11.5 / 11.4),
      // 4096x1024 (four) 7.1 / 7.0 (8.6 / 8.6), 7168x512 (two) 6.1 / 6.1 (8.5
      // / 8.5).
      if (t->decodeGroups > 1 && m <= 16 && n / t->bn <= kSm90Sms) {
        t->bm = 16;
        return *t;
      }
      const int64_t grid = n / t->bn * t->splitK * ((m + 15) / 16);
      if (k >= 2048 && grid <= (m <= 16 ? 6 : 4) * kSm90Sms) {
        t->bm = 16;
        return *t;
      }
    }
  // Few N tiles the decode variant does not take keep the inline BM 16 up
  // to M = 16 (1536x7168 M = 16, before the decode variant took it: 13.2 us
  // against 14.1 for 8 splits of the above on 6 stages).
  if (m > 8 && m <= 32 && k >= 2048 && (n >= 4096 || m > 16))
    return sm90SmallBatchTile(n, k, m);
  // Small tiles and split-K while the output tiles leave SMs idle; from M
  // = 33 BM 128 (two warpgroups) on the dequantized-once activations, the
  // weights converted once per 128 tokens and split over K where the tiles
  // are few. (Large N once took BM 32 up to M = 127, 2026-11-30 sweeps;
  // today's kernels at M = 48-96: 9216x7168 68.0-69.3 us -> 42.1-43.0,
  // 7168x4608 32.7-46.2 -> 22.1-22.5, 7168x3584 / 7168x4224 M = 64 28.5 /
  // 24.2 -> 19.8 / 21.3, 3584x7168 20.1 -> 20.0, 7168x768 (BN 64) 10.8-13.3
  // -> 8.8-9.4; ...-mid-m-bench-7067eee.log, ...-bm128-mid-m-sweep-7067eee.log.)
  GemmA4W4Tile t;
  t.bm = m <= 8 ? 8 : m <= 32 ? 16 : 128;
  // Quantizing inline costs every one of the N/128 workgroup columns the
  // whole activation tile; quantize once instead from M = 32 (K >= 2048)
  // and for every BM 128 tile (7168x768 M = 48 inline at BM 128: 24.1 us,
  // on the image 8.9; ...-mid-m-bench-4b21be3.log, ...-bm128-mid-m-sweep-7067eee.log).
  t.preQuantize = t.bm == 128 || (m >= 32 && k >= 2048);
  const int64_t sms = kSm90Sms;
  int64_t tiles = (n / 128) * ((m + t.bm - 1) / t.bm), steps = k / 128;
  bool shortK = k < 2048; // the reduction only pays off when K is long
  if (t.bm == 128 && t.preQuantize) {
    // On the image, BM 256 feeds each converted weight fragment to twice
    // the tokens: ~5 % less time per FLOP at equal waves, but half the
    // tiles. Taken when its tiles fill at least 3/4 of a wave and its
    // rounds of tiles, at 2 x 0.95 the time each, beat BM 128's (the
    // sweep's winners: 8448x7168 M = 512 / 1024 / 2048, 7168x4224 M = 512
    // / 1024, 7168x768 M = 512; not 7168x4224 / 7168x768 M = 2048 or
    // 1536x7168; ...-bm256-sweep-*.log).
    const int64_t tiles256 = (n / 128) * ((m + 255) / 256);
    auto rounds = [&](int64_t t) { return (t + sms - 1) / sms; };
    // Or BM 256 on the first rows, as many waves of them as pay, and the
    // rest as this table picks for them, in a second launch (a BM 256
    // round measured 1.8 BM 128 rounds, the launch ~0.15 of one:
    // 7168x4224 M = 2048: 1792 + 256 rows; ...-split-m-*.log). In 20ths
    // of a BM 128 round, taken when 5 % better than the better of BM 128
    // and BM 256 alone.
    const int64_t alone = std::min(20 * rounds(tiles), 38 * rounds(tiles256));
    int64_t bestSplit = 0, bestCost = alone * 19 / 20;
    for (int64_t head = 256; !shortK && head < m; head += 256) {
      const int64_t headTiles = (n / 128) * (head / 256);
      const int64_t restTiles = (n / 128) * ((m - head + 127) / 128);
      const int64_t cost = 36 * rounds(headTiles) + 20 * rounds(restTiles) + 3;
      if (4 * headTiles >= 3 * sms && cost < bestCost) {
        bestSplit = head;
        bestCost = cost;
      }
    }
    if (bestSplit) {
      t.bm = 256;
      t.splitM = bestSplit;
      return t;
    }
    if (4 * tiles256 >= 3 * sms && 19 * rounds(tiles256) < 10 * rounds(tiles)) {
      t.bm = 256;
      return t;
    }
  }
  if (t.bm == 128) {
    // One workgroup per SM; up to 8 splits sum in a cluster
    // (Sm90Pipeline.h), splits need not divide the K steps. Time ~ waves
    // x (K steps of the longest split + ~4 steps of prologue, epilogue
    // and reduction), the smaller split on ties: this reproduces the
    // sweep's winners (1536x7168: 8 splits at M <= 128, 2 at M = 512 and
    // 2048; 8448x7168 M = 128: 2; none for the larger grids;
    // ...-cluster-splitk-sweep-28d54bb.log) and splits 7168x4224 M = 128's
    // 33 steps in two (one wave of 17 instead of two of 11).
    if (shortK) {
      // Few K steps per tile: a persistent grid hides each tile's first
      // copies behind the previous tile (7168x768 M = 512 / 2048: 19.0 /
      // 51.8 -> 18.0 / 45.6 us; longer K gains nothing measurable:
      // ...-persistent-sweep-53ed2ea.log).
      // (It issues the next tile's first S - 1 steps from inside a tile.)
      const int64_t lookAhead = sm90::sharedLayout(128, 128, true, 0, true).stages - 1;
      t.persistent = t.preQuantize && steps <= 8 && steps >= lookAhead && tiles > sms;
      return t;
    }
    // One row block of few N tiles: BN 64 tiles in clusters of 4 splits on
    // 4 stages (1536x7168 M = 128: 16.3 us against 16.4-16.9 for BN 128 x 8
    // splits, ...-1536x7168-m128-sweep-aef04d1.log; 1536x4224 M = 128: 12.8
    // against 14.8-15.1 for BN 128 x 4-8, ...-model-shapes-sweep-59e28d8.log).
    if (m > 64 && m <= 128 && n / sm90::kNarrowTileRows * 4 <= sms && steps >= 8) {
      t.bn = sm90::kNarrowTileRows;
      t.splitK = 4;
      t.stages = 4;
      return t;
    }
    // More than a round of tiles whose last round is at most half full (at
    // least half a round of SM time idle): stream-K evens the rounds out
    // (9216x7168 M = 512, 288 tiles: 103.8 us against 121.3-124.3 for 1-2
    // splits, BM 256 132.7-147.4, BM 192 124.4; ...-model-shapes-sweep-59e28d8.log).
    // With whole or mostly full rounds it loses by 2-25 % at the seven
    // shapes tried (...-stream-k-sweep-7067eee.log).
    const int64_t rest = tiles % sms, rounds = (tiles + sms - 1) / sms;
    if (tiles > sms && rounds <= 4 && rest != 0 && 2 * rest <= sms) {
      t.streamK = true;
      return t;
    }
    const int64_t overheadSteps = 4;
    auto cost = [&](int64_t s) {
      return (tiles * s + sms - 1) / sms * ((steps + s - 1) / s + overheadSteps);
    };
    for (int64_t s = 2; s <= sm90::kMaxClusterSplits; ++s)
      if (steps / s >= 2 && cost(s) < cost(t.splitK))
        t.splitK = s;
    return t;
  }
  if (tiles <= sms && !(shortK && tiles >= sms / 2)) {
    // ~4 workgroups per SM.
    int64_t perSm = 4;
    t.splitK = evenSplit(steps, std::min<int64_t>((perSm * sms + tiles - 1) / tiles, 16));
  }
  return t;
}

GemmA4W4Tile selectGemmA4W4Tile(Arch arch, int64_t n, int64_t k, int64_t m, bool warpSplit) {
  if (arch == Arch::SM90A) {
    for (const MeasuredTile &e : kSm90Measured)
      if (e.n == n && e.k == k && m >= e.mMin && m <= e.mMax && (warpSplit || !e.tile.warpSplitK))
        return e.tile;
    GemmA4W4Tile t = sm90RuleTile(n, k, m, warpSplit);
    // Short K and at most half a wave of workgroups: BN 64 tiles put twice
    // the SMs on the weights, each converting half the rows (7168x768
    // M <= 128: 8-17 % faster; with long K split-K fills the SMs instead;
    // ...-bn64-sweep-32a34fd.log).
    const int64_t workgroups = n / 128 * ((m + t.bm - 1) / t.bm) * t.splitK;
    if (k < 2048 && t.bm <= 128 && !t.twoWarpgroups && !t.streamK && t.splitM == 0 &&
        !t.warpSplitK && 2 * workgroups <= kSm90Sms)
      t.bn = sm90::kNarrowTileRows;
    return t;
  }
  // gfx950/gfx1250: BM64 from the M where seed 000 measured it faster.
  int64_t threshold = 512;
  if (n == 8448 && k == 7168)
    threshold = 128;
  else if (n == 1536 && k == 7168)
    threshold = 2048;
  return {m >= threshold ? 64 : 16, 1};
}

} // namespace mxfp4
