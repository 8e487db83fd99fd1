//===- TunedCsv.cpp - Tuned dispatch rows: the CSV format and its table ---===//
//
// Rows come from files users pass (MXFP4_TUNED_CSV, --from-csv): every
// field is untrusted. A bad row is an error naming its file and line,
// never a crash and never a row dispatch would run wrongly.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Ops/TunedCsv.h"
#include "mxfp4/Support/Env.h"
#include "mxfp4/Support/Log.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

namespace mxfp4 {

std::string_view toString(TunedOp op) { return op == TunedOp::Gemm ? "gemm_a4w4" : "fused_moe"; }

namespace {

enum Column : unsigned {
  kTarget,
  kCuNum,
  kOp,
  kM,
  kN,
  kK,
  kExperts,
  kTopk,
  kActivation,
  kSplitM,
  kStreamWgs,
  kKernels,
  kUs,
  kErr,
  kTuner,
  kColumns
};
constexpr std::array<std::string_view, kColumns> kColumnNames = {
    "target",     "cu_num",  "op",         "m",       "n",  "k",   "experts", "topk",
    "activation", "split_m", "stream_wgs", "kernels", "us", "err", "tuner"};
constexpr std::string_view kHeader =
    "target,cu_num,op,m,n,k,experts,topk,activation,split_m,stream_wgs,kernels,us,err,tuner";

/// The largest value an integer column takes: shapes and counts stay far
/// below what the kernels' 32-bit index math allows.
constexpr int64_t kMaxInt = int64_t(1) << 31;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos)
      return parts;
    start = end + 1;
  }
}

/// A field as shown in a message: printable ASCII only, at most 64 bytes.
std::string quoted(std::string_view s) { return strCat("'", printable(s, 64), "'"); }

std::optional<int64_t> parseInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0 || v > kMaxInt)
    return std::nullopt;
  return v;
}

std::optional<double> parseDouble(std::string_view s) {
  if (s.empty() || s.size() > 64)
    return std::nullopt;
  std::string copy(s);
  char *end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(v) || v < 0)
    return std::nullopt;
  return v;
}

std::optional<Activation> parseActivation(std::string_view s) {
  for (Activation a : {Activation::None, Activation::Silu, Activation::Swiglu, Activation::Situv2})
    if (toString(a) == s)
      return a;
  return std::nullopt;
}

bool isDenseGemm(OpKind op) {
  return op == OpKind::GemmA4W4 || op == OpKind::GemmMxA4W4 || op == OpKind::GemmQdqA4W4;
}

Error verifyDense(const TunedRow &row) {
  const std::vector<KernelSpec> &ks = row.kernels;
  std::vector<OpKind> ops;
  for (const KernelSpec &s : ks) {
    ops.push_back(s.op);
    if (isDenseGemm(s.op) && (s.n != row.key.n || s.k != row.key.k))
      return makeError("kernel ", s.name(), " is for N = ", s.n, ", K = ", s.k,
                       ", the row for N = ", row.key.n, ", K = ", row.key.k);
    if (isQuantizer(s.op) && s.k != row.key.k)
      return makeError("kernel ", s.name(), " quantizes K = ", s.k,
                       ", the row is for K = ", row.key.k);
  }
  using O = OpKind;
  const bool inl = ops == std::vector<O>{O::GemmA4W4};
  const bool mx = ops == std::vector<O>{O::QuantizeMx, O::GemmMxA4W4};
  const bool image = ops == std::vector<O>{O::QdqMx, O::GemmQdqA4W4};
  const bool split = ops == std::vector<O>{O::QdqMx, O::GemmQdqA4W4, O::GemmQdqA4W4};
  if (!inl && !mx && !image && !split)
    return makeError("the kernels are not a plan gemmA4W4 runs: expected gemm_a4w4, quant_mxfp4 + "
                     "gemm_mxa4w4, or qdq_mxfp4 + gemm_qdqa4w4 (+ gemm_qdqa4w4 with split_m)");
  if (split != (row.splitM != 0))
    return makeError("split_m = ", row.splitM, " with ", split ? "two GEMMs" : "one GEMM",
                     ": a split M runs exactly two gemm_qdqa4w4");
  if (row.splitM % 256 != 0 || row.splitM >= row.m)
    return makeError("split_m = ", row.splitM, " is not a multiple of 256 below m = ", row.m);
  const bool streamed = image && ks[0].imageStream != 0;
  if (image && (ks[1].imageStream != 0) != streamed)
    return makeError("the quantizer and the GEMM disagree on streaming the image");
  if (streamed && (ks[1].imageStream != ks[0].bm ||
                   (ks[0].imageStream != 1 && ks[0].imageStream != ks[1].splitK)))
    return makeError("the streamed image's pieces do not match: the GEMM waits for ",
                     ks[1].imageStream, "-row pieces in ", ks[1].splitK,
                     " splits, the quantizer writes ", ks[0].bm, "-row pieces in ",
                     ks[0].imageStream);
  if (streamed != (row.streamWorkgroupsPerSm != 0))
    return makeError("stream_wgs = ", row.streamWorkgroupsPerSm,
                     streamed ? ": the streamed image needs 1 to 16 quantizer workgroups per SM"
                              : ": only a streamed image (qdq_mxfp4 with _is) has them");
  if (row.streamWorkgroupsPerSm > 16)
    return makeError("stream_wgs = ", row.streamWorkgroupsPerSm, " is above 16");
  return Error::success();
}

