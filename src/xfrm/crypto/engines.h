// Crypto engines by name, for the CLI's --engine options.
#pragma once

#include <memory>
#include <string_view>

#include "xfrm/crypto/engine.h"

namespace knod::xfrm {

/// "openssl" (OpenSSL 3 EVP, every transform), "portable" (knod's own AEAD code on the
/// host), "cuda" or "cuda:N" (the same AEAD code on an NVIDIA GPU). Throws knod::Error for an
/// unknown name, "xfrm: engine cuda not built ..." when knod was built without the GPU
/// engine, or the CUDA error ("no NVIDIA driver (libcuda.so.1 not found)") when no GPU.
std::unique_ptr<CryptoEngine> make_engine(std::string_view name);

}  // namespace knod::xfrm
