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
#include "mxfp4/Support/StrCat.h"

#include <set>
#include <string>
#include <vector>

namespace mxfp4 {

Expected<std::vector<PresetKernel>> moePresetKernels(std::string_view preset, Arch arch,
                                                     ScaleRounding rounding) {
  struct Layer {
    const char *model;
    MoeShape shape;
    Activation activation;
  };
  const Layer kimi{"kimi-k3", {896, 16, 3584, 768}, Activation::Situv2};
  std::vector<Layer> layers{kimi};
  if (preset == "model-moe")
    layers = {kimi,
              {"gpt-oss-120b", {128, 4, 2880, 2880}, Activation::Swiglu},
              {"deepseek-r1", {256, 8, 7168, 256}, Activation::Silu}};
  else if (preset != "seed-moe")
    return makeError("unknown MoE preset '", preset, "'; expected seed-moe or model-moe");
  std::vector<PresetKernel> out;
  std::set<std::string> seen;
  for (const Layer &l : layers)
    for (int64_t tokens : {1, 16, 128, 1024, 4096}) {
      FusedMoeOptions o;
      o.activation.kind = l.activation;
      const int64_t bm = moeBlockM(arch, l.shape, tokens, o);
      const std::string label =
          strCat(toString(arch), " ", l.model, " tokens=", tokens, " block_m=", bm);
      std::vector<Expected<KernelSpec>> specs;
      Expected<std::array<KernelSpec, 2>> sort =
          makeMoeSortSpecs(arch, l.shape.experts, l.shape.topk, bm);
      if (!sort) {
        specs.push_back(sort.takeError());
      } else {
        for (const KernelSpec &k : *sort)
          specs.push_back(k);
      }
      // Weights with every scale below 128 (real ones) and not; stage 2
      // reduced and atomic (MoeCombine).
      for (bool below : {true, false})
        for (int variant : {1, 2, 3}) {
          MoeKernelShape ks{l.shape.experts, l.shape.topk, l.shape.hidden, l.shape.inter, bm,
                            l.activation,    rounding,     tokens,         below};
          ks.atomicStage2 = variant == 3;
          Expected<std::vector<KernelSpec>> made =
              makeMoeStageSpecs(arch, variant == 1 ? 1 : 2, ks);
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
  return out;
}

} // namespace mxfp4
