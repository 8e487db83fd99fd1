/*===- CApiTest.c - The C API, compiled as C99 -----------------------------===*
 *
 * Runs without a GPU: versions, argument checks and their messages, the
 * thread-local last error, the host quantizer, and the JIT's compile, memory
 * and disk paths on gfx950 into a temporary cache directory. A device, when
 * present, is opened and closed. Prints each failed check and exits 1.
 *
 *===----------------------------------------------------------------------===*/
#define _POSIX_C_SOURCE 200809L
#include "mxfp4/mxfp4.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond,      \
              mxfp4_last_error_message());                                                         \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* `status` is `want` and the last error contains `text`. */
#define CHECK_FAILS(status, want, text)                                                            \
  do {                                                                                             \
    mxfp4_status s_ = (status);                                                                    \
    CHECK(s_ == (want));                                                                           \
    CHECK(strstr(mxfp4_last_error_message(), (text)) != NULL);                                     \
  } while (0)

static const char *kKernel =
    "gemm_a4w4_gfx950_n256_k256_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_sgfx950mfma16_anone_"
    "ebf16";

static void testVersions(void) {
  CHECK(mxfp4_abi_version() == MXFP4_ABI_VERSION);
  CHECK(strlen(mxfp4_version()) > 0);
  CHECK(strstr(mxfp4_compiler_identity(), "mxfp4-jit") != NULL);
  CHECK(strcmp(mxfp4_status_string(MXFP4_STATUS_INVALID_ARGUMENT), "invalid argument") == 0);
  CHECK(strcmp(mxfp4_status_string((mxfp4_status)99), "unknown status") == 0);
  CHECK(strcmp(mxfp4_arch_string(MXFP4_ARCH_SM90A), "sm_90a") == 0);
  CHECK(strcmp(mxfp4_arch_string(MXFP4_ARCH_GFX1250), "gfx1250") == 0);
  CHECK(strcmp(mxfp4_arch_string((mxfp4_arch)42), "unknown") == 0);
}

