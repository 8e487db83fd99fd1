/* An out-of-tree C program against the installed package. The compiler
 * build (consumer-c DIR) compiles one gfx950 kernel into the cache DIR;
 * the runtime build (consumer-rt, MXFP4_CACHE_DIR=DIR) must serve it from
 * there. With WITH_SYSTEM_LLVM, Debian's libLLVM is in the process too and
 * answers its own calls while ours uses the LLVM hidden inside. */
#include "mxfp4/mxfp4.h"

#include <stdio.h>
#include <string.h>

#ifdef WITH_SYSTEM_LLVM
char *LLVMGetDefaultTargetTriple(void);
void LLVMDisposeMessage(char *message);
#endif

static const char *kKernel =
    "gemm_a4w4_gfx950_n256_k256_bm16_bn256_bk256_ks1_roundup_wgfx950mfma16_sgfx950mfma16_anone_"
    "ebf16";

int main(int argc, char **argv) {
  if (mxfp4_abi_version() != MXFP4_ABI_VERSION) {
    fprintf(stderr, "ABI %u, header %d\n", mxfp4_abi_version(), MXFP4_ABI_VERSION);
    return 1;
  }
  mxfp4_jit *jit;
#ifdef RUNTIME_ONLY
  (void)argc;
  (void)argv;
  if (mxfp4_jit_create(NULL, &jit) != MXFP4_STATUS_OK) /* MXFP4_CACHE_DIR, assert-hit */
    return fprintf(stderr, "jit: %s\n", mxfp4_last_error_message()), 1;
#else
  mxfp4_jit_options options = {sizeof options, argc > 1 ? argv[1] : "cache", 0};
  if (mxfp4_jit_create(&options, &jit) != MXFP4_STATUS_OK)
    return fprintf(stderr, "jit: %s\n", mxfp4_last_error_message()), 1;
#endif
  if (mxfp4_jit_get_kernel(jit, kKernel) != MXFP4_STATUS_OK)
    return fprintf(stderr, "kernel: %s\n", mxfp4_last_error_message()), 1;
  mxfp4_jit_stats stats;
  mxfp4_jit_stats_get(jit, &stats);
  printf("consumer %s: mxfp4-jit %s, kernel %s (compiled %llu, disk hits %llu)\n",
#ifdef RUNTIME_ONLY
         "runtime",
#else
         "compiler",
#endif
         mxfp4_version(), stats.compiles ? "compiled" : "from the cache",
         (unsigned long long)stats.compiles, (unsigned long long)stats.disk_hits);
  mxfp4_jit_destroy(jit);
#ifdef WITH_SYSTEM_LLVM
  char *triple = LLVMGetDefaultTargetTriple();
  printf("system LLVM in the same process: default triple %s\n", triple);
  LLVMDisposeMessage(triple);
#endif
  return 0;
}