Error verifyMoe(const TunedRow &row) {
  const std::vector<KernelSpec> &ks = row.kernels;
  if (ks.size() != 2 || ks[0].op != OpKind::MoeGemm || ks[1].op != OpKind::MoeGemm)
    return makeError("a fused_moe row lists its two moe_gemm kernels: stage 1, then stage 2");
  if (ks[0].bm != ks[1].bm)
    return makeError("the stages' block_m differ (", ks[0].bm, " and ", ks[1].bm, ")");
  if (ks[0].bm > targetInfo(row.key.arch).maxMoeBlockM)
    return makeError("block_m ", ks[0].bm, " is above ", toString(row.key.arch), "'s ",
                     targetInfo(row.key.arch).maxMoeBlockM);
  const Arch arch = row.key.arch;
  if (ks[0].n != 2 * moePaddedRow(arch, row.key.n) || ks[1].n != moePaddedRow(arch, row.key.k))
    return makeError("the stages are for N = ", ks[0].n, " and ", ks[1].n, ", the row's inter ",
                     row.key.n, " and hidden ", row.key.k, " pad to ",
                     2 * moePaddedRow(arch, row.key.n), " and ", moePaddedRow(arch, row.key.k));
  if (row.key.experts < 1 || row.key.topk < 1 || row.key.topk > row.key.experts)
    return makeError("a fused_moe row needs experts >= 1 and 1 <= topk <= experts");
  if (row.key.activation == Activation::None)
    return makeError("a fused_moe row names its activation (silu, swiglu or situv2)");
  if (storesActMx(ks[0].epilogue) && ks[0].activation != row.key.activation)
    return makeError("stage 1 ", ks[0].name(), " applies ", toString(ks[0].activation),
                     ", the row is for ", toString(row.key.activation));
  if (row.splitM || row.streamWorkgroupsPerSm)
    return makeError("split_m and stream_wgs are 0 on a fused_moe row");
  return Error::success();
}

} // namespace

std::string TunedRow::kernelNames() const {
  std::string out;
  for (const KernelSpec &s : kernels)
    out += (out.empty() ? "" : "+") + s.name();
  return out;
}

std::string_view tunedCsvHeader() { return kHeader; }

std::string formatTunedRow(const TunedRow &r) {
  char us[32], err[32];
  std::snprintf(us, sizeof us, "%.2f", r.us);
  std::snprintf(err, sizeof err, "%.3g", r.error);
  return strCat(toString(r.key.arch), ",", r.key.computeUnits, ",", toString(r.key.op), ",", r.m,
                ",", r.key.n, ",", r.key.k, ",", r.key.experts, ",", r.key.topk, ",",
                toString(r.key.activation), ",", r.splitM, ",", r.streamWorkgroupsPerSm, ",",
                r.kernelNames(), ",", us, ",", err, ",", r.tuner);
}

std::string formatTunedCsv(const std::vector<TunedRow> &rows) {
  std::string out = std::string(kHeader) + "\n";
  for (const TunedRow &r : rows)
    out += formatTunedRow(r) + "\n";
  return out;
}

Error verifyTunedRow(const TunedRow &row) {
  if (row.m < 1)
    return makeError("m = ", row.m, ": a row serves M >= 1");
  if (row.key.n < 1 || row.key.k < 1)
    return makeError("n and k must be >= 1");
  if (row.kernels.empty())
    return makeError("no kernels");
  for (const KernelSpec &s : row.kernels)
    if (s.arch != row.key.arch)
      return makeError("kernel ", s.name(), " is for ", toString(s.arch), ", the row for ",
                       toString(row.key.arch));
  if (row.key.op == TunedOp::Gemm) {
    if (row.key.experts || row.key.topk || row.key.activation != Activation::None)
      return makeError("a gemm_a4w4 row has experts 0, topk 0 and activation none");
    return verifyDense(row);
  }
  return verifyMoe(row);
}