static void testArgumentChecks(void) {
  mxfp4_device *dev = (mxfp4_device *)&failures; /* never dereferenced: checks come first */
  mxfp4_gemm_weight *w = (mxfp4_gemm_weight *)&failures;
  uint8_t bytes[64] = {0};
  CHECK_FAILS(mxfp4_device_open(0, NULL), MXFP4_STATUS_INVALID_ARGUMENT, "mxfp4_device_open");
  mxfp4_device *opened = dev;
  CHECK_FAILS(mxfp4_device_open(-1, &opened), MXFP4_STATUS_INVALID_ARGUMENT, "negative");
  CHECK(opened == NULL); /* outputs are cleared on failure */
  CHECK_FAILS(mxfp4_gemm_weight_prepare(NULL, bytes, 8, bytes, 1, 4, 32, MXFP4_ARCH_DEVICE, &w),
              MXFP4_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK(w == NULL);
  /* Sizes that do not match the shape, and shapes whose size overflows. */
  CHECK_FAILS(mxfp4_gemm_weight_prepare(dev, bytes, 7, bytes, 1, 4, 32, MXFP4_ARCH_DEVICE, &w),
              MXFP4_STATUS_INVALID_ARGUMENT, "needs n*k/2 code");
  CHECK_FAILS(mxfp4_gemm_weight_prepare(dev, bytes, 8, bytes, 1, 4, 33, MXFP4_ARCH_DEVICE, &w),
              MXFP4_STATUS_INVALID_ARGUMENT, "multiple of 32");
  CHECK_FAILS(mxfp4_gemm_weight_prepare(dev, bytes, 0, bytes, 0, INT64_MAX, INT64_MAX - 31,
                                        MXFP4_ARCH_DEVICE, &w),
              MXFP4_STATUS_INVALID_ARGUMENT, "needs n*k/2");
  CHECK_FAILS(mxfp4_gemm_weight_prepare(dev, bytes, 8, bytes, 1, 4, 32, (mxfp4_arch)7, &w),
              MXFP4_STATUS_INVALID_ARGUMENT, "not an mxfp4_arch");
  CHECK_FAILS(mxfp4_gemm_a4w4(NULL, NULL, bytes, 1, w, bytes, NULL), MXFP4_STATUS_INVALID_ARGUMENT,
              "mxfp4_gemm_a4w4");
  CHECK_FAILS(mxfp4_quantize_host(NULL, 1, 32, MXFP4_ROUNDING_EVEN, bytes, bytes),
              MXFP4_STATUS_INVALID_ARGUMENT, "NULL");
  CHECK_FAILS(
      mxfp4_quantize_host((const uint16_t *)bytes, 1, 31, MXFP4_ROUNDING_EVEN, bytes, bytes),
      MXFP4_STATUS_INVALID_ARGUMENT, "32-element blocks");
  CHECK_FAILS(mxfp4_quantize_host((const uint16_t *)bytes, INT64_MAX / 32, 64, MXFP4_ROUNDING_EVEN,
                                  bytes, bytes),
              MXFP4_STATUS_INVALID_ARGUMENT, "32-element blocks");
  CHECK_FAILS(mxfp4_quantize_host((const uint16_t *)bytes, 1, 32, (mxfp4_rounding)4, bytes, bytes),
              MXFP4_STATUS_INVALID_ARGUMENT, "not an mxfp4_rounding");
  mxfp4_moe_shape shape = {8, 2, 64, 64};
  mxfp4_moe_weights *moe = NULL;
  CHECK_FAILS(mxfp4_moe_weights_prepare(dev, &shape, bytes, 1, bytes, 1, bytes, 1, bytes, 1, NULL,
                                        NULL, MXFP4_GATE_UP_GGUU, MXFP4_ARCH_GFX950, &moe),
              MXFP4_STATUS_INVALID_ARGUMENT, "do not match E 8");
  shape.topk = 9;
  CHECK_FAILS(mxfp4_moe_weights_prepare(dev, &shape, bytes, 1, bytes, 1, bytes, 1, bytes, 1, NULL,
                                        NULL, MXFP4_GATE_UP_GGUU, MXFP4_ARCH_GFX950, &moe),
              MXFP4_STATUS_INVALID_ARGUMENT, "topk");
  CHECK(moe == NULL);
  /* Destroying NULL is a no-op. */
  mxfp4_device_destroy(NULL);
  mxfp4_gemm_weight_destroy(NULL);
  mxfp4_moe_weights_destroy(NULL);
  mxfp4_jit_destroy(NULL);
}

static void *failInThread(void *arg) {
  (void)arg;
  CHECK(strcmp(mxfp4_last_error_message(), "") == 0); /* a new thread has no error */
  CHECK(mxfp4_quantize_host(NULL, 1, 32, MXFP4_ROUNDING_EVEN, NULL, NULL) != MXFP4_STATUS_OK);
  return NULL;
}

static void testErrorsAreThreadLocal(void) {
  CHECK(mxfp4_device_name(NULL, NULL, 0) == MXFP4_STATUS_INVALID_ARGUMENT);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, failInThread, NULL) == 0);
  CHECK(pthread_join(t, NULL) == 0);
  CHECK(strstr(mxfp4_last_error_message(), "mxfp4_device_name") != NULL);
}

/* E2M1 code -> value. */
static double e2m1(unsigned code) {
  static const double kMagnitude[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1 : 1) * kMagnitude[code & 7];
}

static void testHostQuantizer(void) {
  /* Two rows of 32 with a power-of-two amax, whose scale every rounding mode
   * agrees on: E2M1 times that scale holds each value exactly. */
  uint16_t x[64];
  for (int i = 0; i < 64; ++i) {
    static const uint16_t kExact[8] = {0x3F80, 0xBF00, 0x4000, 0xC040,
                                       0x0000, 0x3FC0, 0x4080, 0xC080}; /* 1 -0.5 2 -3 0 1.5 4 -4 */
    uint16_t v = kExact[i % 8];
    x[i] = (uint16_t)(v + (i >= 32 && v ? 0x0080 : 0)); /* row 1: times 2 */
  }
  for (int mode = 0; mode < 4; ++mode) {
    uint8_t codes[32], scales[2];
    CHECK(mxfp4_quantize_host(x, 2, 32, (mxfp4_rounding)mode, codes, scales) == MXFP4_STATUS_OK);
    for (int i = 0; i < 64; ++i) {
      unsigned code = (codes[i / 2] >> (i % 2 ? 4 : 0)) & 15;
      double scale = 1.0;
      for (int e = scales[i / 32]; e > 127; --e)
        scale *= 2;
      for (int e = scales[i / 32]; e < 127; ++e)
        scale /= 2;
      uint32_t bits = (uint32_t)x[i] << 16;
      float want;
      memcpy(&want, &bits, 4);
      CHECK(e2m1(code) * scale == (double)want);
    }
  }
}

