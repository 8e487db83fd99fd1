//===- TunedCsv.h - Tuned dispatch rows: the CSV format and its table -*- C++ -*-===//
//
// mxfp4-tune measures, per target, device size and shape, which kernels a
// call should run, and writes one CSV row per (key, M bucket):
//
//   target,cu_num,op,m,n,k,experts,topk,activation,split_m,stream_wgs,kernels,us,err,tuner
//   sm_90a,132,gemm_a4w4,128,8448,7168,0,0,none,0,0,qdq_mxfp4_..+gemm_qdqa4w4_..,30.1,0.0016,1
//
// `kernels` lists the kernels of the call in launch order, joined by '+'
// (canonical names, Kernels/KernelSpec.h). A dense row's are the plan of
// gemmA4W4 (Ops/GemmA4W4Plan.h): gemm_a4w4 alone, quant_mxfp4 +
// gemm_mxa4w4, or qdq_mxfp4 + gemm_qdqa4w4 (+ a second gemm_qdqa4w4 for
// rows [split_m, M)); `stream_wgs` is the streamed image's quantizer
// workgroups per SM. A row covers the M above the next smaller row's m up
// to its own m (M is padded up to the next row); M above every row takes the
// largest. cu_num 0 matches any device of the target.
//
// Every row is checked when read: the names parse and verify, they belong
// to the row's target and shape, their sequence is a plan dispatch can run.
// Errors name the file and line. Two rows for one key and M with other
// kernels are a collision, an error that names both rows, unless the
// caller says which one wins (TunedTable::Collision).
//
//===----------------------------------------------------------------------===//
#ifndef MXFP4_OPS_TUNEDCSV_H
#define MXFP4_OPS_TUNEDCSV_H

#include "mxfp4/Kernels/KernelSpec.h"
#include "mxfp4/Support/Error.h"

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace mxfp4 {

/// What a row tunes: a dense GEMM (gemmA4W4) or a fused MoE layer.
enum class TunedOp : uint8_t { Gemm, FusedMoe };
std::string_view toString(TunedOp op);

/// What identifies the calls a row serves, but for M. A dense GEMM's N and
/// K; a MoE layer's N = inter, K = hidden, its experts, topk and activation
/// (0, 0 and none for a GEMM).
struct TunedKey {
  Arch arch = Arch::SM90A;
  /// Streaming multiprocessors / compute units of the device; 0: any.
  int64_t computeUnits = 0;
  TunedOp op = TunedOp::Gemm;
  int64_t n = 0, k = 0;
  int64_t experts = 0, topk = 0;
  Activation activation = Activation::None;

  /// A dense GEMM's key.
  static TunedKey gemm(Arch arch, int64_t computeUnits, int64_t n, int64_t k) {
    TunedKey key;
    key.arch = arch;
    key.computeUnits = computeUnits;
    key.n = n;
    key.k = k;
    return key;
  }

  auto tie() const { return std::tie(arch, computeUnits, op, n, k, experts, topk, activation); }
  bool operator<(const TunedKey &o) const { return tie() < o.tie(); }
  bool operator==(const TunedKey &o) const { return tie() == o.tie(); }
};

struct TunedRow {
  TunedKey key;
  /// The largest M this row serves (its bucket's upper bound).
  int64_t m = 0;
  /// Dense: rows [0, splitM) by the first GEMM, the rest by the second,
  /// when M is above it (0: one GEMM).
  int64_t splitM = 0;
  /// Dense: the streamed image's quantizer workgroups per SM (0: none).
  int64_t streamWorkgroupsPerSm = 0;
  /// The kernels, in launch order.
  std::vector<KernelSpec> kernels;
  /// What the tuner measured: the median time and the rel-L2 error
  /// against the float64 reference.
  double us = 0, error = 0;
  /// Who wrote the row: the tuner's version, or "table" for rows made from
  /// the built-in tile table (the presets).
  std::string tuner;
  /// "file:line" of the row, for messages.
  std::string origin;

  /// The `kernels` column.
  std::string kernelNames() const;
};

/// The header line, without a newline.
std::string_view tunedCsvHeader();
/// One row as a CSV line, without a newline.
std::string formatTunedRow(const TunedRow &row);
/// The header and every row, one a line.
std::string formatTunedCsv(const std::vector<TunedRow> &rows);

/// Checks that the row's kernels are a plan dispatch can run for its key:
/// their target and shape, their order, split_m and stream_wgs.
Error verifyTunedRow(const TunedRow &row);

/// Parses CSV text (a header naming every column, in any order; unknown
/// columns are ignored; blank lines and lines starting with '#' skipped).
/// `file` names the text in errors ("file:line: ...").
Expected<std::vector<TunedRow>> parseTunedCsv(std::string_view text, std::string_view file);
/// Reads and parses a file.
Expected<std::vector<TunedRow>> readTunedCsv(const std::string &path);

/// Rows by key and M bucket.
class TunedTable {
public:
  /// What a row for a key and M already held does to it: an error naming
  /// both (unless they run the same kernels), replace it, or keep it.
  enum class Collision : uint8_t { Error, Replace, Keep };

  /// Adds a row after verifyTunedRow (an error naming its origin if it
  /// fails), so every row the table holds is one dispatch can run.
  Error add(TunedRow row, Collision collision = Collision::Error);
  Error add(std::vector<TunedRow> rows, Collision collision = Collision::Error);

  /// The row serving M for the key: the smallest row M >= m, else the
  /// largest. A key with a device size falls back to the rows for any
  /// device (cu_num 0). Null if the key has no rows.
  const TunedRow *find(const TunedKey &key, int64_t m) const;
  /// Every row of the key's target, op and shape, whatever the device size.
  std::vector<const TunedRow *> rowsForShape(const TunedKey &key) const;
  /// Every row, ordered by key and M.
  std::vector<const TunedRow *> rows() const;
  bool empty() const { return table.empty(); }

private:
  std::map<TunedKey, std::map<int64_t, TunedRow>> table;
};

/// The rows dispatch follows in this process, read once: the CSVs shipped
/// in configs/ (built into the library), then the files MXFP4_TUNED_CSV
/// lists (':'-separated), whose rows replace shipped rows of the same key
/// and M. Two of those files colliding is an error unless
/// MXFP4_TUNED_CSV_WINS names the file that wins. An unreadable or
/// malformed file is an error every dispatch reports.
Expected<const TunedTable *> processTunedTable();

/// The CSVs shipped in configs/: (file name, text).
const std::vector<std::pair<std::string_view, std::string_view>> &shippedTunedCsvs();

} // namespace mxfp4

#endif // MXFP4_OPS_TUNEDCSV_H
