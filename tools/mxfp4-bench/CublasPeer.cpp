//===- CublasPeer.cpp - cuBLAS GEMMs as the peer, loaded with dlopen -------===//
//
// Enum values are the cuBLAS / CUDA ABI (cublas_api.h, cublasLt.h,
// library_types.h of CUDA 12/13).
//
//===----------------------------------------------------------------------===//

#include "CublasPeer.h"

#include <dlfcn.h>

namespace mxfp4::bench {

namespace {
constexpr int kOpN = 0, kOpT = 1;            // cublasOperation_t
constexpr int kR16BF = 14, kR8F_E4M3 = 28, kR32F = 0; // cudaDataType
constexpr int kCompute32F = 68;              // cublasComputeType_t
constexpr int kGemmDefault = -1;             // cublasGemmAlgo_t
constexpr int kLtTransA = 3, kLtTransB = 4;  // cublasLtMatmulDescAttributes_t

void *openFirst(std::initializer_list<const char *> names) {
  for (const char *n : names)
    if (void *h = dlopen(n, RTLD_NOW | RTLD_LOCAL))
      return h;
  return nullptr;
}
} // namespace

struct CublasPeer::Api {
  int (*create)(void **);
  int (*destroy)(void *);
  int (*setStream)(void *, void *);
  int (*gemmEx)(void *, int, int, int, int, int, const void *, const void *, int, int,
                const void *, int, int, const void *, void *, int, int, int, int);
  int (*ltCreate)(void **);
  int (*ltDestroy)(void *);
  int (*ltDescCreate)(void **, int, int);
  int (*ltDescDestroy)(void *);
  int (*ltDescSet)(void *, int, const void *, size_t);
  int (*ltLayoutCreate)(void **, int, uint64_t, uint64_t, int64_t);
  int (*ltLayoutDestroy)(void *);
  int (*ltMatmul)(void *, void *, const void *, const void *, void *, const void *, void *,
                  const void *, const void *, void *, void *, void *, const void *, void *,
                  size_t, void *);
};

Expected<std::unique_ptr<CublasPeer>> CublasPeer::load() {
  void *h = openFirst({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  void *lt = openFirst({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
  if (!h || !lt)
    return Error("cuBLAS not found (libcublas.so / libcublasLt.so)");
  auto api = new Api();
  bool ok = true;
  auto sym = [&](void *lib, auto &fn, const char *name) {
    void *p = dlsym(lib, name);
    ok &= p != nullptr;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  sym(h, api->create, "cublasCreate_v2");
  sym(h, api->destroy, "cublasDestroy_v2");
  sym(h, api->setStream, "cublasSetStream_v2");
  sym(h, api->gemmEx, "cublasGemmEx");
  sym(lt, api->ltCreate, "cublasLtCreate");
  sym(lt, api->ltDestroy, "cublasLtDestroy");
  sym(lt, api->ltDescCreate, "cublasLtMatmulDescCreate");
  sym(lt, api->ltDescDestroy, "cublasLtMatmulDescDestroy");
  sym(lt, api->ltDescSet, "cublasLtMatmulDescSetAttribute");
  sym(lt, api->ltLayoutCreate, "cublasLtMatrixLayoutCreate");
  sym(lt, api->ltLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  sym(lt, api->ltMatmul, "cublasLtMatmul");
  if (!ok) {
    delete api;
    return Error("cuBLAS lacks an entry point the benchmark needs");
  }
  std::unique_ptr<CublasPeer> peer(new CublasPeer());
  peer->api = api;
  if (int s = api->create(&peer->handle))
    return Error("cublasCreate failed: status " + std::to_string(s));
  if (int s = api->ltCreate(&peer->ltHandle))
    return Error("cublasLtCreate failed: status " + std::to_string(s));
  return peer;
}

CublasPeer::~CublasPeer() {
  if (api) {
    if (handle)
      api->destroy(handle);
    if (ltHandle)
      api->ltDestroy(ltHandle);
    delete api;
  }
}

Error CublasPeer::gemmBf16(const void *a, const void *w, void *c, int64_t m, int64_t n,
                                 int64_t k, void *stream) {
  api->setStream(handle, stream);
  float alpha = 1.0f, beta = 0.0f;
  // Column-major C^T[N, M] = (W[N, K] row-major = W^T col-major, op T) * (A^T col-major, op N).
  int s = api->gemmEx(handle, kOpT, kOpN, int(n), int(m), int(k), &alpha, w, kR16BF, int(k), a,
                      kR16BF, int(k), &beta, c, kR16BF, int(n), kCompute32F, kGemmDefault);
  if (s)
    return Error("cublasGemmEx (bf16) failed: status " + std::to_string(s));
  return Error::success();
}

Error CublasPeer::gemmFp8(const void *a, const void *w, void *c, int64_t m, int64_t n,
                                int64_t k, void *workspace, size_t wsBytes, void *stream) {
  void *desc = nullptr, *la = nullptr, *lb = nullptr, *lc = nullptr;
  int s = api->ltDescCreate(&desc, kCompute32F, kR32F);
  int opT = kOpT, opN = kOpN;
  if (!s)
    s = api->ltDescSet(desc, kLtTransA, &opT, sizeof(opT));
  if (!s)
    s = api->ltDescSet(desc, kLtTransB, &opN, sizeof(opN));
  if (!s)
    s = api->ltLayoutCreate(&la, kR8F_E4M3, uint64_t(k), uint64_t(n), k);
  if (!s)
    s = api->ltLayoutCreate(&lb, kR8F_E4M3, uint64_t(k), uint64_t(m), k);
  if (!s)
    s = api->ltLayoutCreate(&lc, kR16BF, uint64_t(n), uint64_t(m), n);
  float alpha = 1.0f, beta = 0.0f;
  if (!s)
    s = api->ltMatmul(ltHandle, desc, &alpha, w, la, a, lb, &beta, c, lc, c, lc, nullptr,
                      workspace, wsBytes, stream);
  for (void *l : {la, lb, lc})
    if (l)
      api->ltLayoutDestroy(l);
  if (desc)
    api->ltDescDestroy(desc);
  if (s)
    return Error("cublasLtMatmul (fp8 e4m3) failed: status " +
                                   std::to_string(s));
  return Error::success();
}

} // namespace mxfp4::bench
