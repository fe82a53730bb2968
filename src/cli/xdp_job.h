// The main job: an XDP program over a capture. Reads packets (pcap/pcapng), runs them in
// batches on a device, writes them out split by verdict, counts everything.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loader/object.h"
#include "vm/executor.h"
#include "xdp/runtime.h"

namespace knod::cli {

/// Makes the executor for --device: "interp" (reference interpreter) or "cpu" (JIT).
/// Throws knod::Error for an unknown or unavailable device (e.g. "cuda" without a driver).
std::unique_ptr<vm::Executor> make_executor(const std::string& device);

struct JobOptions {
  std::string in_pcap;
  std::string out_all;             ///< -w: every packet as the program left it
  std::string out_by_verdict[5];   ///< index = XDP_ABORTED..XDP_REDIRECT; empty = not written
  uint32_t ifindex = 1;            ///< xdp_md->ingress_ifindex
  uint32_t rxq = 0;                ///< xdp_md->rx_queue_index
  uint32_t batch = 256;            ///< packets per batch
  uint32_t workers = 1;            ///< CPU device threads
  bool progress = false;           ///< report progress on stderr
};

struct JobResult {
  uint64_t packets = 0, bytes = 0;   ///< packets run and their bytes (as read)
  uint64_t verdict_packets[5] = {}, verdict_bytes[5] = {};  ///< by verdict; bytes after the program
  uint64_t faults[8] = {};           ///< by vm::Fault
  uint64_t skipped_snapped = 0, skipped_too_large = 0;  ///< not run (see io::SkipReason)
  bool truncated = false;            ///< the capture ended inside a record
  std::string truncated_error;
  double seconds = 0;                ///< wall time of the batches (excl. I/O)
};

/// Runs `rt`'s program over opts.in_pcap with `ex`. Throws knod::Error for I/O errors.
JobResult run_pcap_job(xdp::Runtime& rt, vm::Executor& ex, const JobOptions& opts);

}  // namespace knod::cli
