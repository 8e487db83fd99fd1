//===- KernelSpec.cpp - What identifies a generated kernel ----------------===//

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Kernels/Sm90Geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

namespace mxfp4 {

std::string_view toString(OpKind op) {
  switch (op) {
  case OpKind::GemmA4W4:
    return "gemm_a4w4";
  case OpKind::GemmMxA4W4:
    return "gemm_mxa4w4";
  case OpKind::QuantizeMx:
    return "quant_mxfp4";
  case OpKind::QdqMx:
    return "qdq_mxfp4";
  case OpKind::GemmQdqA4W4:
    return "gemm_qdqa4w4";
  case OpKind::MoeCount:
    return "moe_count";
  case OpKind::MoePlace:
    return "moe_place";
  case OpKind::MoeQuant:
    return "moe_quant";
  case OpKind::MoeActQuant:
    return "moe_actq";
  case OpKind::MoeReduce:
    return "moe_reduce";
  case OpKind::MoeGemm:
    return "moe_gemm";
  case OpKind::MoeCast:
    return "moe_cast";
  }
  return "invalid";
}

/// Name tokens never contain '_' (it separates fields).
static std::string_view archToken(Arch a) { return a == Arch::SM90A ? "sm90a" : toString(a); }

std::string_view toString(Activation act) {
  switch (act) {
  case Activation::None:
    return "none";
  case Activation::Silu:
    return "silu";
  case Activation::Swiglu:
    return "swiglu";
  case Activation::Situv2:
    return "situv2";
  }
  return "invalid";
}

std::string_view toString(Epilogue e) {
  switch (e) {
  case Epilogue::BF16:
    return "bf16";
  case Epilogue::BF16DumpQuant:
    return "bf16dq";
  case Epilogue::ActMx:
    return "actmx";
  case Epilogue::ActMxDebug:
    return "actmxdbg";
  case Epilogue::Scatter:
    return "scatter";
  }
  return "?";
}

unsigned activationParamCount(Activation act) {
  return act == Activation::Swiglu || act == Activation::Situv2 ? 2 : 0;
}

/// Layout names without '-' or '_': "gfx950-mfma16" -> "gfx950mfma16".
static std::string layoutToken(std::string_view name) {
  std::string s;
  for (char c : name)
    if (c != '-')
      s += c;
  return s;
}

std::string KernelSpec::name() const {
  std::string s = strCat(toString(op), "_", archToken(arch), "_n", n, "_k", k);
  for (const ScheduleField &f : kScheduleFields)
    if (f.form == FieldForm::Number)
      s += strCat("_", f.token, f.get(*this));
  s += strCat("_", toString(rounding), "_w", layoutToken(toString(weightLayout)), "_s",
              layoutToken(toString(scaleLayout)), "_a", toString(activation));
  for (unsigned i = 0; i < activationParamCount(activation); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &activationParams[i], 4);
    char hex[16];
    std::snprintf(hex, sizeof(hex), "_f%08x", bits);
    s += hex;
  }
  s += strCat("_e", toString(epilogue));
  // The variants, in the table's order; a suffix extends the field before
  // it ("_dec3"), when that one is present.
  bool previousShown = false;
  for (const ScheduleField &f : kScheduleFields) {
    const int64_t v = f.get(*this);
    bool shown = false;
    switch (f.form) {
    case FieldForm::Number:
      break;
    case FieldForm::Flag:
      if ((shown = v != 0))
        s += strCat("_", f.token);
      break;
    case FieldForm::Count:
      if ((shown = v != f.defaultValue))
        s += strCat("_", f.token, v);
      break;
    case FieldForm::Suffix:
      if ((shown = previousShown && v != f.defaultValue))
        s += strCat(v);
      break;
    }
    previousShown = shown;
  }
  return s;
}

static bool isLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
static bool isDigit(char c) { return c >= '0' && c <= '9'; }
static bool isLowerHex(char c) { return isDigit(c) || (c >= 'a' && c <= 'f'); }

/// Removes `prefix` from the front of `s` if it is there.
static bool consumeFront(std::string_view &s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix)
    return false;
  s.remove_prefix(prefix.size());
  return true;
}

/// `digits` as a number if it is canonical: 1 to 9 digits, no leading zero.
static std::optional<int64_t> canonicalNumber(std::string_view digits) {
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), isDigit) ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  int64_t v = 0;
  for (char c : digits)
    v = v * 10 + (c - '0');
  return v;
}

namespace {
/// Walks the '_'-separated tokens of a name, producing errors that quote it.
class NameParser {
public:
  explicit NameParser(std::string_view name) : name(name) {
    for (size_t begin = 0;;) {
      size_t end = name.find('_', begin);
      tokens.push_back(name.substr(begin, end == std::string_view::npos ? end : end - begin));
      if (end == std::string_view::npos)
        break;
      begin = end + 1;
    }
  }