Expected<std::vector<TunedRow>> parseTunedCsv(std::string_view text, std::string_view file) {
  std::vector<TunedRow> rows;
  std::array<int, kColumns> index;
  index.fill(-1);
  size_t width = 0;
  bool haveHeader = false;
  const std::vector<std::string_view> lines = split(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = strCat(file, ":", i + 1, ": ");
    std::string_view line = trim(lines[i]);
    if (line.empty() || line.front() == '#')
      continue;
    std::vector<std::string_view> fields = split(line, ',');
    for (std::string_view &f : fields)
      f = trim(f);
    if (!haveHeader) {
      for (size_t c = 0; c < fields.size(); ++c)
        for (unsigned col = 0; col < kColumns; ++col)
          if (fields[c] == kColumnNames[col]) {
            if (index[col] >= 0)
              return makeError(where, "column '", kColumnNames[col], "' appears twice");
            index[col] = int(c);
          }
      for (unsigned col = 0; col < kColumns; ++col)
        if (index[col] < 0)
          return makeError(where, "the header has no column '", kColumnNames[col],
                           "' (expected: ", kHeader, ")");
      width = fields.size();
      haveHeader = true;
      continue;
    }
    if (fields.size() != width)
      return makeError(where, fields.size(), " fields, the header has ", width);
    auto field = [&](Column c) { return fields[size_t(index[c])]; };
    auto integer = [&](Column c, int64_t &out) -> Error {
      std::optional<int64_t> v = parseInt(field(c));
      if (!v)
        return makeError(where, kColumnNames[c], " ", quoted(field(c)),
                         " is not an integer in [0, 2^31]");
      out = *v;
      return Error::success();
    };
    TunedRow row;
    row.origin = strCat(file, ":", i + 1);
    std::optional<Arch> arch = parseArch(field(kTarget));
    if (!arch)
      return makeError(where, "unknown target ", quoted(field(kTarget)),
                       "; expected gfx950, gfx1250 or sm_90a");
    row.key.arch = *arch;
    if (field(kOp) == "gemm_a4w4")
      row.key.op = TunedOp::Gemm;
    else if (field(kOp) == "fused_moe")
      row.key.op = TunedOp::FusedMoe;
    else
      return makeError(where, "unknown op ", quoted(field(kOp)),
                       "; expected gemm_a4w4 or fused_moe");
    std::optional<Activation> act = parseActivation(field(kActivation));
    if (!act)
      return makeError(where, "unknown activation ", quoted(field(kActivation)),
                       "; expected none, silu, swiglu or situv2");
    row.key.activation = *act;
    for (auto [col, out] :
         {std::pair{kCuNum, &row.key.computeUnits}, std::pair{kM, &row.m},
          std::pair{kN, &row.key.n}, std::pair{kK, &row.key.k},
          std::pair{kExperts, &row.key.experts}, std::pair{kTopk, &row.key.topk},
          std::pair{kSplitM, &row.splitM}, std::pair{kStreamWgs, &row.streamWorkgroupsPerSm}})
      if (Error e = integer(col, *out))
        return e;
    std::optional<double> us = parseDouble(field(kUs)), err = parseDouble(field(kErr));
    if (!us || !err)
      return makeError(where, !us ? "us " : "err ", quoted(field(!us ? kUs : kErr)),
                       " is not a finite number >= 0");
    row.us = *us;
    row.error = *err;
    row.tuner = std::string(field(kTuner));
    for (std::string_view name : split(field(kKernels), '+')) {
      Expected<KernelSpec> spec = parseKernelName(name);
      if (!spec)
        return makeError(where, "kernel ", quoted(name), ": ", spec.takeError().message());
      row.kernels.push_back(*spec);
    }
    if (Error e = verifyTunedRow(row))
      return makeError(where, e.message());
    rows.push_back(std::move(row));
  }
  if (!haveHeader)
    return makeError(file, ": no header line (expected: ", kHeader, ")");
  return rows;
}

