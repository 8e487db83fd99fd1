//===- GemmA4W4TileTable.cpp - The tile table of the dense A4W4 GEMM ------===//
//
// selectGemmA4W4Tile: per target, shape and M, the tile gemmA4W4 runs
// unless its options force another. On sm_90a, measured winners for the
// seed's and the models' shapes, then rules (decode, small batches, BM
// 128 / 192 / 256 by the waves they fill) for everything else. The
// comparisons below were measured on the H200 with mxfp4-bench, the tiles
// forced by its flags (scripts/device-sweep.sh; docs/Performance.md).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/Sm90Pipeline.h"
#include "mxfp4/Kernels/TargetInfo.h"
#include "mxfp4/Ops/GemmA4W4.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace mxfp4 {

namespace {
/// A measured winner for one shape and range of M on sm_90a, over the rule
/// below (mxfp4-bench sweeps of --bm= --split-k= --bn= --stages=
/// --warpgroups= --prequant=, the rule's tile in the same runs). Only
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
// The decode variant at BN 64 beat the entries it replaced, in the same
// runs, at 7168x4224, 1536x7168 and 7168x768 M = 1 / 8. At BN 128
// (8448x7168, 8 splits) it only matched the K loop; at BN 64 x 14 splits
// (4 steps each, 1848 workgroups at seven a SM) it beat the rule's BN 128
// K loop x 8 splits (mxfp4-bench --decode= --bn= --split-k=).
constexpr MeasuredTile kSm90Measured[] = {
    {8448, 7168, 1, 8, narrow(decode({8, 14, 0, false}))},
    // 8 < M <= 32 on the image in two warpgroups: faster at M = 9 / 16 / 20 /
    // 32 than the inline BM 16 rule (at M = 20 / 32 also than BM 128 x 2).
    {8448, 7168, 9, 16, {16, 6, 0, true, 4, true}},
    {8448, 7168, 17, 32, {32, 4, 0, true, 5, true}},
    {8448, 7168, 33, 64, {128, 2, 0, true}}, // M = 64: faster than the rule's
    // Persistent BM 128 (whole rounds of 528 / 1056 tiles) beat the rule's
    // BM 256 at M = 1024 and 2048 (--persistent= --quantizer-bm=).
    {8448, 7168, 1024, 1024, {128, 1, 0, true, 0, false, true}},
    {8448, 7168, 2048, 2048, {128, 1, 0, true, 0, false, true}},
    // M = 24 / 32: faster than one warpgroup x 7 splits.
    {7168, 7168, 17, 32, {32, 4, 0, true, 5, true}},
    {7168, 4224, 1, 8, narrow(decode({8, 11, 0, false}))},
    // M = 12 / 16, M = 24 / 32 and M = 128: each faster than the rule's tile.
    {7168, 4224, 9, 16, {16, 3, 0, true, 6, true}},
    {7168, 4224, 17, 32, narrow({32, 3, 0, true})},
    {7168, 4224, 128, 128, narrow({128, 1, 0, true, 4})},
    {1536, 7168, 1, 8, narrow(decode({8, 14, 0, false}))},
    // Two warpgroups, 8 stages: at M = 24 / 32 faster than on the default 4
    // and than the inline rule.
    {1536, 7168, 17, 32, {32, 8, 0, true, 8, true}},
    // BN 64: 56 tiles of 128 rows leave 76 SMs idle; 112 of 64 rows
    // (--bn=64 against the BN 128 entry).
    // Six warps of one chunk each (the rule's warp-split tile), M = 1 / 8:
    // faster in the same runs than the entry it replaces, three decode
    // warpgroups of two K steps (--warp-split-k=0), which in turn beat one
    // warpgroup of three BK 256 steps (--decode=).
    {7168, 768, 1, 8, warpSplit(6)},
    // M = 16 / 24 / 32: faster than the rule's tiles.
    {7168, 768, 9, 32, narrow({32, 1, 256, true, 6})},
    {7168, 768, 128, 128, narrow({128, 1, 0, true})}, // faster than the rule's
    // 4 stages instead of 5: faster in the same runs (--stages=).
    {1536, 7168, 512, 512, {128, 2, 0, true, 4}},
    // BN 192 x BM 128 on 4 stages: 8 x 16 tiles, 128 of the 132 SMs, each
    // converted weight fragment feeding 128 tokens as at BN 128 but a step's
    // activations feeding 1.5x the MMAs: faster than BM 192 x BN 128 (the
    // entry before) in the same runs, and than 3 or 5 stages.
    {1536, 7168, 2048, 2048, wide({128, 1, 0, true, 4})},
    // M = 1024: BN 192 x 2 splits (a cluster of two), faster than the rule's
    // tile and than 1 or 4 splits.
    {1536, 7168, 1024, 1024, wide({128, 2, 0, true, 4})},
    // The model shapes: 1536x4224 M = 2048 faster than the rule's stream-K
    // (at M = 1024 slower, so only 2048), 9216x7168 M = 2048 faster than the
    // rule's tile.
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
/// of them fit (at most a split's steps + 1). Measured (--bm= --split-k=
/// --stages= --warpgroups=): one wave at M = 24 beat two a SM at 4096x4096
/// (4 splits against 8) and 2048x7168 (8 against 14), and 8 stages beat 5
/// at 1024x8192 (16 splits; 8 splits of 8 steps did as well there, but 2
/// splits of 8 steps lost to 4 of 4 at 4096x2048 M = 16). Two a SM:
/// 4096x14336 (28 steps a wave) 7 splits beat one wave; 8448x7168 (M = 16
/// / 20) and 7168x4224 (M = 16) come close to the best forced tile and
/// well ahead of the inline BM 16 rule.
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
/// The model shapes of `mxfp4-bench --preset=model-dense`, M = 1 and 8: each
/// faster than the K loop the rule took before (9216x7168 14 splits, also
/// ahead of 7 / 8 / 28; 7168x4608 9 or 12; 3584x7168 14; 7168x3584 7;
/// 1536x4224 11, also ahead of 3). No even split (a prime count of steps):
/// none.
/// Short K whose 128-K steps G = 4, 3 or 2 warpgroups can share two or
/// three each, unsplit: G warpgroups a workgroup, four only where the N
/// tiles fit one a SM and three where they fit two (80 registers a
/// thread), M = 1 / 8, against the rule before in the same run (--decode=G):
/// faster at 7168x512 (G = 2), 7168x768 (G = 3), 7168x1024, 7168x1536,
/// 2048x1536, 4096x1024 (G = 4) and 32768x512 (G = 2); not at 24576x1536
/// (384 tiles: G = 2 of six steps lost to the rule's 3 splits).
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
/// where those warps fit about one wave (at most 48 an SM). M = 1 / 8, BN
/// 32, against the decode rule below in the same runs (the table with and
/// without it, --warp-split-k=0): faster at 7168x512, 7168x1024, 4096x1024,
/// 2048x1536, 2048x2048, 4096x640 and 7168x768. Where warps take several
/// chunks in turn it loses (each chunk's quantization and MMAs are one
/// warp's chain): 8448x7168 8 warps, 7168x4224 11 warps, 1536x4096 16
/// warps; so does a grid of several waves: 24576x1536 (768 workgroups of
/// 12 warps).
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
  // is at most six workgroups an SM (M = 9 / 12 / 16, against the tile it
  // replaces): faster at 1536x7168 (336 workgroups), 1536x4224 (264) and
  // 7168x3584 (784), a tie at 3584x7168 (784); larger grids lose:
  // 7168x4608 (1008), 7168x4224 (1232), 8448x7168 (1848); so does short K
  // (7168x768, BK 256). Up to M = 32 in two BM 16 row tiles, which convert
  // every weight twice, only where that grid is one wave of four a SM
  // (1536x4224 M = 24 / 32, 528 workgroups, wins; 1536x7168 (672) and
  // 7168x3584 (1568) lose).
  if (m <= 8 && warpSplit)
    if (std::optional<GemmA4W4Tile> t = sm90WarpSplitTile(n, k)) {
      // Past one wave of its workgroups (~21 warps an SM at 96 registers),
      // three or four decode warpgroups a workgroup did as well at M = 1
      // and better at M = 8 (7168x1536, 16384x768); other tiles lost to it
      // there: 16384x1024, 32768x512, 7168x2048 (the table with and
      // without it, --warp-split-k=0).
      std::optional<GemmA4W4Tile> d = sm90DecodeTile(n, k);
      if (n / 32 <= 21 / t->warpSplitK * kSm90Sms || !d || d->decodeGroups < 3)
        return *t;
    }
  if (m <= 32)
    if (std::optional<GemmA4W4Tile> t = sm90DecodeTile(n, k)) {
      if (m <= 8)
        return *t;
      // Short K's warpgroups at BM 16 up to M = 16 where the N tiles fit one
      // workgroup a SM (96 registers a thread): at M = 12 / 16 faster than
      // the rule before at 7168x1024, 7168x1536, 4096x1024 (four) and
      // 7168x512 (two).
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
  // to M = 16 (at 1536x7168 M = 16, before the decode variant took it, it
  // beat 8 splits of the above on 6 stages).
  if (m > 8 && m <= 32 && k >= 2048 && (n >= 4096 || m > 16))
    return sm90SmallBatchTile(n, k, m);
  // Small tiles and split-K while the output tiles leave SMs idle; from M
  // = 33 BM 128 (two warpgroups) on the dequantized-once activations, the
  // weights converted once per 128 tokens and split over K where the tiles
  // are few. (Large N once took BM 32 up to M = 127; with today's kernels
  // BM 128 is faster at M = 48-96 at 9216x7168, 7168x4608, 7168x3584,
  // 7168x4224 and 7168x768 (BN 64), a tie at 3584x7168.)
  GemmA4W4Tile t;
  t.bm = m <= 8 ? 8 : m <= 32 ? 16 : 128;
  // Quantizing inline costs every one of the N/128 workgroup columns the
  // whole activation tile; quantize once instead from M = 32 (K >= 2048)
  // and for every BM 128 tile (7168x768 M = 48 inline at BM 128 took far
  // longer than on the image: --prequant=).
  t.preQuantize = t.bm == 128 || (m >= 32 && k >= 2048);
  const int64_t sms = kSm90Sms;
  int64_t tiles = (n / 128) * ((m + t.bm - 1) / t.bm), steps = k / 128;
  bool shortK = k < 2048; // the reduction only pays off when K is long
  if (t.bm == 128 && t.preQuantize) {
    // On the image, BM 256 feeds each converted weight fragment to twice
    // the tokens: modeled as 0.95 the time per FLOP at equal waves, but
    // half the tiles. Taken when its tiles fill at least 3/4 of a wave and its
    // rounds of tiles, at 2 x 0.95 the time each, beat BM 128's (the
    // sweep's winners: 8448x7168 M = 512 / 1024 / 2048, 7168x4224 M = 512
    // / 1024, 7168x768 M = 512; not 7168x4224 / 7168x768 M = 2048 or
    // 1536x7168; --bm=256).
    const int64_t tiles256 = (n / 128) * ((m + 255) / 256);
    auto rounds = [&](int64_t t) { return (t + sms - 1) / sms; };
    // Or BM 256 on the first rows, as many waves of them as pay, and the
    // rest as this table picks for them, in a second launch (modeled as a
    // BM 256 round costing 1.8 BM 128 rounds and the launch ~0.15 of one,
    // fitted to --split-m= runs; 7168x4224 M = 2048: 1792 + 256 rows). In 20ths
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
    // 2048; 8448x7168 M = 128: 2; none for the larger grids; --split-k=)
    // and splits 7168x4224 M = 128's 33 steps in two (one wave of 17
    // instead of two of 11).
    if (shortK) {
      // Few K steps per tile: a persistent grid hides each tile's first
      // copies behind the previous tile (faster at 7168x768 M = 512 / 2048;
      // longer K gains nothing measurable: --persistent=).
      // (It issues the next tile's first S - 1 steps from inside a tile.)
      const int64_t lookAhead = sm90::sharedLayout(128, 128, true, 0, true).stages - 1;
      t.persistent = t.preQuantize && steps <= 8 && steps >= lookAhead && tiles > sms;
      return t;
    }
    // One row block of few N tiles: BN 64 tiles in clusters of 4 splits on
    // 4 stages (at 1536x7168 and 1536x4224 M = 128 faster than BN 128 x 4-8
    // splits).
    if (m > 64 && m <= 128 && n / sm90::kNarrowTileRows * 4 <= sms && steps >= 8) {
      t.bn = sm90::kNarrowTileRows;
      t.splitK = 4;
      t.stages = 4;
      return t;
    }
    // More than a round of tiles whose last round is at most half full (at
    // least half a round of SM time idle): stream-K evens the rounds out
    // (9216x7168 M = 512, 288 tiles: faster than 1-2 splits, BM 256 and BM
    // 192). With whole or mostly full rounds it loses at the seven shapes
    // tried (--stream-k=).
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
    // the SMs on the weights, each converting half the rows (faster at
    // 7168x768 M <= 128; with long K split-K fills the SMs instead; --bn=).
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
  GemmA4W4Tile t{m >= threshold ? 64 : 16, 1};
  // Fewer output tiles than compute units: split K until about two
  // workgroups a CU stream weights (a workgroup streams about 17 GB/s at
  // M = 1 on MI355X, AITER's measurement: one per CU leaves most of the
  // HBM bandwidth unused), each split keeping at least two K steps, and
  // the workspace's traffic (an f32 written and read per output element
  // and split) at most the weights' bytes (K (1/2 + 1/32) per column).
  const TargetInfo &target = targetInfo(arch);
  const int64_t tiles = gemmWeightRows(arch, n) / target.defaultBn * ((m + t.bm - 1) / t.bm);
  const int64_t steps = gemmWeightK(arch, k) / target.bkFor(gemmWeightK(arch, k));
  const int64_t byTraffic = k * 17 / (256 * m);
  if (tiles < target.computeUnits)
    t.splitK = std::max<int64_t>(1, std::min({(2 * target.computeUnits + tiles - 1) / tiles,
                                              steps / 2, byTraffic, target.maxSplitK}));
  return t;
}

} // namespace mxfp4