  template <typename... Parts> Error error(const Parts &...what) const {
    std::string shown = name.size() > 160 ? strCat(name.substr(0, 160), "...") : std::string(name);
    return makeError("kernel name '", shown, "': ", what...);
  }
  bool done() const { return pos >= tokens.size(); }
  template <typename... Parts> Expected<std::string_view> next(const Parts &...what) {
    if (done())
      return error("ends early; expected ", what...);
    return tokens[pos++];
  }
  /// A token `prefix<digits>`, canonical (no leading zeros, at most 9 digits).
  Expected<int64_t> number(std::string_view prefix) {
    Expected<std::string_view> tok = next("'", prefix, "<number>'");
    if (!tok)
      return tok.takeError();
    std::string_view digits = *tok;
    std::optional<int64_t> v;
    if (!consumeFront(digits, prefix) || !(v = canonicalNumber(digits)))
      return error("expected '", prefix, "<number>' at field ", pos, ", got '", *tok, "'");
    return *v;
  }
  /// A token `prefix<word>`; returns the word.
  Expected<std::string_view> tagged(std::string_view prefix, std::string_view what) {
    Expected<std::string_view> tok = next(what);
    if (!tok)
      return tok.takeError();
    std::string_view word = *tok;
    if (!consumeFront(word, prefix))
      return error("expected ", what, " at field ", pos, ", got '", *tok, "'");
    return word;
  }
  size_t position() const { return pos; }

private:
  std::string_view name;
  std::vector<std::string_view> tokens;
  size_t pos = 0;
};
} // namespace

/// The field that extends field `i`'s token ("dec" -> "dec3"), if any.
static const ScheduleField *suffixOf(size_t i) {
  return i + 1 < std::size(kScheduleFields) && kScheduleFields[i + 1].form == FieldForm::Suffix
             ? &kScheduleFields[i + 1]
             : nullptr;
}

/// The variants' tokens as the parser's errors list them.
static std::string variantGrammar() {
  std::string out;
  for (size_t i = 0; i < std::size(kScheduleFields); ++i) {
    const ScheduleField &f = kScheduleFields[i];
    if (f.form == FieldForm::Number || f.form == FieldForm::Suffix)
      continue;
    if (!out.empty())
      out += ", then ";
    out += f.form == FieldForm::Count ? strCat("'", f.token, "<N>'")
           : suffixOf(i)              ? strCat("'", f.token, "' or '", f.token, "<N>'")
                                      : strCat("'", f.token, "'");
  }
  return out;
}