static void testDevice(void) {
  mxfp4_device *dev = NULL;
  mxfp4_status s = mxfp4_device_open(0, &dev);
  if (s == MXFP4_STATUS_NO_DEVICE) {
    CHECK(strncmp(mxfp4_last_error_message(), "no device", 9) == 0);
    CHECK(dev == NULL);
    return;
  }
  CHECK(s == MXFP4_STATUS_OK);
  mxfp4_arch arch = MXFP4_ARCH_DEVICE;
  char name[64];
  CHECK(mxfp4_device_arch(dev, &arch) == MXFP4_STATUS_OK && arch != MXFP4_ARCH_DEVICE);
  CHECK(mxfp4_device_name(dev, name, sizeof name) == MXFP4_STATUS_OK && strlen(name) > 0);
  mxfp4_device_destroy(dev);
}

static void testJit(const char *dir) {
  mxfp4_jit_options bad = {0, dir, 0};
  mxfp4_jit *jit = NULL;
  CHECK_FAILS(mxfp4_jit_create(&bad, &jit), MXFP4_STATUS_INVALID_ARGUMENT, "struct_size");
  mxfp4_jit_options options = {sizeof options, dir, 0};
  CHECK(mxfp4_jit_create(&options, &jit) == MXFP4_STATUS_OK);
  CHECK(strcmp(mxfp4_jit_cache_directory(jit), dir) == 0);
  CHECK(mxfp4_jit_get_kernel(jit, kKernel) == MXFP4_STATUS_OK);
  CHECK(mxfp4_jit_get_kernel(jit, kKernel) == MXFP4_STATUS_OK);
  mxfp4_jit_stats stats;
  CHECK(mxfp4_jit_stats_get(jit, &stats) == MXFP4_STATUS_OK);
  CHECK(stats.compiles == 1 && stats.memory_hits == 1 && stats.disk_hits == 0);
  CHECK_FAILS(mxfp4_jit_get_kernel(jit, "gemm_a4w4_gfx950_n256"), MXFP4_STATUS_INVALID_ARGUMENT,
              "gemm_a4w4_gfx950_n256");
  /* What dispatch runs at M = 1 and 4096 on gfx950. */
  const int64_t ms[] = {1, 4096};
  size_t kernels = 0;
  CHECK(mxfp4_jit_precompile_gemm(jit, MXFP4_ARCH_GFX950, 512, 256, ms, 2, MXFP4_ROUNDING_ROUNDUP,
                                  0, &kernels) == MXFP4_STATUS_OK);
  CHECK(kernels >= 1);
  CHECK_FAILS(mxfp4_jit_precompile_gemm(jit, MXFP4_ARCH_DEVICE, 512, 256, ms, 2,
                                        MXFP4_ROUNDING_ROUNDUP, 0, NULL),
              MXFP4_STATUS_INVALID_ARGUMENT, "must name a target");
  CHECK_FAILS(mxfp4_jit_precompile_gemm(jit, MXFP4_ARCH_GFX950, 512, 250, ms, 2,
                                        MXFP4_ROUNDING_ROUNDUP, 0, NULL),
              MXFP4_STATUS_ERROR, "K = 250");
  mxfp4_jit_destroy(jit);

  /* A second JIT on the directory, as a new process: disk hits only. */
  options.assert_cache_hit = 1;
  CHECK(mxfp4_jit_create(&options, &jit) == MXFP4_STATUS_OK);
  CHECK(mxfp4_jit_get_kernel(jit, kKernel) == MXFP4_STATUS_OK);
  CHECK(mxfp4_jit_precompile_gemm(jit, MXFP4_ARCH_GFX950, 512, 256, ms, 2, MXFP4_ROUNDING_ROUNDUP,
                                  0, NULL) == MXFP4_STATUS_OK);
  CHECK(mxfp4_jit_stats_get(jit, &stats) == MXFP4_STATUS_OK);
  CHECK(stats.compiles == 0 && stats.disk_hits == 1 + kernels);
  /* A kernel nobody compiled into it is an error, not a compile. */
  CHECK(mxfp4_jit_get_kernel(jit, "gemm_a4w4_gfx950_n512_k256_bm16_bn256_bk256_ks1_even_"
                                  "wgfx950mfma16_sgfx950mfma16_anone_ebf16") == MXFP4_STATUS_ERROR);
  mxfp4_jit_destroy(jit);
  CHECK(mxfp4_jit_global() != NULL);
  mxfp4_jit_destroy(mxfp4_jit_global()); /* ignored */
}

int main(void) {
  char dir[] = "/tmp/mxfp4-capi-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  testVersions();
  testArgumentChecks();
  testErrorsAreThreadLocal();
  testHostQuantizer();
  testDevice();
  testJit(dir);
  char command[64];
  snprintf(command, sizeof command, "rm -rf %s", dir);
  if (system(command) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  if (failures) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("C API: all checks passed\n");
  return 0;
}
