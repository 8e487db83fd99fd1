//===- Layout.cpp - Preshuffled weight and scale layouts ------------------===//
//
// The offset functions are the closed forms of AITER's view/permute shuffles
// (semantics.md 3.1, 3.2, 3.4); tests check them against the permutations.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Format/Layout.h"
#include "mxfp4/Format/Sm90WeightBits.h"
#include "mxfp4/Support/Checked.h"
#include "mxfp4/Support/Parallel.h"

namespace mxfp4 {

namespace {
/// Everything the generic shuffles need to know about one layout.
struct WeightLayoutInfo {
  WeightLayout id;
  const char *name;
  int64_t rowMultiple;  ///< n must be a multiple of this
  int64_t byteMultiple; ///< kBytes must be a multiple of this
  int64_t (*offset)(int64_t kBytes, int64_t row, int64_t kb);
};

struct ScaleLayoutInfo {
  ScaleLayout id;
  const char *name;
  int64_t rowPad;   ///< rows padded to a multiple of this
  int64_t blockPad; ///< K-blocks padded to a multiple of this
  int64_t (*offset)(StorageShape storage, int64_t row, int64_t kblock);
};
} // namespace

static int64_t rowMajorWeight(int64_t kBytes, int64_t row, int64_t kb) { return row * kBytes + kb; }

// shuffle_weight(layout=(16,16)): view (N/16, 16, Kb/32, 2, 16), permute (0,2,3,1,4).
static int64_t gfx950Weight(int64_t kBytes, int64_t row, int64_t kb) {
  return (row / 16) * 16 * kBytes + (kb / 32) * 512 + ((kb % 32) / 16) * 256 + (row % 16) * 16 +
         (kb % 16);
}

// Per 16 rows x 128 K: [half = row%16/8][lane = (row%8)*4 + kquarter][16 bytes].
static int64_t sm90Weight(int64_t kBytes, int64_t n, int64_t kb) {
  int64_t chunks = kBytes / 64;
  int64_t nt = n / 16, h = (n % 16) / 8, g = n % 8, kc = kb / 64, t = (kb % 64) / 16, b = kb % 16;
  return ((nt * chunks + kc) * 2 + h) * 512 + (g * 4 + t) * 16 + b;
}

static int64_t rowMajorScale(StorageShape s, int64_t row, int64_t kblock) {
  return row * s.cols + kblock;
}

// mx_scale_shuffle_idx: view (rows/32, 2, 16, cols/8, 2, 4), permute (0,3,5,2,4,1).
static int64_t gfx950Scale(StorageShape s, int64_t x, int64_t y) {
  return (x / 32) * 32 * s.cols + (y / 8) * 256 + (y % 4) * 64 + (x % 16) * 4 + ((y % 8) / 4) * 2 +
         (x % 32) / 16;
}

// shuffle_scale_n32k4: per 32 rows, dword (kblock/4, row%32) holds kblocks 4j..4j+3.
static int64_t gfx1250Scale(StorageShape s, int64_t r, int64_t k) {
  return (r / 32) * 32 * s.cols + (k / 4) * 128 + (r % 32) * 4 + (k % 4);
}

// Per 32 rows x 128 K: dword (row%8)*4 + kblock%4, byte 2*(row%32/16) + row%16/8.
static int64_t sm90Scale(StorageShape s, int64_t n, int64_t j) {
  int64_t chunks = s.cols / 4;
  int64_t nw = n / 32, i = (n % 32) / 16, h = (n % 16) / 8, g = n % 8, kc = j / 4, t = j % 4;
  return (nw * chunks + kc) * 128 + (g * 4 + t) * 4 + i * 2 + h;
}

static constexpr WeightLayoutInfo kWeightLayouts[] = {
    {WeightLayout::RowMajor, "rowmajor", 1, 1, rowMajorWeight},
    {WeightLayout::Gfx950Mfma16, "gfx950-mfma16", 16, 32, gfx950Weight},
    {WeightLayout::Sm90Mma16, "sm90-mma16", 16, 64, sm90Weight},
};

static constexpr ScaleLayoutInfo kScaleLayouts[] = {
    {ScaleLayout::RowMajor, "rowmajor", 1, 1, rowMajorScale},
    {ScaleLayout::Gfx950Mfma16, "gfx950-mfma16", 32, 8, gfx950Scale},
    {ScaleLayout::Gfx1250Wmma, "gfx1250-wmma", 32, 4, gfx1250Scale},
    {ScaleLayout::Sm90Mma16, "sm90-mma16", 32, 4, sm90Scale},
};

// The tables are indexed by enum value.
static_assert(kWeightLayouts[size_t(WeightLayout::Gfx950Mfma16)].id == WeightLayout::Gfx950Mfma16);
static_assert(kScaleLayouts[size_t(ScaleLayout::Gfx950Mfma16)].id == ScaleLayout::Gfx950Mfma16);
static_assert(kScaleLayouts[size_t(ScaleLayout::Gfx1250Wmma)].id == ScaleLayout::Gfx1250Wmma);
static_assert(kWeightLayouts[size_t(WeightLayout::Sm90Mma16)].id == WeightLayout::Sm90Mma16);
static_assert(kScaleLayouts[size_t(ScaleLayout::Sm90Mma16)].id == ScaleLayout::Sm90Mma16);

static const WeightLayoutInfo &info(WeightLayout l) { return kWeightLayouts[size_t(l)]; }
static const ScaleLayoutInfo &info(ScaleLayout l) { return kScaleLayouts[size_t(l)]; }

std::string_view toString(WeightLayout layout) { return info(layout).name; }
std::string_view toString(ScaleLayout layout) { return info(layout).name; }

std::optional<WeightLayout> parseWeightLayout(std::string_view name) {
  for (const WeightLayoutInfo &l : kWeightLayouts)
    if (name == l.name)
      return l.id;
  return std::nullopt;
}

std::optional<ScaleLayout> parseScaleLayout(std::string_view name) {
  for (const ScaleLayoutInfo &l : kScaleLayouts)
    if (name == l.name)
      return l.id;
  return std::nullopt;
}

Error checkWeightShape(WeightLayout layout, int64_t n, int64_t kBytes) {
  const WeightLayoutInfo &l = info(layout);
  if (n <= 0 || kBytes <= 0)
    return errorf("weight layout %s: shape [%lld, %lld] must be positive", l.name, (long long)n,
                  (long long)kBytes);
  if (n % l.rowMultiple != 0 || kBytes % l.byteMultiple != 0)
    return errorf(
        "weight layout %s needs N %% %lld == 0 and K/2 %% %lld == 0 (K %% %lld == 0); got N = "
        "%lld, K = %llu",
        l.name, (long long)l.rowMultiple, (long long)l.byteMultiple,
        (long long)(2 * l.byteMultiple), (long long)n, 2 * (unsigned long long)kBytes);
  return Error::success();
}

int64_t weightOffset(WeightLayout layout, int64_t kBytes, int64_t row, int64_t kb) {
  return info(layout).offset(kBytes, row, kb);
}

static Expected<std::vector<uint8_t>> permuteWeight(WeightLayout layout, Span<uint8_t> w, int64_t n,
                                                    int64_t kBytes, bool inverse) {
  if (Error e = checkWeightShape(layout, n, kBytes))
    return e;
  std::optional<int64_t> bytes = checkedProduct({n, kBytes});
  if (!bytes || w.size() != size_t(*bytes))
    return errorf("weight [%lld, %lld bytes] needs %s bytes, got %zu", (long long)n,
                  (long long)kBytes, bytes ? std::to_string(*bytes).c_str() : "more than 2^63",
                  w.size());
  // sm90-mma16 also orders the bits of each stored 32-bit word
  // (Sm90WeightBits.h): after the byte permutation, or before its inverse.
  const bool sm90Bits = layout == WeightLayout::Sm90Mma16;
  auto rewordBits = [](std::vector<uint8_t> &bytes, uint32_t (*f)(uint32_t)) {
    parallelFor(int64_t(bytes.size() / 4), 1 << 14, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        uint8_t *p = bytes.data() + 4 * i;
        uint32_t v = f(uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                       uint32_t(p[3]) << 24);
        for (int b = 0; b < 4; ++b)
          p[b] = uint8_t(v >> (8 * b));
      }
    });
  };
  std::vector<uint8_t> unworded;
  if (sm90Bits && inverse) {
    unworded.assign(w.begin(), w.end());
    rewordBits(unworded, sm90UnpackWeightWord);
    w = Span<uint8_t>(unworded);
  }
  std::vector<uint8_t> out(w.size());
  auto offset = info(layout).offset;
  parallelFor(n, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r)
      for (int64_t kb = 0; kb < kBytes; ++kb) {
        int64_t logical = r * kBytes + kb, stored = offset(kBytes, r, kb);
        if (inverse)
          out[logical] = w[stored];
        else
          out[stored] = w[logical];
      }
  });
  if (sm90Bits && !inverse)
    rewordBits(out, sm90PackWeightWord);
  return out;
}