Expected<KernelSpec> parseKernelName(std::string_view name) {
  NameParser p(name);
  if (name.empty())
    return p.error("is empty");
  for (char c : name)
    if (!(isLowerOrDigit(c) || c == '_'))
      return p.error("contains a character outside [a-z0-9_]");
  KernelSpec s;
  auto t0 = p.next("the op"), t1 = p.next("the op");
  std::optional<OpKind> op;
  if (t0 && t1)
    for (OpKind o : kAllOpKinds)
      if (toString(o) == strCat(*t0, "_", *t1))
        op = o;
  if (!op)
    return p.error("unknown op; expected it to start with 'gemm_a4w4_', 'gemm_mxa4w4_', "
                   "'gemm_qdqa4w4_', 'quant_mxfp4_', 'qdq_mxfp4_', 'moe_count_', 'moe_place_', "
                   "'moe_quant_', 'moe_actq_' or "
                   "'moe_reduce_'");
  s.op = *op;
  Expected<std::string_view> arch = p.next("the target");
  if (!arch)
    return arch.takeError();
  if (*arch == "sm90a")
    s.arch = Arch::SM90A;
  else if (std::optional<Arch> a = parseArch(*arch); a && *arch != "sm_90a")
    s.arch = *a;
  else
    return p.error("unknown target '", *arch, "'; expected gfx950, gfx1250 or sm90a");
  for (auto [prefix, field] : {std::pair<const char *, int64_t *>{"n", &s.n}, {"k", &s.k}}) {
    Expected<int64_t> v = p.number(prefix);
    if (!v)
      return v.takeError();
    *field = *v;
  }
  for (const ScheduleField &f : kScheduleFields)
    if (f.form == FieldForm::Number) {
      Expected<int64_t> v = p.number(f.token);
      if (!v)
        return v.takeError();
      f.set(s, *v);
    }
  Expected<std::string_view> rounding = p.next("the scale rounding");
  if (!rounding)
    return rounding.takeError();
  std::optional<ScaleRounding> r = parseScaleRounding(*rounding);
  if (!r || *rounding != toString(*r))
    return p.error("unknown scale rounding '", *rounding,
                   "'; expected roundup, even, floor or nearest");
  s.rounding = *r;

  Expected<std::string_view> wl = p.tagged("w", "the weight layout 'w<layout>'");
  if (!wl)
    return wl.takeError();
  std::optional<WeightLayout> w;
  for (WeightLayout l :
       {WeightLayout::RowMajor, WeightLayout::Gfx950Mfma16, WeightLayout::Sm90Mma16})
    if (*wl == layoutToken(toString(l)))
      w = l;
  if (!w)
    return p.error("unknown weight layout '", *wl, "'");
  s.weightLayout = *w;

  Expected<std::string_view> sl = p.tagged("s", "the scale layout 's<layout>'");
  if (!sl)
    return sl.takeError();
  std::optional<ScaleLayout> sc;
  for (ScaleLayout l : {ScaleLayout::RowMajor, ScaleLayout::Gfx950Mfma16, ScaleLayout::Gfx1250Wmma,
                        ScaleLayout::Sm90Mma16})
    if (*sl == layoutToken(toString(l)))
      sc = l;
  if (!sc)
    return p.error("unknown scale layout '", *sl, "'");
  s.scaleLayout = *sc;

  Expected<std::string_view> act = p.tagged("a", "the activation 'a<kind>'");
  if (!act)
    return act.takeError();
  std::optional<Activation> a;
  for (Activation x : {Activation::None, Activation::Silu, Activation::Swiglu, Activation::Situv2})
    if (*act == toString(x))
      a = x;
  if (!a)
    return p.error("unknown activation '", *act, "'");
  s.activation = *a;
  for (unsigned i = 0; i < activationParamCount(*a); ++i) {
    Expected<std::string_view> hex = p.tagged("f", "an activation parameter 'f<8 hex digits>'");
    if (!hex)
      return hex.takeError();
    uint32_t bits = 0;
    if (hex->size() != 8 || !std::all_of(hex->begin(), hex->end(), isLowerHex))
      return p.error("activation parameter '", *hex, "' is not 8 lower-case hex digits");
    for (char c : *hex)
      bits = bits * 16 + uint32_t(isDigit(c) ? c - '0' : c - 'a' + 10);
    std::memcpy(&s.activationParams[i], &bits, 4);
  }
  Expected<std::string_view> ep = p.tagged("e", "the epilogue 'e<kind>'");
  if (!ep)
    return ep.takeError();
  std::optional<Epilogue> e;
  for (Epilogue x : {Epilogue::BF16, Epilogue::BF16DumpQuant, Epilogue::ActMx, Epilogue::ActMxDebug,
                     Epilogue::Scatter})
    if (*ep == toString(x))
      e = x;
  if (!e)
    return p.error("unknown epilogue '", *ep,
                   "'; expected bf16, bf16dq, actmx, actmxdbg or scatter");
  s.epilogue = *e;
  // The variants, each at most once and in the table's order.
  constexpr size_t fields = std::size(kScheduleFields);
  size_t next = 0;
  std::string_view last; // the last variant read
  while (!p.done()) {
    Expected<std::string_view> token = p.next("a variant");
    if (!token)
      return token.takeError();
    bool matched = false;
    for (size_t i = next; i < fields && !matched; ++i) {
      const ScheduleField &f = kScheduleFields[i];
      std::string_view rest = *token;
      if (f.form == FieldForm::Number || f.form == FieldForm::Suffix ||
          !consumeFront(rest, f.token))
        continue;
      const ScheduleField *suffix = suffixOf(i);
      std::optional<int64_t> v = canonicalNumber(rest);
      if (f.form == FieldForm::Flag && rest.empty()) {
        f.set(s, 1);
      } else if (f.form == FieldForm::Flag && suffix && v && *v != suffix->defaultValue) {
        f.set(s, 1);
        suffix->set(s, *v);
      } else if (f.form == FieldForm::Count && v && *v != f.defaultValue) {
        f.set(s, *v);
      } else {
        continue;
      }
      matched = true;
      next = i + 1;
    }
    if (!matched && last.empty())
      return p.error("has trailing fields after the epilogue: '", *token, "' (only ",
                     variantGrammar(), ", each at most once, may follow it)");
    if (!matched)
      return p.error("has trailing fields after '", last, "': '", *token, "' (only ",
                     variantGrammar(), ", each at most once, may follow the epilogue)");
    last = *token;
  }
  if (Error e = verifyKernelSpec(s))
    return p.error(e.message());
  return s;
}

/// Checks shared by every target: positive shapes, divisibility by the tile,
/// the layouts and the activation.
static Error verifyCommon(const KernelSpec &s) {
  const WeightLayout wl = targetInfo(s.arch).weightLayout;
  const ScaleLayout sl = targetInfo(s.arch).scaleLayout;
  std::string_view arch = toString(s.arch);
  auto fail = [](const auto &...parts) { return makeError(parts...); };
  if (s.n <= 0 || s.k <= 0)
    return fail("gemm_a4w4: N and K must be positive, got N = ", s.n, ", K = ", s.k);
  if (s.n % s.bn != 0)
    return fail("gemm_a4w4 on ", arch, " needs N % ", s.bn, " == 0 (the N tile is ", s.bn,
                "); got N = ", s.n);
  if (s.k % 128 != 0)
    return fail("gemm_a4w4 on ", arch,
                " needs K % 128 == 0 (one MMA K step covers 128 K); "
                "got K = ",
                s.k);
  if ((s.bk != 128 && s.bk != 256) || s.k % s.bk != 0)
    return fail("gemm_a4w4: BK must be 128 or 256 and divide K = ", s.k, ", got ", s.bk);
  if (s.weightLayout != wl)
    return fail("gemm_a4w4 on ", arch, " reads weights in the ", toString(wl), " layout");
  if (s.scaleLayout != sl)
    return fail("gemm_a4w4 on ", arch, " reads weight scales in the ", toString(sl), " layout");
  if ((s.activation == Activation::Swiglu || s.activation == Activation::Situv2) &&
      !storesActMx(s.epilogue))
    return fail("activation ", toString(s.activation),
                " needs gate and up tiles (MoE stage 1); the dense GEMM takes none or silu");
  return Error::success();
}

