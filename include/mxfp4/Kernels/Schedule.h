//===- Schedule.h - Every scheduling choice of a kernel ----------*- C++ -*-===//
//
// A Schedule says how a kernel computes what its problem (op, target, N, K,
// layouts, activation, epilogue) asks for: the tile, the K split, the
// pipeline depth, and the variants of the sm_90a back end. It is one
// struct and one table of its fields (kScheduleFields). The table is what
// the canonical kernel name, its parser, mxfp4-dump's flags and the
// `#mxtile.schedule` attribute's parameters come from or are checked
// against, so a new field is one row here plus its lowering.
//
// Legality: verifyScheduleFields checks what a field allows on its own;
// verifyKernelSpec (KernelSpec.h) is the one place that decides whether a
// schedule is legal for a problem on a target. The attribute's verifier
// and the lowerings call them; nothing else decides.
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_KERNELS_SCHEDULE_H
#define MXFP4_KERNELS_SCHEDULE_H

#include "mxfp4/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mxfp4 {

struct Schedule {
  /// The output tile of a workgroup: BM rows (tokens) by BN columns, over
  /// K steps of BK.
  int64_t bm = 16, bn = 256, bk = 256;
  /// Split-K: workgroups per output tile, each over K / splitK (sm_90a).
  int64_t splitK = 1;
  /// sm_90a GEMMs: every weight scale is below 128 (known when the weights
  /// are prepared; real checkpoints), so one multiply dequantizes a weight
  /// pair instead of two.
  bool foldedScales = false;
  /// sm_90a GEMMs: the number of TMA stages (K steps in flight), 0 for the
  /// tile's default (Kernels/Sm90Pipeline.h). Fewer stages can let two
  /// workgroups share an SM.
  int64_t stages = 0;
  /// sm_90a GEMMs on the activation image (gemm_qdqa4w4) below BM 128: two
  /// warpgroups instead of one, each warp converting 16 weight rows instead
  /// of 32 (as BM 128 does).
  bool twoWarpgroups = false;
  /// sm_90a gemm_a4w4 (inline quantization) below BM 128, for decode: each
  /// warp reads its weights straight from global memory into registers,
  /// K steps ahead, and the workgroup quantizes the activations of all its
  /// K steps into shared memory first, so the K loop has no barrier, no
  /// copies and no quantization.
  bool decode = false;
  /// The decode variant with G > 1 warpgroups per workgroup, which split
  /// the workgroup's K steps among themselves (each quantizes and runs its
  /// own, as a workgroup of one would) and sum their partial tiles in
  /// shared memory in warpgroup order: one epilogue (and one split-K
  /// arrival) per G. Bit for bit the same tile at G x the split-K with one
  /// warpgroup, when split-K is 1.
  int64_t decodeGroups = 1;
  /// sm_90a gemm_a4w4 at BM 8 (decode, M <= 8), BN 16 or 32: W warps per
  /// workgroup split the K loop among themselves, each streaming its
  /// weights from global memory into registers and quantizing its own
  /// tokens' blocks there, with per-warp mma.sync m16n8k16 (no warpgroup
  /// waits, no shared memory in the loop); the partial tiles meet in shared
  /// memory, summed in warp order. No split-K. 0: not this variant.
  int64_t warpSplitK = 0;
  /// The streamed activation image (sm_90a, Ops/GemmA4W4.cpp): qdq_mxfp4
  /// and the gemm_qdqa4w4 after it run at the same time, the GEMM copying
  /// each (128-row block, 128-K chunk) of the image once the quantizer's
  /// workgroups have written it and counted themselves in a flag per piece
  /// (the kernels' argument after M). qdq_mxfp4: S >= 1, a grid of
  /// workgroups looping over BM x 128 pieces in the order the GEMM's S
  /// splits read them (one K step of every split, then the next). The
  /// GEMM: the quantizer's BM (8, 16 or 32), which says how many pieces
  /// make a block. 0: not streamed.
  int64_t imageStream = 0;
  /// sm_90a gemm_qdqa4w4 without split-K: a persistent grid, one or two
  /// workgroups per SM, each looping over output tiles; its TMA stages
  /// receive the next tile's first K steps while it finishes one, so no
  /// tile waits for its first copies.
  bool persistent = false;
  /// sm_90a gemm_qdqa4w4 without split-K, BM 128 or 256: stream-K. One
  /// workgroup per SM; the waves of whole tiles that fill the SMs go one
  /// tile per workgroup, the tiles left over are split evenly by their
  /// (tile, K step) iterations, so a tile's K steps may be split between
  /// consecutive workgroups; partial tiles are summed in K order through an
  /// f32 workspace by the last of them to finish. No wave is left part
  /// empty.
  bool streamK = false;

