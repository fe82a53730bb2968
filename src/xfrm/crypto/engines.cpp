#include "xfrm/crypto/engines.h"

#include <fmt/core.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "base/error.h"
#include "xfrm/crypto/openssl_engine.h"
#include "xfrm/crypto/portable_engine.h"
#include "xfrm/crypto/threaded_engine.h"
#if KNOD_XFRM_CUDA
#include "xfrm/gpu/cuda_engine.h"
#endif

namespace knod::xfrm {

std::unique_ptr<CryptoEngine> make_engine(std::string_view name) {
  if (name == "openssl") return std::make_unique<OpensslEngine>();
  if (name == "portable") return std::make_unique<PortableEngine>();
  if (name == "cuda" || name.substr(0, 5) == "cuda:") {
#if KNOD_XFRM_CUDA
    return gpu::CudaEngine::open(name);
#else
    throw Error("xfrm: engine cuda not built (knod was configured without knod_cuda/clang-19)");
#endif
  }
  throw Error(fmt::format("xfrm: unknown crypto engine '{}' (openssl, portable, cuda[:N])", name));
}

std::unique_ptr<CryptoEngine> make_engine(std::string_view name, uint32_t workers) {
  if (!workers) workers = std::max(1u, std::thread::hardware_concurrency());
  bool gpu = name == "cuda" || name.substr(0, 5) == "cuda:";
  if (workers == 1 || gpu) return make_engine(name);
  std::vector<std::unique_ptr<CryptoEngine>> engines;
  for (uint32_t w = 0; w < workers; ++w) engines.push_back(make_engine(name));
  return std::make_unique<ThreadedEngine>(std::move(engines));
}

}  // namespace knod::xfrm