/// The quantizer kernels: no weights, one K step per workgroup.
static Error verifyQuantizeMx(const KernelSpec &s) {
  auto fail = [&](const auto &...parts) { return makeError(toString(s.op), ": ", parts...); };
  if (s.arch != Arch::SM90A)
    return fail("implemented for sm_90a only, got ", toString(s.arch));
  if (s.n != 0 || s.bn != 128 || s.splitK != 1)
    return fail("has no weights: N must be 0, BN 128 and split-K 1, got N = ", s.n, ", BN = ", s.bn,
                ", split-K ", s.splitK);
  if (s.k <= 0 || (s.bk != 128 && s.bk != 256) || s.k % s.bk != 0)
    return fail("BK must be 128 or 256 and divide K = ", s.k, ", got ", s.bk);
  if (s.bm != 8 && s.bm != 16 && s.bm != 32 && s.bm != 64)
    return fail("BM must be 8, 16, 32 or 64, got ", s.bm);
  if (s.weightLayout != WeightLayout::RowMajor || s.scaleLayout != ScaleLayout::RowMajor)
    return fail("writes codes and scales row-major; the layouts must be rowmajor");
  if (s.activation != Activation::None || s.epilogue != Epilogue::BF16)
    return fail("takes no activation and no epilogue");
  if (s.foldedScales)
    return fail("has no weight scales to fold");
  if (s.stages != 0)
    return fail("has no K pipeline: the stage count must be 0, got ", s.stages);
  if (s.twoWarpgroups)
    return fail("has no MMA warpgroups: '_wg2' does not apply");
  if (s.decode)
    return fail("has no K loop: '_dec' does not apply");
  if (s.warpSplitK)
    return fail("has no K loop: '_wk' does not apply");
  if (s.persistent || s.streamK)
    return fail("has no tile loop: '", s.persistent ? "_ps" : "_sk", "' does not apply");
  if (s.imageStream < 0)
    return fail("the streamed image (_is<S>) takes S >= 1 splits, got ", s.imageStream);
  // Streamed pieces are BM x 128 and stored directly (BM 64 stages its
  // block for bulk copies, whose completion is no release).
  if (s.imageStream &&
      (s.op != OpKind::QdqMx || s.bk != 128 || s.bm > 32 || (s.k / 128) % s.imageStream != 0))
    return fail("the streamed image (_is<S>) is a variant of qdq_mxfp4 with BM 8, 16 or 32 and "
                "BK 128 whose K steps (K / 128 = ",
                s.k / 128, ") the S splits divide; got ", toString(s.op), " with BM ", s.bm,
                ", BK ", s.bk, ", S = ", s.imageStream);
  return Error::success();
}