  bool operator==(const Schedule &o) const;
  bool operator!=(const Schedule &o) const { return !(*this == o); }
};

/// How a field appears in the canonical kernel name.
enum class FieldForm : uint8_t {
  /// Always, after K: `_<token><value>` ("_bm16").
  Number,
  /// After the epilogue when set: `_<token>` ("_fold").
  Flag,
  /// After the epilogue when not its default: `_<token><value>` ("_st3").
  Count,
  /// Appended to the previous field's token when not its default ("_dec3":
  /// decode with 3 groups).
  Suffix,
};

/// One field of Schedule: where it lives and how every front end spells it.
struct ScheduleField {
  /// The name token (see FieldForm).
  std::string_view token;
  FieldForm form;
  /// The `#mxtile.schedule` parameter, also the key in mxfp4-bench's JSON.
  std::string_view param;
  /// The flag of mxfp4-dump (`--<flag>=`).
  std::string_view flag;
  /// The member: a number or a flag (exactly one is set).
  int64_t Schedule::*number = nullptr;
  bool Schedule::*boolean = nullptr;
  int64_t defaultValue = 0;
  std::string_view help;

  int64_t get(const Schedule &s) const { return number ? s.*number : int64_t(s.*boolean); }
  void set(Schedule &s, int64_t v) const {
    if (number)
      s.*number = v;
    else
      s.*boolean = v != 0;
  }
};

/// Every field, in the order of the kernel name (and of the attribute).
inline constexpr ScheduleField kScheduleFields[] = {
    {"bm", FieldForm::Number, "bm", "bm", &Schedule::bm, nullptr, 16, "M tile (tokens)"},
    {"bn", FieldForm::Number, "bn", "bn", &Schedule::bn, nullptr, 256, "N tile (output columns)"},
    {"bk", FieldForm::Number, "bk", "bk", &Schedule::bk, nullptr, 256, "K step"},
    {"ks", FieldForm::Number, "split_k", "split-k", &Schedule::splitK, nullptr, 1,
     "split-K: workgroups per output tile (sm_90a)"},
    {"fold", FieldForm::Flag, "folded_scales", "folded-scales", nullptr, &Schedule::foldedScales, 0,
     "weight scales all below 128: one multiply dequantizes a pair (sm_90a)"},
    {"st", FieldForm::Count, "stages", "stages", &Schedule::stages, nullptr, 0,
     "TMA stages, 0: the tile's default (sm_90a)"},
    {"wg2", FieldForm::Flag, "two_warpgroups", "two-warpgroups", nullptr, &Schedule::twoWarpgroups,
     0, "gemm_qdqa4w4 below BM 128: two warpgroups (sm_90a)"},
    {"dec", FieldForm::Flag, "decode", "decode", nullptr, &Schedule::decode, 0,
     "gemm_a4w4 below BM 128: the decode variant (sm_90a)"},
    {"", FieldForm::Suffix, "decode_groups", "decode-groups", &Schedule::decodeGroups, nullptr, 1,
     "the decode variant's warpgroups splitting K, 1 to 4"},
    {"wk", FieldForm::Count, "warp_split_k", "warp-split-k", &Schedule::warpSplitK, nullptr, 0,
     "gemm_a4w4 at BM 8, BN 16 or 32: warps splitting K with mma.sync (sm_90a)"},
    {"is", FieldForm::Count, "image_stream", "image-stream", &Schedule::imageStream, nullptr, 0,
     "streamed activation image: on qdq_mxfp4 the GEMM's split count, on gemm_qdqa4w4 the "
     "quantizer's rows per piece (sm_90a)"},
    {"ps", FieldForm::Flag, "persistent", "persistent", nullptr, &Schedule::persistent, 0,
     "gemm_qdqa4w4 without split-K: a persistent grid (sm_90a)"},
    {"sk", FieldForm::Flag, "stream_k", "stream-k", nullptr, &Schedule::streamK, 0,
     "gemm_qdqa4w4 of BM 128 or 256 without split-K: stream-K (sm_90a)"},
};

/// The field whose attribute parameter (or JSON key) is `param`.
const ScheduleField *findScheduleField(std::string_view param);

/// The schedule as a JSON object, one key per field (its `param`), in the
/// table's order: `{"bm": 8, "bn": 64, ..., "decode": true, ...}`.
std::string toJson(const Schedule &s);

/// What each field allows on its own, whatever the problem and target:
/// positive tiles and split, stage count 0 or 2..8, decode groups 1..4 and
/// only with the decode variant, non-negative counts, at most one of a
/// persistent grid and stream-K. verifyKernelSpec runs it first.
Error verifyScheduleFields(const Schedule &s);

} // namespace mxfp4

#endif // MXFP4_KERNELS_SCHEDULE_H
