/*===- mxfp4.h - The C API of mxfp4-jit ----------------------------*- C -*-===*
 *
 * C99, no C++ in it: for engines written in C, and for bindings (Rust,
 * Python ctypes, Go) that cannot call C++. The same library as the C++ API
 * (libmxfp4jit.so, or libmxfp4jit-rt.so serving kernels from an AOT cache).
 *
 *   mxfp4_device *dev;
 *   mxfp4_gemm_weight *w;
 *   if (mxfp4_device_open(0, &dev) != MXFP4_STATUS_OK)
 *     fprintf(stderr, "%s\n", mxfp4_last_error_message());
 *   mxfp4_gemm_weight_prepare(dev, w_fp4, n * k / 2, w_scale, n * k / 32, n, k,
 *                             MXFP4_ARCH_DEVICE, &w);                  // once
 *   mxfp4_gemm_a4w4(dev, stream, a_bf16, m, w, out_bf16, NULL);        // per call
 *
 * Every function returns an mxfp4_status. On failure it also sets this
 * thread's last error message (mxfp4_last_error_message), which says what
 * was wrong; on success the message is left as it was. No function aborts or
 * lets a C++ exception cross this boundary, and output handles are written
 * only on success (NULL otherwise). Handles are not reference counted:
 * destroy weights before the device they live on. Functions that take a
 * device may be called from any thread, concurrently (as the C++ API).
 *
 * Layouts (the C++ API's): activations and outputs row-major BF16 on the
 * device; weights on the host as packed E2M1 [N, K/2] (even K in the low
 * nibble) with E8M0 scales [N, K/32], row-major. `stream` is a CUstream or
 * hipStream_t (NULL: the default stream).
 *
 *===----------------------------------------------------------------------===*/
#ifndef MXFP4_MXFP4_H
#define MXFP4_MXFP4_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. mxfp4_abi_version() returns the library's:
 * a caller built against another value must not use the library. The value
 * changes whenever a declaration here changes incompatibly. */
#define MXFP4_ABI_VERSION 1

typedef enum mxfp4_status {
  MXFP4_STATUS_OK = 0,
  /* A NULL handle or pointer, a size that does not match the shape, an enum
   * value out of range: caught before the library ran. */
  MXFP4_STATUS_INVALID_ARGUMENT = 1,
  /* No CUDA driver or HIP runtime, or no GPU with that ordinal. */
  MXFP4_STATUS_NO_DEVICE = 2,
  /* The library refused or failed the call (shape, alignment, target, a
   * kernel missing from an AOT cache, a driver error, a compile error...):
   * the message says which. */
  MXFP4_STATUS_ERROR = 3,
  /* Host memory ran out. */
  MXFP4_STATUS_OUT_OF_MEMORY = 4,
  /* A bug in the library: please report the message. */
  MXFP4_STATUS_INTERNAL = 5
} mxfp4_status;

/* The enums a caller passes in hold any int: in C++ their type is int (a
 * fixed underlying type), in C a MXFP4_..._MAX_ENUM that is not a value
 * keeps them 32 bits wide. So whatever a caller passes, the library can
 * check and refuse it (MXFP4_STATUS_INVALID_ARGUMENT). (clang-format
 * cannot parse MXFP4_ENUM, hence the off/on around each.) */
#ifdef __cplusplus
#define MXFP4_ENUM(name) enum name : int
#else
#define MXFP4_ENUM(name) enum name
#endif

/* clang-format off */
typedef MXFP4_ENUM(mxfp4_arch) {
  MXFP4_ARCH_DEVICE = 0, /* the device's own target (or MXFP4_ARCH when set) */
  MXFP4_ARCH_GFX950 = 1,
  MXFP4_ARCH_GFX1250 = 2,
  MXFP4_ARCH_SM90A = 3,
  MXFP4_ARCH_MAX_ENUM = 0x7FFFFFFF /* not a value (see above) */
} mxfp4_arch;
/* clang-format on */