/// The SIMT kernels (MoE sorting and elementwise), every target.
static Error verifySimt(const KernelSpec &s) {
  auto fail = [&](const auto &...parts) { return makeError(toString(s.op), ": ", parts...); };
  if (s.splitK != 1 || s.foldedScales || s.stages || s.twoWarpgroups || s.decode ||
      s.decodeGroups != 1 || s.warpSplitK || s.imageStream || s.persistent || s.streamK)
    return fail("is a SIMT kernel: no GEMM variant applies");
  if (s.weightLayout != WeightLayout::RowMajor || s.scaleLayout != ScaleLayout::RowMajor ||
      s.epilogue != Epilogue::BF16 || s.activationParams[0] != 0.0f ||
      s.activationParams[1] != 0.0f)
    return fail("has no weights, epilogue or compiled-in activation parameters: the layouts "
                "must be rowmajor, the epilogue bf16, the parameters 0");
  const bool quantizes = s.op == OpKind::MoeQuant || s.op == OpKind::MoeActQuant;
  if (!quantizes && s.rounding != kDefaultScaleRounding)
    return fail("does not quantize: the rounding must be the default, ",
                toString(kDefaultScaleRounding));
  if ((s.op == OpKind::MoeActQuant) !=
      (s.activation == Activation::Silu || s.activation == Activation::Swiglu ||
       s.activation == Activation::Situv2))
    return fail(s.op == OpKind::MoeActQuant ? "needs a gated activation: silu, swiglu or situv2"
                                            : "takes no activation");
  if (s.bn != 256)
    return fail("runs 256 threads a workgroup (BN 256), got BN ", s.bn);
  if (s.op == OpKind::MoeCount || s.op == OpKind::MoePlace) {
    if (s.n < 1 || s.n > 65536)
      return fail("N is the number of experts, 1 to 65536, got ", s.n);
    if (s.k < 1 || s.k > 255)
      return fail("K is topk, 1 to 255, got ", s.k);
    if (s.bm < 1 || s.bm > 256)
      return fail("BM is block_m, 1 to 256, got ", s.bm);
    if (s.bk != 16)
      return fail("reads 16 ids a thread and pass (BK 16), got BK ", s.bk);
    return Error::success();
  }
  if (s.bm != 1 || s.bk != 32)
    return fail("takes one 32-element block a thread (BM 1, BK 32), got BM ", s.bm, ", BK ", s.bk);
  if (s.op == OpKind::MoeReduce || s.op == OpKind::MoeCast) {
    if (s.n < 8 || s.n % 8 != 0)
      return fail("N is the hidden size, a multiple of 8, got ", s.n);
    if (s.op == OpKind::MoeCast && s.k != 0)
      return fail("sums nothing: K must be 0, got ", s.k);
    if (s.op == OpKind::MoeReduce && (s.k < 1 || s.k > 255))
      return fail("K is topk, 1 to 255, got ", s.k);
    return Error::success();
  }
  if (s.n != 0)
    return fail("has no weights: N must be 0, got ", s.n);
  if (s.k < 32 || s.k % 32 != 0)
    return fail("K (the row length) must be a positive multiple of 32, got ", s.k);
  return Error::success();
}

