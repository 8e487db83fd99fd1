//===- TunedCsvFuzzer.cpp - Tuned CSV parsing on arbitrary bytes -----------===//
//
// A CSV either fails with a message or gives rows that verify, that a
// table takes, and that format back to a CSV parsing to the same rows.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Ops/TunedCsv.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

using namespace mxfp4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Expected<std::vector<TunedRow>> rows = parseTunedCsv(text, "fuzz.csv");
  if (!rows) {
    if (rows.takeError().message().rfind("fuzz.csv", 0) != 0)
      std::abort(); // every error names the file (and the line)
    return 0;
  }
  for (const TunedRow &r : *rows)
    if (verifyTunedRow(r))
      std::abort();
  std::string again = formatTunedCsv(*rows);
  Expected<std::vector<TunedRow>> back = parseTunedCsv(again, "again.csv");
  if (!back || formatTunedCsv(*back) != again)
    std::abort();
  TunedTable table;
  if (!table.add(std::move(*rows), TunedTable::Collision::Keep))
    for (const TunedRow *r : table.rows())
      for (int64_t m : {int64_t(1), r->m, r->m + 1, int64_t(1) << 40})
        if (!table.find(r->key, m))
          std::abort(); // a key with rows always has a row for any M
  return 0;
}