Expected<std::vector<uint8_t>> shuffleWeight(WeightLayout layout, Span<uint8_t> w, int64_t n,
                                             int64_t kBytes) {
  return permuteWeight(layout, w, n, kBytes, /*inverse=*/false);
}

Expected<std::vector<uint8_t>> unshuffleWeight(WeightLayout layout, Span<uint8_t> w, int64_t n,
                                               int64_t kBytes) {
  return permuteWeight(layout, w, n, kBytes, /*inverse=*/true);
}

StorageShape scaleStorageShape(ScaleLayout layout, int64_t rows, int64_t kBlocks) {
  const ScaleLayoutInfo &l = info(layout);
  auto alignUp = [](int64_t x, int64_t a) { return (x + a - 1) / a * a; };
  return {alignUp(rows, l.rowPad), alignUp(kBlocks, l.blockPad)};
}

int64_t scaleOffset(ScaleLayout layout, StorageShape storage, int64_t row, int64_t kblock) {
  return info(layout).offset(storage, row, kblock);
}

/// Checks `size` bytes hold [rows, kBlocks] scales: row-major, or in the
/// layout's padded storage when `stored`.
static Error checkScaleInput(ScaleLayout layout, size_t size, int64_t rows, int64_t kBlocks,
                             bool stored) {
  // Far above any real matrix, and low enough that the padding cannot wrap.
  constexpr int64_t kMaxExtent = int64_t(1) << 40;
  if (rows < 0 || kBlocks <= 0 || rows > kMaxExtent || kBlocks > kMaxExtent)
    return errorf("scale layout %s: shape [%lld, %lld] is invalid", info(layout).name,
                  (long long)rows, (long long)kBlocks);
  const StorageShape st =
      stored ? scaleStorageShape(layout, rows, kBlocks) : StorageShape{rows, kBlocks};
  std::optional<int64_t> expected = checkedProduct({st.rows, st.cols});
  if (!expected || size != size_t(*expected))
    return errorf("scale layout %s: [%lld, %lld] scales need %s bytes here, "
                  "got %zu",
                  info(layout).name, (long long)rows, (long long)kBlocks,
                  expected ? std::to_string(*expected).c_str() : "more than 2^63", size);
  return Error::success();
}