Error verifyKernelSpec(const KernelSpec &s) {
  std::string_view arch = toString(s.arch);
  auto fail = [](const auto &...parts) { return makeError(parts...); };
  if (Error e = verifyScheduleFields(s))
    return e;
  if (isQuantizer(s.op))
    return verifyQuantizeMx(s);
  if (isSimt(s.op))
    return verifySimt(s);
  if (s.foldedScales && s.arch != Arch::SM90A)
    return fail("folded weight scales (_fold) are an sm_90a GEMM variant, not ", arch);
  if (s.stages != 0 && s.arch != Arch::SM90A)
    return fail("a stage count (_st<N>) is an sm_90a GEMM variant, not ", arch);
  if (s.twoWarpgroups && (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.bm == 128))
    return fail("two warpgroups (_wg2) are a variant of the sm_90a gemm_qdqa4w4 below BM 128 "
                "(BM 128 always has two), not of ",
                toString(s.op), " on ", arch, " with BM ", s.bm);
  if (s.persistent && (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.splitK != 1))
    return fail("a persistent grid (_ps) is a variant of the sm_90a gemm_qdqa4w4 without "
                "split-K, not of ",
                toString(s.op), " on ", arch, " with split-K ", s.splitK);
  if (s.decode && (s.arch != Arch::SM90A || s.op != OpKind::GemmA4W4 || s.bm >= 128 ||
                   s.stages != 0 || s.epilogue != Epilogue::BF16))
    return fail("the decode variant (_dec) is one of the sm_90a gemm_a4w4 (inline quantization) "
                "below BM 128, without a stage count or a quantization dump, not of ",
                toString(s.op), " on ", arch, " with BM ", s.bm);
  if (s.decode && s.bk > 0 && s.k % (s.bk * s.splitK) != 0)
    return fail("the decode variant (_dec) gives every split the same K steps: K = ", s.k,
                " must be a multiple of BK x split-K = ", s.bk * s.splitK);
  if (s.warpSplitK &&
      (s.arch != Arch::SM90A || s.op != OpKind::GemmA4W4 || s.bm != 8 || s.bk != 128 ||
       (s.bn != 16 && s.bn != 32) || s.splitK != 1 || s.decode || s.stages != 0 ||
       s.epilogue != Epilogue::BF16 || s.activation != Activation::None))
    return fail("the warp-split variant (_wk<W>) is one of the sm_90a gemm_a4w4 (inline "
                "quantization) at BM 8, BN 16 or 32, BK 128, without split-K, the decode "
                "variant, a stage count, an activation or a quantization dump; got ",
                toString(s.op), " on ", arch, " with BM ", s.bm, ", BN ", s.bn, ", BK ", s.bk,
                ", split-K ", s.splitK);
  if (s.warpSplitK && (s.warpSplitK < 1 || s.warpSplitK > sm90::kMaxSplitKWarps ||
                       (s.k > 0 && s.k / 128 < s.warpSplitK)))
    return fail("the warp-split variant takes 1 to ", sm90::kMaxSplitKWarps,
                " warps, each at least one 128-K chunk: K = ", s.k, " has ", s.k / 128,
                " chunks, got ", s.warpSplitK, " warps");
  if (s.decodeGroups > sm90::kMaxDecodeGroups)
    return fail("the decode variant takes 1 to ", sm90::kMaxDecodeGroups,
                " warpgroups splitting K (_dec<G>), got ", s.decodeGroups);
  const int64_t splitSteps = s.bk > 0 ? sm90StepsPerWorkgroup(s) : 0;
  if (s.decode && s.bk > 0 && s.decodeGroups > 1 &&
      (splitSteps % s.decodeGroups != 0 || splitSteps < 2 * s.decodeGroups))
    return fail("the decode variant's ", s.decodeGroups,
                " warpgroups take equal K steps, at least two each: the ", splitSteps,
                " steps of a split must be a multiple of ", s.decodeGroups, " and at least ",
                2 * s.decodeGroups);
  if (s.streamK &&
      (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.splitK != 1 || s.persistent ||
       (s.bm != 128 && s.bm != 256) || s.bn != 128 || s.activation != Activation::None))
    return fail("stream-K (_sk) is a variant of the sm_90a gemm_qdqa4w4 with BM 128 or 256 and "
                "BN 128, without split-K, a persistent grid or an activation (it sums partial "
                "tiles), not of ",
                toString(s.op), " on ", arch, " with BM ", s.bm, ", split-K ", s.splitK,
                s.persistent ? ", persistent" : "");
  if (s.imageStream &&
      (s.arch != Arch::SM90A || s.op != OpKind::GemmQdqA4W4 || s.bm != 128 || s.persistent ||
       s.streamK || (s.imageStream != 8 && s.imageStream != 16 && s.imageStream != 32)))
    return fail("the streamed image (_is<R>) is a variant of the sm_90a gemm_qdqa4w4 with BM 128 "
                "(one image block a tile), one tile per workgroup (no persistent grid or "
                "stream-K), after a "
                "quantizer of R = 8, 16 or 32 rows; got ",
                toString(s.op), " on ", arch, " with BM ", s.bm, ", R = ", s.imageStream,
                s.persistent ? ", persistent" : "", s.streamK ? ", stream-K" : "");
  if (storesActMx(s.epilogue) &&
      (s.op != OpKind::MoeGemm || s.arch != Arch::SM90A || s.activation == Activation::None ||
       s.activationParams[0] != 0.0f || s.activationParams[1] != 0.0f || s.bn % 64 != 0))
    return fail("the fused activation epilogue (e", toString(s.epilogue),
                ") is moe_gemm's on sm_90a, with a gated activation whose parameters are "
                "run-time arguments (0 in the name) and BN a multiple of 64 (8 gate/up pairs "
                "of 8 columns per 32-column MXFP4 block); got ",
                toString(s.op), " on ", arch, ", activation ", toString(s.activation), ", BN ",
                s.bn);
  if (s.epilogue == Epilogue::Scatter &&
      (s.op != OpKind::MoeGemm || s.arch != Arch::SM90A || s.activation != Activation::None))
    return fail("the scatter epilogue (escatter: weighted rows added atomically to their "
                "tokens' f32 rows) is moe_gemm's on sm_90a, with no activation; got ",
                toString(s.op), " on ", arch, ", activation ", toString(s.activation));
  if (s.op == OpKind::MoeGemm && !storesActMx(s.epilogue) &&
      (s.activation != Activation::None ||
       (s.epilogue != Epilogue::BF16 && s.epilogue != Epilogue::Scatter)))
    return fail("moe_gemm (the MoE stages' grouped GEMM) stores bf16 or scatters f32 with no "
                "activation, or its fused activation epilogue (eactmx); got activation ",
                toString(s.activation), ", epilogue ", toString(s.epilogue));
  if (s.op == OpKind::MoeGemm && s.splitK != 1 && (s.arch != Arch::SM90A || s.bm >= 128))
    return fail("moe_gemm splits K on sm_90a below BM 128 (partial tiles through a global "
                "workspace, not a cluster); got split-K ",
                s.splitK, " on ", arch, " with BM ", s.bm);
  const bool preQuantized =
      s.op == OpKind::GemmMxA4W4 || s.op == OpKind::GemmQdqA4W4 || s.op == OpKind::MoeGemm;
  if (preQuantized && s.op != OpKind::MoeGemm && s.arch != Arch::SM90A)
    return fail(toString(s.op), " (pre-quantized activations) is implemented for sm_90a only, got ",
                arch);
  if (preQuantized && s.epilogue == Epilogue::BF16DumpQuant)
    return fail(toString(s.op), " quantizes nothing: the quantization dump (epilogue bf16dq) does "
                "not apply");
  if (s.arch == Arch::SM90A) {
    // The step counts below divide by BK: an invalid one gets the common
    // checks' message instead (a name with "bk0" divided by zero).
    if (s.bk != 128 && s.bk != 256)
      return verifyCommon(s);
    if (s.bn != sm90::kTileRows && s.bn != sm90::kNarrowTileRows && s.bn != sm90::kWideTileRows &&
        !s.warpSplitK)
      return fail("gemm_a4w4 on sm_90a: BN must be 128 or 64 (4 warps x 32 or 16 weight rows), "
                  "or 192 for gemm_qdqa4w4 at BM 128, got ",
                  s.bn);
    if (s.bn == sm90::kWideTileRows &&
        (s.op != OpKind::GemmQdqA4W4 || s.bm != 128 || s.bk != 128 || s.streamK || s.persistent))
      return fail("gemm_a4w4 on sm_90a: BN 192 is a tile of gemm_qdqa4w4 with BM 128 and BK "
                  "128, one tile per workgroup; got ",
                  toString(s.op), " with BM ", s.bm, ", BK ", s.bk, s.streamK ? ", stream-K" : "",
                  s.persistent ? ", persistent" : "");
    if (s.bn == sm90::kNarrowTileRows && (s.bm > 128 || s.twoWarpgroups))
      return fail("gemm_a4w4 on sm_90a: BN 64 runs one warpgroup, so BM <= 128 and not two "
                  "warpgroups, got BM ",
                  s.bm, s.twoWarpgroups ? " with two warpgroups" : "");
    const bool staged = s.op == OpKind::GemmQdqA4W4;
    if (s.bm != 8 && s.bm != 16 && s.bm != 32 && s.bm != 64 && s.bm != 128 &&
        !(staged && (s.bm == 192 || s.bm == 256)))
      return fail("gemm_a4w4 on sm_90a: BM must be 8, 16, 32, 64 or 128 (or 192 or 256 for "
                  "gemm_qdqa4w4), got ",
                  s.bm);
    if (s.bm > 128 && s.bk != 128)
      return fail("gemm_qdqa4w4 on sm_90a: BM ", s.bm, " takes BK 128, got ", s.bk);
    if (s.bm == 256 && s.persistent)
      return fail("gemm_qdqa4w4 on sm_90a: BM 256 takes no persistent grid (its 72.5 KiB "
                  "stages leave no room for the output tile)");
    // The K loop is pipelined over at least two steps (validated on the H200).
    if (s.k > 0 && s.k / s.bk < 2)
      return fail("gemm_a4w4 on sm_90a needs at least two ", s.bk,
                  "-element K steps, got K = ", s.k);
    if (s.splitK < 1 || s.k / s.bk / s.splitK < 2)
      return fail("gemm_a4w4 on sm_90a: split-K ", s.splitK, " must leave at least 2 of the ",
                  s.k / s.bk, " K steps to every split");
    // The activations' two buffers (the image's kernels stage them instead).
    if (!staged && s.bm * s.bk > 128 * 128)
      return fail("gemm_a4w4 on sm_90a: BM x BK = ", s.bm * s.bk,
                  " exceeds the 64 KiB of shared memory (at most 16384)");
    const sm90::SharedLayout layout = sm90SharedLayout(s);
    if (s.decode && layout.totalBytes() > sm90::kMaxSharedBytes)
      return fail("gemm_a4w4 on sm_90a: the decode variant keeps every K step's activations "
                  "in shared memory: ",
                  layout.totalBytes(), " bytes for BM ", s.bm, " and ", layout.stages,
                  " steps exceed ", sm90::kMaxSharedBytes,
                  "; use more splits or no decode variant");
    // A persistent workgroup issues the next tile's first S - 1 steps from
    // inside this tile's loop.
    if (s.persistent && s.k / s.bk < layout.stages - 1)
      return fail("gemm_qdqa4w4 on sm_90a: a persistent grid needs at least ",
                  layout.stages - 1, " K steps (its stages less one), got ", s.k / s.bk);
    if (s.stages != 0) {
      const int64_t bytes = layout.totalBytes();
      if (s.stages < 2 || s.stages > 8 || bytes > sm90::kMaxSharedBytes)
        return fail("gemm_a4w4 on sm_90a: stages must be 2..8 and fit ",
                    sm90::kMaxSharedBytes / 1024, " KiB of shared memory; ", s.stages,
                    " stages of this tile take ", bytes, " bytes");
    }
    // The default stage count can overflow too (BM 128 x BK 256 on the
    // image: its launch failed in cuFuncSetAttribute).
    if (layout.totalBytes() > sm90::kMaxSharedBytes)
      return fail("gemm_a4w4 on sm_90a: BM ", s.bm, " x BK ", s.bk, " on ", layout.stages,
                  " stages takes ", layout.totalBytes(), " bytes of shared memory, over the ",
                  sm90::kMaxSharedBytes / 1024, " KiB of an SM; use fewer stages or BK 128");
    return verifyCommon(s);
  }
  if (s.epilogue == Epilogue::BF16DumpQuant)
    return fail("gemm_a4w4 on ", arch,
                ": the quantization dump (epilogue bf16dq) is "
                "implemented for sm_90a only");
  if (s.splitK != 1)
    return fail("gemm_a4w4 on ", arch, ": split-K is implemented for sm_90a only");
  // The AMD GEMM: 4 waves x 64 columns.
  if (s.bn != targetInfo(s.arch).defaultBn)
    return fail("gemm_a4w4 on ", arch, ": BN must be ", targetInfo(s.arch).defaultBn, ", got ",
                s.bn);
  // moe_gemm copies its rows (no inline quantizer to split): any row block
  // of 16 up to the target's largest.
  const int64_t maxMoeBm = targetInfo(s.arch).maxMoeBlockM;
  if (s.op == OpKind::MoeGemm && s.bm != 16 && s.bm != 32 && !(s.bm == 64 && maxMoeBm >= 64) &&
      !(s.bm == 128 && maxMoeBm >= 128))
    return fail("moe_gemm on ", arch, ": BM (block_m) must be ",
                maxMoeBm >= 128  ? "16, 32, 64 or 128"
                : maxMoeBm >= 64 ? "16, 32 or 64"
                                 : "16 or 32",
                ", got ", s.bm);
  if (s.op != OpKind::MoeGemm && s.bm != 16 && s.bm != 64)
    return fail("gemm_a4w4: BM must be 16 or 64, got ", s.bm);
  return verifyCommon(s);
}