/* How an E8M0 block scale is rounded (docs/Numerics.md). */
/* clang-format off */
typedef MXFP4_ENUM(mxfp4_rounding) {
  MXFP4_ROUNDING_ROUNDUP = 0, /* the default */
  MXFP4_ROUNDING_EVEN = 1,
  MXFP4_ROUNDING_FLOOR = 2,
  MXFP4_ROUNDING_NEAREST = 3,
  MXFP4_ROUNDING_MAX_ENUM = 0x7FFFFFFF
} mxfp4_rounding;
/* clang-format on */

typedef struct mxfp4_device mxfp4_device;
typedef struct mxfp4_gemm_weight mxfp4_gemm_weight;
typedef struct mxfp4_moe_weights mxfp4_moe_weights;
typedef struct mxfp4_jit mxfp4_jit;

/*--- Version and errors ---------------------------------------------------*/

/* MXFP4_ABI_VERSION of the library. */
uint32_t mxfp4_abi_version(void);
/* "<version> (<git commit>)". */
const char *mxfp4_version(void);
/* The compiler identity that keys the disk cache (versions of the library,
 * LLVM and the kernel generators). Valid until the process ends. */
const char *mxfp4_compiler_identity(void);
/* This thread's message of its last failed call; "" when none failed. Valid
 * until the thread's next failing call. */
const char *mxfp4_last_error_message(void);
/* "ok", "invalid argument", ... */
const char *mxfp4_status_string(mxfp4_status status);
/* "gfx950", "gfx1250", "sm_90a" ("device" for MXFP4_ARCH_DEVICE). */
const char *mxfp4_arch_string(mxfp4_arch arch);

/*--- Device ---------------------------------------------------------------*/

/* Opens GPU `ordinal` of whichever driver is present (CUDA, then HIP). */
mxfp4_status mxfp4_device_open(int ordinal, mxfp4_device **out);
/* NULL is ignored. */
void mxfp4_device_destroy(mxfp4_device *dev);
mxfp4_status mxfp4_device_arch(const mxfp4_device *dev, mxfp4_arch *out);
/* The device's name, NUL-terminated and truncated to `size` bytes. */
mxfp4_status mxfp4_device_name(const mxfp4_device *dev, char *buffer, size_t size);
/* Device memory for callers without an allocator of their own. */
mxfp4_status mxfp4_device_alloc(mxfp4_device *dev, size_t bytes, void **out);
mxfp4_status mxfp4_device_free(mxfp4_device *dev, void *ptr);
mxfp4_status mxfp4_copy_to_device(mxfp4_device *dev, void *dst, const void *src, size_t bytes);
mxfp4_status mxfp4_copy_to_host(mxfp4_device *dev, void *dst, const void *src, size_t bytes);
mxfp4_status mxfp4_device_synchronize(mxfp4_device *dev);

/*--- Dense A4W4 GEMM ------------------------------------------------------*/

/* Preshuffles host weights for `arch` and uploads them. `w_fp4_bytes` must be
 * n * k / 2 and `w_scale_bytes` n * k / 32. */
mxfp4_status mxfp4_gemm_weight_prepare(mxfp4_device *dev, const uint8_t *w_fp4, size_t w_fp4_bytes,
                                       const uint8_t *w_scale, size_t w_scale_bytes, int64_t n,
                                       int64_t k, mxfp4_arch arch, mxfp4_gemm_weight **out);
/* NULL is ignored. Waits for nothing: the caller makes sure no call on the
 * weight is still running. */
void mxfp4_gemm_weight_destroy(mxfp4_gemm_weight *w);
mxfp4_status mxfp4_gemm_weight_shape(const mxfp4_gemm_weight *w, int64_t *n, int64_t *k);

typedef struct mxfp4_gemm_options {
  /* sizeof(mxfp4_gemm_options): fields added later keep their defaults for
   * callers built against this header. */
  size_t struct_size;
  mxfp4_rounding rounding;
} mxfp4_gemm_options;

