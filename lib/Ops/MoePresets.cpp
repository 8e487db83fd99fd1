//===- MoePresets.cpp - The MoE kernels of mxfp4-jit-compile's presets ----===//
//
// seed-moe (seed 002's Kimi-K3 layer) and model-moe (Kimi-K3, GPT-OSS-120B,
// DeepSeek-R1 at TP8): every kernel fusedMoeA4W4 launches at 1 to 4096
// tokens, for AOT compilation (Ops/GemmA4W4Plan.h).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Kernels/MoeSpecs.h"
#include "mxfp4/Ops/FusedMoe.h"
#include "mxfp4/Ops/GemmA4W4Plan.h"
#include "mxfp4/Ops/MoeReference.h"
#include "mxfp4/Support/StrCat.h"

#include <algorithm>

#include <set>
#include <string>
#include <vector>

namespace mxfp4 {

/// The kernels fusedMoeA4W4 runs for `tokens` at `bm`: the sorting, then
/// both stages for weights with every scale below 128 (real ones) and not,
/// stage 1 fused and not (a W1 bias, or fuseActivation = false), stage 2
/// reduced and atomic (MoeCombine).
static void addMoeKernels(std::vector<PresetKernel> &out, std::set<std::string> &seen, Arch arch,
                          const MoeShape &shape, Activation activation, int64_t tokens, int64_t bm,
                          ScaleRounding rounding, const std::string &label) {
  std::vector<Expected<KernelSpec>> specs;
  Expected<std::array<KernelSpec, 2>> sort = makeMoeSortSpecs(arch, shape.experts, shape.topk, bm);
  if (!sort) {
    specs.push_back(sort.takeError());
  } else {
    for (const KernelSpec &k : *sort)
      specs.push_back(k);
  }
  for (bool below : {true, false})
    for (int variant : {1, 2, 3, 0}) {
      MoeKernelShape ks{shape.experts, shape.topk, shape.hidden, shape.inter, bm,
                        activation,    rounding,   tokens,       below};
      ks.fuseActivation = variant != 0;
      ks.atomicStage2 = variant == 3;
      Expected<std::vector<KernelSpec>> made = makeMoeStageSpecs(arch, variant <= 1 ? 1 : 2, ks);
      if (!made) {
        specs.push_back(made.takeError());
        continue;
      }
      for (const KernelSpec &k : *made)
        specs.push_back(k);
    }
  for (Expected<KernelSpec> &spec : specs) {
    if (!spec) {
      std::string error = spec.takeError().message();
      if (seen.insert(label + error).second)
        out.push_back({label, std::nullopt, error});
    } else if (seen.insert(spec->name()).second) {
      out.push_back({label, *spec, ""});
    }
  }
}

Expected<std::vector<PresetKernel>> moePresetKernels(std::string_view preset, Arch arch,
                                                     ScaleRounding rounding) {
  std::vector<MoeModel> layers{moeModels()[0]};
  if (preset == "model-moe")
    layers.assign(moeModels().begin(), moeModels().end());
  else if (preset != "seed-moe")
    return makeError("unknown MoE preset '", preset, "'; expected seed-moe or model-moe");
  Expected<const TunedTable *> tuned = processTunedTable();
  if (!tuned)
    return tuned.takeError();
  std::vector<PresetKernel> out;
  std::set<std::string> seen;
  for (const MoeModel &l : layers)
    for (int64_t tokens : {1, 16, 128, 1024, 4096}) {
      FusedMoeOptions o;
      o.activation = l.activation;
      // Dispatch's block_m on any device, and on each size a shipped row
      // tunes for these tokens.
      std::set<int64_t> bms{moeBlockM(arch, l.shape, tokens, o)};
      for (const TunedRow *row :
           (*tuned)->rowsForShape(moeTunedKey(arch, l.shape, l.activation.kind, 0)))
        bms.insert(moeBlockM(arch, l.shape, tokens, o, row->key.computeUnits));
      for (int64_t bm : bms)
        addMoeKernels(out, seen, arch, l.shape, l.activation.kind, tokens, bm, rounding,
                      strCat(toString(arch), " ", l.name, " tokens=", tokens, " block_m=", bm));
    }
  return out;
}

void appendMoeRowKernels(std::vector<PresetKernel> &out, std::set<std::string> &seen,
                         const TunedRow &row, int64_t previousM, ScaleRounding rounding,
                         bool last) {
  const TunedKey &key = row.key;
  const MoeShape shape{key.experts, key.topk, key.k, key.n};
  const int64_t bm = row.kernels.front().bm;
  const TargetInfo &target = targetInfo(key.arch);
  const int64_t columns =
      std::min(2 * moePaddedRow(key.arch, shape.inter), moePaddedRow(key.arch, shape.hidden));
  // Every token count the row serves: the K split of moe_gemm follows the
  // count until the active experts' blocks fill the device.
  for (int64_t t = previousM + 1; t <= row.m || last; ++t) {
    addMoeKernels(out, seen, key.arch, shape, key.activation, t, bm, rounding,
                  strCat(toString(key.arch), " fused_moe tokens=", t, " block_m=", bm, " (",
                         row.origin, ")"));
    const int64_t active = std::min(t * shape.topk, shape.experts);
    if (t >= row.m && (target.moeSplitKWorkgroups == 0 ||
                       active * columns / target.defaultBn >= target.moeSplitKWorkgroups))
      break;
  }
}

} // namespace mxfp4
