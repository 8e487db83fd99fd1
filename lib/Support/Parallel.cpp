//===- Parallel.cpp - A tiny parallel-for over index ranges ---------------===//

#include "mxfp4/Support/Parallel.h"
#include "mxfp4/Support/Env.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace mxfp4 {

unsigned hostThreadCount() {
  static const unsigned count = [] {
    if (std::optional<int64_t> n = env::numThreads(); n && *n > 0)
      return static_cast<unsigned>(*n);
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return count;
}

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)> &body) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = (n + grain - 1) / grain;
  unsigned threads = static_cast<unsigned>(std::min<int64_t>(hostThreadCount(), chunks));
  if (threads <= 1) {
    body(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1))
      body(c * grain, std::min(n, (c + 1) * grain));
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool)
    t.join();
}

} // namespace mxfp4