/* out[M, N] = quantize(a[M, K]) * W^T on `stream`: `a` and `out` device
 * pointers to row-major bf16, 16-byte aligned; M >= 1. options: NULL for the
 * defaults. */
mxfp4_status mxfp4_gemm_a4w4(mxfp4_device *dev, void *stream, const void *a, int64_t m,
                             const mxfp4_gemm_weight *w, void *out,
                             const mxfp4_gemm_options *options);
/* The same with A already MXFP4: packed E2M1 [M, K/2] and E8M0 [M, K/32] on
 * the device (what mxfp4_quantize writes). sm_90a. */
mxfp4_status mxfp4_gemm_mx_a4w4(mxfp4_device *dev, void *stream, const void *a_codes,
                                const void *a_scales, int64_t m, const mxfp4_gemm_weight *w,
                                void *out);

/*--- Quantization ---------------------------------------------------------*/

/* On the device: bf16 a[M, K] to packed E2M1 `codes` [M, K/2] and E8M0
 * `scales` [M, K/32]; K a multiple of 32. Bit for bit the host quantizer. */
mxfp4_status mxfp4_quantize(mxfp4_device *dev, void *stream, const void *a, int64_t m, int64_t k,
                            void *codes, void *scales, mxfp4_rounding rounding);
/* On the host, the reference the device quantizers match: `codes` holds
 * rows * cols / 2 bytes, `scales` rows * cols / 32. */
mxfp4_status mxfp4_quantize_host(const uint16_t *bf16, int64_t rows, int64_t cols,
                                 mxfp4_rounding rounding, uint8_t *codes, uint8_t *scales);

/*--- Fused MoE ------------------------------------------------------------*/

typedef struct mxfp4_moe_shape {
  int64_t experts, topk, hidden, inter;
} mxfp4_moe_shape;

/* clang-format off */
typedef MXFP4_ENUM(mxfp4_gate_up_layout) {
  MXFP4_GATE_UP_GGUU = 0, /* W1 rows: all gate rows, then all up rows */
  MXFP4_GATE_UP_GUGU = 1, /* gate and up rows interleaved */
  MXFP4_GATE_UP_MAX_ENUM = 0x7FFFFFFF
} mxfp4_gate_up_layout;
/* clang-format on */

/* Preshuffles and uploads W1 [E, 2*inter, hidden/2] (+ scales [E, 2*inter,
 * hidden/32]) and W2 [E, hidden, inter/2] (+ scales [E, hidden, inter/32]).
 * w1_bias [E, 2*inter] and w2_bias [E, hidden] (f32) may be NULL. */
mxfp4_status
mxfp4_moe_weights_prepare(mxfp4_device *dev, const mxfp4_moe_shape *shape, const uint8_t *w1_fp4,
                          size_t w1_fp4_bytes, const uint8_t *w1_scale, size_t w1_scale_bytes,
                          const uint8_t *w2_fp4, size_t w2_fp4_bytes, const uint8_t *w2_scale,
                          size_t w2_scale_bytes, const float *w1_bias, const float *w2_bias,
                          mxfp4_gate_up_layout layout, mxfp4_arch arch, mxfp4_moe_weights **out);
void mxfp4_moe_weights_destroy(mxfp4_moe_weights *w);

/* clang-format off */
typedef MXFP4_ENUM(mxfp4_activation) {
  MXFP4_ACTIVATION_SILU = 1,   /* silu(g) * u */
  MXFP4_ACTIVATION_SWIGLU = 2, /* GPT-OSS: param0 = alpha, param1 = limit */
  MXFP4_ACTIVATION_SITUV2 = 3, /* param0 = beta, param1 = linear_beta */
  MXFP4_ACTIVATION_MAX_ENUM = 0x7FFFFFFF
} mxfp4_activation;
/* clang-format on */

/* clang-format off */
typedef MXFP4_ENUM(mxfp4_moe_combine) {
  MXFP4_MOE_COMBINE_REDUCE = 0, /* deterministic */
  MXFP4_MOE_COMBINE_ATOMIC = 1,
  MXFP4_MOE_COMBINE_MAX_ENUM = 0x7FFFFFFF
} mxfp4_moe_combine;
/* clang-format on */

