//===- KernelName.cpp - A kernel's canonical name and its parser ---------===//
//
// KernelSpec::name() and parseKernelName() (KernelSpec.h): the name is a
// cache key, a file name and a symbol at once, so the parser treats it as
// untrusted and accepts only what name() writes.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/KernelSpec.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <vector>

namespace mxfp4 {

/// Name tokens never contain '_' (it separates fields).
static std::string_view archToken(Arch a) { return a == Arch::SM90A ? "sm90a" : toString(a); }

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
  if (moeScaleRep != 1)
    s += strCat("_xr", moeScaleRep);
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

  /// The whole message made printable: `what` may quote tokens of the name.
  template <typename... Parts> Error error(const Parts &...what) const {
    return Error(strCat("kernel name '", printable(name), "': ", printable(strCat(what...), 400)));
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
  /// The next token, not consumed; call only when not done().
  std::string_view peek() const { return tokens[pos]; }

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
  // The MoE scale layout, when not row-major.
  if (!p.done() && p.peek().substr(0, 2) == "xr") {
    Expected<int64_t> rep = p.number("xr");
    if (!rep)
      return rep.takeError();
    if (*rep == 1)
      return p.error("writes the row-major MoE scale layout as no '_xr' field, not '_xr1'");
    s.moeScaleRep = *rep;
  }
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

} // namespace mxfp4