Expected<std::vector<TunedRow>> readTunedCsv(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return makeError("cannot read tuned CSV ", path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return makeError("cannot read tuned CSV ", path);
  return parseTunedCsv(text.str(), path);
}

Error TunedTable::add(TunedRow row, Collision collision) {
  // Checked once here, so dispatch can trust every row it finds.
  if (Error e = verifyTunedRow(row))
    return makeError(row.origin, ": ", e.message());
  std::map<int64_t, TunedRow> &byM = table[row.key];
  auto it = byM.find(row.m);
  if (it == byM.end()) {
    byM.emplace(row.m, std::move(row));
    return Error::success();
  }
  if (it->second.kernelNames() == row.kernelNames() && it->second.splitM == row.splitM &&
      it->second.streamWorkgroupsPerSm == row.streamWorkgroupsPerSm)
    return Error::success();
  switch (collision) {
  case Collision::Error:
    return makeError(row.origin, ": another row for this key and m = ", row.m, " at ",
                     it->second.origin, " runs other kernels (", it->second.kernelNames(),
                     "); remove one, or say which file wins");
  case Collision::Replace:
    logDebug(strCat("tuned CSV: ", row.origin, " replaces ", it->second.origin));
    it->second = std::move(row);
    return Error::success();
  case Collision::Keep:
    return Error::success();
  }
  return Error::success();
}

Error TunedTable::add(std::vector<TunedRow> rows, Collision collision) {
  for (TunedRow &r : rows)
    if (Error e = add(std::move(r), collision))
      return e;
  return Error::success();
}

const TunedRow *TunedTable::find(const TunedKey &key, int64_t m) const {
  for (int64_t cu : {key.computeUnits, int64_t(0)}) {
    TunedKey k = key;
    k.computeUnits = cu;
    auto it = table.find(k);
    if (it == table.end() || it->second.empty())
      continue;
    auto row = it->second.lower_bound(m);
    return row == it->second.end() ? &std::prev(row)->second : &row->second;
  }
  return nullptr;
}

std::vector<const TunedRow *> TunedTable::rowsForShape(const TunedKey &key) const {
  std::vector<const TunedRow *> out;
  for (const auto &[k, byM] : table) {
    TunedKey sameDevice = k;
    sameDevice.computeUnits = key.computeUnits;
    if (sameDevice == key)
      for (const auto &entry : byM)
        out.push_back(&entry.second);
  }
  return out;
}

std::vector<const TunedRow *> TunedTable::rows() const {
  std::vector<const TunedRow *> out;
  for (const auto &entry : table)
    for (const auto &row : entry.second)
      out.push_back(&row.second);
  return out;
}

Expected<const TunedTable *> processTunedTable() {
  static std::once_flag once;
  static std::unique_ptr<TunedTable> table;
  static std::string error;
  std::call_once(once, [] {
    auto t = std::make_unique<TunedTable>();
    for (auto [name, text] : shippedTunedCsvs()) {
      Expected<std::vector<TunedRow>> rows = parseTunedCsv(text, strCat("configs/", name));
      if (!rows) {
        error = strCat("shipped tuned CSV: ", rows.takeError().message());
        return;
      }
      if (Error e = t->add(std::move(*rows))) {
        error = strCat("shipped tuned CSVs: ", e.message());
        return;
      }
    }
    // The user's files: their rows replace shipped ones; among themselves a
    // collision is an error unless MXFP4_TUNED_CSV_WINS names the winner.
    TunedTable user;
    const std::string wins = env::tunedCsvWins();
    std::vector<std::string> files;
    const std::string list = env::tunedCsv();
    for (std::string_view f : split(list, ':'))
      if (!trim(f).empty())
        files.emplace_back(trim(f));
    if (!wins.empty() && std::find(files.begin(), files.end(), wins) == files.end()) {
      error = strCat("MXFP4_TUNED_CSV_WINS=", wins, " is not one of MXFP4_TUNED_CSV's files");
      return;
    }
    // The winner first, kept over any later row of its keys.
    std::stable_partition(files.begin(), files.end(),
                          [&](const std::string &f) { return f == wins; });
    for (const std::string &f : files) {
      Expected<std::vector<TunedRow>> rows = readTunedCsv(f);
      if (!rows) {
        error = strCat("MXFP4_TUNED_CSV: ", rows.takeError().message());
        return;
      }
      logDebug(strCat("tuned CSV: ", rows->size(), " rows from ", f));
      const TunedTable::Collision c =
          wins.empty() ? TunedTable::Collision::Error : TunedTable::Collision::Keep;
      if (Error e = user.add(std::move(*rows), c)) {
        error = strCat("MXFP4_TUNED_CSV: ", e.message(), " (MXFP4_TUNED_CSV_WINS=FILE)");
        return;
      }
    }
    for (const TunedRow *r : user.rows())
      (void)t->add(*r, TunedTable::Collision::Replace); // replacing never fails
    table = std::move(t);
  });
  if (!table)
    return makeError(error);
  return static_cast<const TunedTable *>(table.get());
}

} // namespace mxfp4