typedef struct mxfp4_moe_options {
  size_t struct_size; /* sizeof(mxfp4_moe_options) */
  mxfp4_activation activation;
  float param0, param1;
  mxfp4_rounding rounding;
  int doweight_stage1; /* routing weight applied before the activation */
  int64_t block_m;     /* 16, 32, 64 or 128; 0: dispatch (or a tuned CSV) decides */
  /* Expert parallelism: device i32 [global_experts], nonzero for the
   * experts this rank holds (the weights' E, in global order); topk ids are
   * global. NULL: the weights hold every expert. */
  const int32_t *expert_mask;
  int64_t global_experts;
  /* Device i32 that receives the count of (token, slot) pairs whose expert
   * id was outside [0, E), which are dropped; may be NULL. */
  int32_t *dropped;
  int unfused_activation; /* BF16 stage 1 output + a standalone quantizer */
  mxfp4_moe_combine combine;
} mxfp4_moe_options;

/* out[T, hidden] bf16 = the top-k weighted sum over each token's experts of
 * W2 * act(W1 * quantize(hidden)). `hidden`, `topk_ids` [T, topk] i32,
 * `topk_weights` [T, topk] f32 and `out` are device pointers. */
mxfp4_status mxfp4_fused_moe_a4w4(mxfp4_device *dev, void *stream, const void *hidden,
                                  int64_t tokens, const int32_t *topk_ids,
                                  const float *topk_weights, const mxfp4_moe_weights *w,
                                  const mxfp4_moe_options *options, void *out);

/*--- JIT, disk cache and ahead-of-time compilation ------------------------*/

typedef struct mxfp4_jit_options {
  size_t struct_size;    /* sizeof(mxfp4_jit_options) */
  const char *cache_dir; /* NULL or "": memory only */
  int assert_cache_hit;  /* a disk miss is an error instead of a compile */
} mxfp4_jit_options;

/* A JIT of its own (for ahead-of-time compilation into a cache directory).
 * options NULL: configured from the environment as the process-wide one
 * (MXFP4_CACHE_DIR, MXFP4_DISABLE_CACHE, MXFP4_ASSERT_CACHE_HIT). */
mxfp4_status mxfp4_jit_create(const mxfp4_jit_options *options, mxfp4_jit **out);
void mxfp4_jit_destroy(mxfp4_jit *jit);
/* The process-wide JIT every GEMM and MoE call uses. Never destroyed. */
mxfp4_jit *mxfp4_jit_global(void);

/* Gets one kernel by its canonical name (memory, disk, else compile). */
mxfp4_status mxfp4_jit_get_kernel(mxfp4_jit *jit, const char *kernel_name);
/* Gets every kernel the dense GEMM of N x K runs on `arch` at each of the
 * `m_count` token counts `ms`, as mxfp4_gemm_a4w4 would on a device with
 * `compute_units` SMs/CUs (which selects tuned CSV rows; 0: only rows for
 * any size) and, on sm_90a, for weights with and without scales below 128,
 * so a later process finds them all in the cache. `kernels`, when not NULL,
 * receives how many distinct kernels that was. */
mxfp4_status mxfp4_jit_precompile_gemm(mxfp4_jit *jit, mxfp4_arch arch, int64_t n, int64_t k,
                                       const int64_t *ms, size_t m_count, mxfp4_rounding rounding,
                                       int64_t compute_units, size_t *kernels);

typedef struct mxfp4_jit_stats {
  uint64_t memory_hits, disk_hits, compiles, corrupt_entries;
} mxfp4_jit_stats;
mxfp4_status mxfp4_jit_stats_get(const mxfp4_jit *jit, mxfp4_jit_stats *out);
/* The cache root the JIT reads and writes ("" when memory only). Valid
 * while the JIT lives. */
const char *mxfp4_jit_cache_directory(const mxfp4_jit *jit);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MXFP4_MXFP4_H */
