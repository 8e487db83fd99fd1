/*===- main.c - The dense A4W4 GEMM from C (include/mxfp4/mxfp4.h) ---------===*
 *
 * Without a GPU: precompiles what the GEMM of N x K runs at a few M for
 * gfx950 into a cache directory (argv[1], default ./mxfp4-c-cache), as a
 * build step would. With one: prepares random MXFP4 weights, runs the GEMM
 * on random BF16 activations and checks it against a float64 reference
 * computed here from the host quantizer's output.
 *
 *===----------------------------------------------------------------------===*/
#include "mxfp4/mxfp4.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 512, K = 1024, M = 8 };

#define TRY(call)                                                                                  \
  do {                                                                                             \
    mxfp4_status s_ = (call);                                                                      \
    if (s_ != MXFP4_STATUS_OK) {                                                                   \
      fprintf(stderr, "%s failed (%s): %s\n", #call, mxfp4_status_string(s_),                      \
              mxfp4_last_error_message());                                                         \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

static double e2m1(unsigned code) {
  static const double kMagnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1 : 1) * kMagnitude[code & 7];
}

/* Element i of a packed E2M1 row with E8M0 scales. */
static double mxValue(const uint8_t *codes, const uint8_t *scales, int64_t i) {
  unsigned code = (codes[i / 2] >> (i % 2 ? 4 : 0)) & 15;
  return e2m1(code) * ldexp(1.0, (int)scales[i / 32] - 127);
}

static float bf16ToFloat(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static int precompile(const char *dir) {
  mxfp4_jit_options options = {sizeof options, dir, 0};
  mxfp4_jit *jit;
  TRY(mxfp4_jit_create(&options, &jit));
  const int64_t ms[] = {1, 16, 256, 4096};
  size_t kernels = 0;
  TRY(mxfp4_jit_precompile_gemm(jit, MXFP4_ARCH_GFX950, N, K, ms, 4, MXFP4_ROUNDING_ROUNDUP, 0,
                                &kernels));
  mxfp4_jit_stats stats;
  TRY(mxfp4_jit_stats_get(jit, &stats));
  printf("no device (%s)\nprecompiled %zu gfx950 kernels for %dx%d into %s: %llu compiled, "
         "%llu from the cache\n",
         mxfp4_last_error_message(), kernels, N, K, mxfp4_jit_cache_directory(jit),
         (unsigned long long)stats.compiles, (unsigned long long)stats.disk_hits);
  mxfp4_jit_destroy(jit);
  return 0;
}

int main(int argc, char **argv) {
  printf("mxfp4-jit %s, C ABI %u\n", mxfp4_version(), mxfp4_abi_version());
  if (mxfp4_abi_version() != MXFP4_ABI_VERSION)
    return fprintf(stderr, "built against C ABI %d\n", MXFP4_ABI_VERSION), 1;
  mxfp4_device *dev;
  mxfp4_status opened = mxfp4_device_open(0, &dev);
  if (opened == MXFP4_STATUS_NO_DEVICE)
    return precompile(argc > 1 ? argv[1] : "mxfp4-c-cache");
  TRY(opened);

  /* Random weights and activations, the weights as MXFP4 from the host
   * quantizer. */
  static uint16_t w[N * K], a[M * K], out[M * N];
  static uint8_t wCodes[N * K / 2], wScales[N * K / 32], aCodes[M * K / 2], aScales[M * K / 32];
  srand(7);
  for (int i = 0; i < N * K; ++i)
    w[i] = (uint16_t)(0x3C00 + rand() % 0x0800) | (uint16_t)(rand() % 2 << 15);
  for (int i = 0; i < M * K; ++i)
    a[i] = (uint16_t)(0x3E00 + rand() % 0x0400) | (uint16_t)(rand() % 2 << 15);
  TRY(mxfp4_quantize_host(w, N, K, MXFP4_ROUNDING_ROUNDUP, wCodes, wScales));
  TRY(mxfp4_quantize_host(a, M, K, MXFP4_ROUNDING_ROUNDUP, aCodes, aScales));

  mxfp4_gemm_weight *weight;
  TRY(mxfp4_gemm_weight_prepare(dev, wCodes, sizeof wCodes, wScales, sizeof wScales, N, K,
                                MXFP4_ARCH_DEVICE, &weight));
  void *dA, *dOut;
  TRY(mxfp4_device_alloc(dev, sizeof a, &dA));
  TRY(mxfp4_device_alloc(dev, sizeof out, &dOut));
  TRY(mxfp4_copy_to_device(dev, dA, a, sizeof a));
  TRY(mxfp4_gemm_a4w4(dev, NULL, dA, M, weight, dOut, NULL));
  TRY(mxfp4_device_synchronize(dev));
  TRY(mxfp4_copy_to_host(dev, out, dOut, sizeof out));

  /* out = quantize(a) * W^T, in float64 from the same MXFP4 operands. */
  double err = 0, ref = 0;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      double sum = 0;
      for (int k = 0; k < K; ++k)
        sum += mxValue(aCodes + r * K / 2, aScales + r * K / 32, k) *
               mxValue(wCodes + c * K / 2, wScales + c * K / 32, k);
      double d = bf16ToFloat(out[r * N + c]) - sum;
      err += d * d;
      ref += sum * sum;
    }
  double relL2 = sqrt(err / ref);
  char name[128];
  TRY(mxfp4_device_name(dev, name, sizeof name));
  printf("%s: gemm %dx%dx%d through the C API, rel-L2 vs float64 %.2e -> %s\n", name, M, N, K,
         relL2, relL2 < 1e-2 ? "PASS" : "FAIL");
  TRY(mxfp4_device_free(dev, dA));
  TRY(mxfp4_device_free(dev, dOut));
  mxfp4_gemm_weight_destroy(weight);
  mxfp4_device_destroy(dev);
  return relL2 < 1e-2 ? 0 : 1;
}