Expected<std::vector<uint8_t>> shuffleScales(ScaleLayout layout, Span<uint8_t> s, int64_t rows,
                                             int64_t kBlocks) {
  if (Error e = checkScaleInput(layout, s.size(), rows, kBlocks, /*stored=*/false))
    return e;
  StorageShape st = scaleStorageShape(layout, rows, kBlocks);
  std::vector<uint8_t> out(size_t(st.bytes()), kScalePadByte);
  auto offset = info(layout).offset;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < kBlocks; ++k)
      out[offset(st, r, k)] = s[r * kBlocks + k];
  return out;
}

bool isGfx1250MoeScaleRep(int64_t rep) { return rep == 1 || rep == 2 || rep == 4 || rep == 8; }

// AITER #4607, launch_gemm_a8w4_tdm's epilogue: out_row = (tile << 4) |
// (row_in_tile & 15), dword out_row * (K/128) R + wmma_row + (kb/4) R.
int64_t gfx1250MoeScaleOffset(int64_t rep, int64_t kBlocks, int64_t row, int64_t kblock) {
  const int64_t tileRows = 16 * rep, steps = kBlocks / 4;
  const int64_t t = row / tileRows, w = (row % tileRows) / 16, l = row % 16;
  return 4 * ((16 * t + l) * steps * rep + (kblock / 4) * rep + w) + kblock % 4;
}

Expected<std::vector<uint8_t>> shuffleGfx1250MoeScales(int64_t rep, Span<uint8_t> s, int64_t rows,
                                                       int64_t kBlocks) {
  if (!isGfx1250MoeScaleRep(rep))
    return errorf("gfx1250 MoE scales: quant_wmma_rep must be 1, 2, 4 or 8, got %lld",
                  (long long)rep);
  if (rows < 0 || rows % (16 * rep) != 0 || kBlocks <= 0 || kBlocks % 4 != 0)
    return errorf("gfx1250 MoE scales: [%lld, %lld] must have rows a multiple of %lld (16 x "
                  "quant_wmma_rep) and K-blocks a positive multiple of 4 (128-K steps)",
                  (long long)rows, (long long)kBlocks, (long long)(16 * rep));
  std::optional<int64_t> bytes = checkedProduct({rows, kBlocks});
  if (!bytes || s.size() != size_t(*bytes))
    return errorf("gfx1250 MoE scales: [%lld, %lld] needs %s bytes, got %zu", (long long)rows,
                  (long long)kBlocks, bytes ? std::to_string(*bytes).c_str() : "more than 2^63",
                  s.size());
  std::vector<uint8_t> out(s.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < kBlocks; ++k)
      out[size_t(gfx1250MoeScaleOffset(rep, kBlocks, r, k))] = s[size_t(r * kBlocks + k)];
  return out;
}

Expected<std::vector<uint8_t>> unshuffleScales(ScaleLayout layout, Span<uint8_t> s, int64_t rows,
                                               int64_t kBlocks) {
  if (Error e = checkScaleInput(layout, s.size(), rows, kBlocks, /*stored=*/true))
    return e;
  StorageShape st = scaleStorageShape(layout, rows, kBlocks);
  std::vector<uint8_t> out(size_t(rows * kBlocks));
  auto offset = info(layout).offset;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < kBlocks; ++k)
      out[r * kBlocks + k] = s[offset(st, r, k)];
  return out;
}

} // namespace mxfp4
