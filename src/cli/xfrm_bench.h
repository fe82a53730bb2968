// `knod bench --xfrm FILE`: ESP encrypt/decrypt throughput of each AEAD SA in an `ip xfrm`
// file on one core, next to raw OpenSSL EVP AEAD on the same buffers, and with the crypto
// stage on N threads (cmd_bench_xfrm.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

namespace knod::cli {

struct XfrmBenchArgs {
  std::string file;                        ///< --xfrm: `ip xfrm state add` lines
  std::string sizes = "64,512,1420,imix";  ///< IP packet bytes, or imix (64/576/1500 at 7:4:1)
  uint64_t packets = 0;                    ///< per measurement (0: until --seconds)
  double seconds = 0.2;                    ///< CPU seconds per measurement (one side of a row)
  uint32_t batch = 256;                    ///< packets per esp_*_batch call
  /// `knod bench --workers` (threads of the knod-N column; unset: all cores). Read when the
  /// bench runs; nullptr when `bench` has no such option.
  const CLI::Option* workers = nullptr;
};

/// Adds --xfrm, --sizes, --packets, --seconds, --xfrm-batch to `knod bench`, and takes the
/// bench's own --workers (added before this call) for the knod-N column.
std::shared_ptr<XfrmBenchArgs> add_xfrm_bench_options(CLI::App* bench);

/// Runs the bench and prints the table; returns the exit status. Throws knod::Error for an
/// unreadable file, a file without AEAD SAs, or a bad --sizes word.
int run_xfrm_bench(const XfrmBenchArgs& a);

}  // namespace knod::cli