Expected<KernelSpec> makeGemmA4W4Spec(Arch arch, int64_t n, int64_t k, int64_t bm,
                                      ScaleRounding rounding, Activation activation,
                                      std::array<float, 2> params, OpKind op) {
  if (isQuantizer(op))
    return makeError("makeGemmA4W4Spec: ", toString(op), " is not a GEMM; use makeQuantizeMxSpec");
  KernelSpec s;
  s.op = op;
  s.arch = arch;
  s.n = n;
  s.k = k;
  s.bm = bm;
  s.rounding = rounding;
  // The target's default tile and layouts (sm_90a: one 128-K chunk per
  // step, small TMA stages, so more steps in flight).
  const TargetInfo &target = targetInfo(arch);
  s.bn = target.defaultBn;
  s.bk = target.bkFor(k);
  s.weightLayout = target.weightLayout;
  s.scaleLayout = target.scaleLayout;
  s.activation = activation;
  s.activationParams = params;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeQuantizeMxSpec(Arch arch, int64_t k, int64_t bm, ScaleRounding rounding,
                                        OpKind op) {
  if (!isQuantizer(op))
    return makeError("makeQuantizeMxSpec: ", toString(op), " is not a quantizer");
  KernelSpec s;
  s.op = op;
  s.arch = arch;
  s.n = 0;
  s.k = k;
  s.bm = bm;
  s.bn = 128;
  s.bk = 128;
  s.rounding = rounding;
  s.weightLayout = WeightLayout::RowMajor;
  s.scaleLayout = ScaleLayout::RowMajor;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

/// A SIMT spec with the defaults every one shares.
static KernelSpec simtSpec(OpKind op, Arch arch, int64_t n, int64_t k) {
  KernelSpec s;
  s.op = op;
  s.arch = arch;
  s.n = n;
  s.k = k;
  s.bm = 1;
  s.bn = 256;
  s.bk = 32;
  s.weightLayout = WeightLayout::RowMajor;
  s.scaleLayout = ScaleLayout::RowMajor;
  return s;
}

Expected<KernelSpec> makeMoeQuantSpec(Arch arch, int64_t hidden, ScaleRounding rounding) {
  KernelSpec s = simtSpec(OpKind::MoeQuant, arch, 0, hidden);
  s.rounding = rounding;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeActQuantSpec(Arch arch, int64_t inter, Activation activation,
                                         ScaleRounding rounding) {
  KernelSpec s = simtSpec(OpKind::MoeActQuant, arch, 0, inter);
  s.rounding = rounding;
  s.activation = activation;
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeReduceSpec(Arch arch, int64_t hidden, int64_t topk) {
  KernelSpec s = simtSpec(OpKind::MoeReduce, arch, hidden, topk);
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<KernelSpec> makeMoeCastSpec(Arch arch, int64_t hidden) {
  KernelSpec s = simtSpec(OpKind::MoeCast, arch, hidden, 0);
  if (Error e = verifyKernelSpec(s))
    return e;
  return s;
}

Expected<std::array<KernelSpec, 2>> makeMoeSortSpecs(Arch arch, int64_t experts, int64_t topk,
                                                     int64_t blockM) {
  std::array<KernelSpec, 2> specs;
  for (int i = 0; i < 2; ++i) {
    KernelSpec &s = specs[size_t(i)];
    s.op = i == 0 ? OpKind::MoeCount : OpKind::MoePlace;
    s.arch = arch;
    s.n = experts;
    s.k = topk;
    s.bm = blockM;
    s.bn = 256;
    s.bk = 16;
    s.weightLayout = WeightLayout::RowMajor;
    s.scaleLayout = ScaleLayout::RowMajor;
    if (Error e = verifyKernelSpec(s))
      return e;
  }
  return specs;
}

} // namespace mxfp4
