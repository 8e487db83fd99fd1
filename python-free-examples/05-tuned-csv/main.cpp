//===- main.cpp - Example 5: dispatch from a tuned CSV --------------------===//
//
// Seed 003's workflow from an engine's side: mxfp4-tune writes a CSV of the
// best kernels per shape and M bucket on one GPU; the engine points
// MXFP4_TUNED_CSV at it, precompiles exactly those kernels ahead of time,
// and every GEMM then dispatches from its rows. This example:
//  1. writes a small tuned CSV for a 4096 x 4096 GEMM on sm_90a (the rows
//     mxfp4-tune would write, here made from forced tiles: decode calls up
//     to M = 16 on a 32-row tile with split-K 2);
//  2. sets MXFP4_TUNED_CSV before the first dispatch (the table is read
//     once per process) and prints which kernels dispatch picks for a few
//     M, with the CSV and without it (ignoreTunedCsv); a row serves the Ms
//     up to its own above the next smaller row's, and the largest row
//     every M above it (the tuner writes rows up to the largest M it
//     serves);
//  3. precompiles the CSV's kernels (what mxfp4-jit-compile --from-csv
//     does) through the Jit, into the disk cache a serving process reads;
//  4. shows the collision guard: a second file with another kernel for the
//     same key and M is an error naming both rows.
// The CSV's path is the first argument (default: a file in /tmp).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/JIT/Jit.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/TunedCsv.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace mxfp4;

static int fail(const std::string &msg) {
  std::fprintf(stderr, "tuned-csv: %s\n", msg.c_str());
  return 1;
}

int main(int argc, char **argv) {
  const std::string csv = argc > 1 ? argv[1] : "/tmp/mxfp4-example-tuned.csv";
  const int64_t n = 4096, k = 4096, sms = 132;
  const GemmWeightFacts weights{Arch::SM90A, n, k, /*scalesBelow128=*/true, sms};
  const TunedKey key = TunedKey::gemm(Arch::SM90A, sms, n, k);

  // 1. Rows as the tuner writes them: one per M bucket (M <= 4, M <= 16).
  std::vector<TunedRow> rows;
  for (int64_t bucket : {4, 16}) {
    GemmA4W4Options forced;
    forced.overrides.bm = 32;
    forced.overrides.splitK = 2;
    forced.overrides.ignoreTunedCsv = true;
    auto plan = planGemmA4W4(nullptr, weights, bucket, forced);
    if (!plan)
      return fail(plan.takeError().message());
    TunedRow row = tunedRowFromPlan(*plan, key, bucket);
    row.tuner = "example";
    rows.push_back(row);
  }
  std::ofstream(csv) << formatTunedCsv(rows);
  std::printf("wrote %s (%zu rows)\n", csv.c_str(), rows.size());

  // 2. Dispatch from it.
  ::setenv("MXFP4_TUNED_CSV", csv.c_str(), 1);
  for (int64_t m : {1, 16, 64}) {
    GemmA4W4Options untuned;
    untuned.overrides.ignoreTunedCsv = true;
    auto tuned = planGemmA4W4(weights, m);
    auto builtin = planGemmA4W4(weights, m, untuned);
    if (!tuned || !builtin)
      return fail(tuned ? builtin.takeError().message() : tuned.takeError().message());
    std::printf("M=%-3lld tuned:    %s\n       built-in: %s\n", (long long)m,
                tuned->gemms.back().name().c_str(), builtin->gemms.back().name().c_str());
  }

  // 3. Ahead of time: the kernels of every row, as served.
  auto table = processTunedTable();
  if (!table)
    return fail(table.takeError().message());
  for (const PresetKernel &pk :
       tunedRowKernels((*table)->rowsForShape(key), kDefaultScaleRounding)) {
    if (!pk.spec)
      return fail(pk.label + ": " + pk.error);
    Jit::Source from;
    auto kernel = Jit::global().get(*pk.spec, &from);
    if (!kernel)
      return fail(kernel.takeError().message());
    std::printf("AOT %s: %s\n", pk.spec->name().c_str(),
                from == Jit::Source::Compiled ? "compiled" : "already cached");
  }

  // 4. Two files disagreeing on a key and M.
  std::vector<TunedRow> other = rows;
  other[0].kernels.back().splitK = 1;
  other[0].origin = "other.csv:2";
  rows[0].origin = csv + ":2";
  TunedTable guard;
  if (Error e = guard.add(rows[0]))
    return fail(e.message());
  if (Error e = guard.add(other[0]))
    std::printf("collision guard: %s\n", e.message().c_str());
  else
    return fail("two kernels for one key and M were accepted");
  return 0;
}
