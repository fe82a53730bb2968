// Crypto engines by name, for the CLI's --engine options.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "xfrm/crypto/engine.h"

namespace knod::xfrm {

/// "openssl" (OpenSSL 3 EVP, every transform), "portable" (knod's own AEAD code on the
/// host), "cuda" or "cuda:N" (the same AEAD code on an NVIDIA GPU). Throws knod::Error for an
/// unknown name, "xfrm: engine cuda not built ..." when knod was built without the GPU
/// engine, or the CUDA error ("no NVIDIA driver (libcuda.so.1 not found)") when no GPU.
std::unique_ptr<CryptoEngine> make_engine(std::string_view name);

/// make_engine(name) with the crypto stage of each batch over `workers` threads (0: all cores,
/// std::thread::hardware_concurrency): a ThreadedEngine of `workers` host engines, one per
/// thread (xfrm/crypto/threaded_engine.h). 1, or a GPU engine ("cuda[:N]"): make_engine(name).
/// Same errors as make_engine(name).
std::unique_ptr<CryptoEngine> make_engine(std::string_view name, uint32_t workers);

}  // namespace knod::xfrm
