// The main job: an XDP program over a capture. Reads packets (pcap/pcapng), runs them in
// batches on a device, writes them out split by verdict, counts everything.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "device/cpu/cpu_device.h"
#include "device/gpu/batch_device.h"
#include "loader/object.h"
#include "vm/executor.h"
#include "xdp/runtime.h"
#include "xfrm/esp.h"

namespace knod::cli {

/// IPsec ESP after XDP (`knod run ... --xfrm FILE --xfrm-dir in|out [--xfrm-engine E]`), in
/// the kernel's order: XDP runs first; the frames it passes (XDP_PASS) then go to xfrm.
/// out: SPD lookup, ESP encrypt where a policy matches (others pass unchanged);
/// in: ESP (and ESP-in-UDP) to a known SA is decrypted (others pass unchanged).
/// Ethernet (optional 802.1Q tag) frames carrying IPv4/IPv6 only; the L2 header is kept,
/// its ethertype set to the new IP version. A frame xfrm drops (replay, integrity, no SA...)
/// is not written to --pass/-w; the XDP verdict counters are unchanged.
struct XfrmStage {
  /// Loads `ip xfrm` lines from `file`; engine: openssl | portable | cuda[:N]; the crypto
  /// of each batch on `workers` CPU threads (xfrm::make_engine; 0: all cores).
  /// Throws knod::Error for a bad file, direction or engine.
  XfrmStage(const std::string& file, const std::string& dir, const std::string& engine,
            uint32_t workers = 1);
  /// Runs the XDP_PASS frames of `b` (n frames); keep[i] = 0 when xfrm dropped frame i.
  void run(device::Batch& b, uint32_t n, std::vector<uint8_t>& keep);
  /// Per-SA counters (as `ip -s xfrm state`) and the totals, on stdout.
  void print() const;
  /// {"direction", "engine", "passed_through", "total": {...}, "sas": [{spi, packets, ...}]}.
  nlohmann::json stats_json() const;

  xfrm::Sad sad;
  xfrm::Spd spd;
  std::unique_ptr<xfrm::CryptoEngine> eng;
  xfrm::Dir dir = xfrm::Dir::kOut;
  std::string engine_name;
  xfrm::Counters total;         ///< every XDP_PASS IP frame: processed or dropped by reason
  uint64_t passed_through = 0;  ///< no policy (out) / not ESP (in) / not IP: unchanged

 private:
  std::vector<uint8_t> frames_, drop_, l2_;
  std::vector<uint32_t> off_, len_, sa_, idx_;
};

/// Makes the executor for --device: "interp" (reference interpreter) or "cpu" (JIT; with
/// `slot_loop`, a Runtime's entry gets the compiled slot loop, jit::JitOptions::slot_loop).
/// Throws knod::Error for an unknown device (GPU names: see make_device).
std::unique_ptr<vm::Executor> make_executor(const std::string& device, bool slot_loop = true);

/// The device of a packet run (--device): exactly one of the two is set.
struct JobDevice {
  std::unique_ptr<vm::Executor> executor;           ///< interp, cpu: per packet, CPU workers
  std::unique_ptr<device::gpu::BatchDevice> batch;  ///< cuda[:N], gpusim: whole batches
};

/// Opens --device: interp | cpu | cuda[:N] (NVIDIA GPU N) | gpusim (the host-simulated GPU,
/// device/gpu/host_sim.h) | amdgpu. Throws knod::Error "--device <name>: <why>" for a GPU
/// that cannot be used ("--device cuda: no NVIDIA driver (libcuda.so.1 not found)",
/// "--device amdgpu: no AMD GPU runtime ...") and make_executor's error for an unknown name.
JobDevice make_device(const std::string& device);

struct JobOptions {
  std::string in_pcap;  ///< -r: a capture file; or live ports, read in turn:
  /// --tap (one or more): TAP interfaces (io::TapPort);
  std::vector<std::string> in_taps;
  /// --xsk (one or more): "IFACE[:QUEUE]", an AF_XDP socket on that RX queue (io::XskPort).
  /// XDP_TX goes back out of the port a frame came from, XDP_REDIRECT to a port's ifindex
  /// (bpf_redirect, a DEVMAP entry) out of that port.
  std::vector<std::string> in_xsks;
  /// --pass-tap NAME (--xsk ports of one interface, no --tap): XDP_PASS frames (after --xfrm, what
  /// it keeps) are written into TAP interface NAME, whose kernel receives them: the host's
  /// stack gets what the program passes (an AF_XDP queue has no way back into its NIC's
  /// receive path). Both ways: the frames the host sends out of NAME leave by the first port (not
  /// run). A TAP knod makes gets the port's Ethernet address and is brought up; a persistent
  /// one must be up (else knod::Error).
  /// Empty: XDP_PASS frames are counted and written to --pass only.
  std::string pass_tap;
  uint64_t max_packets = 0;  ///< -c: stop after this many packets run (0: no limit)
  uint64_t duration_ns = 0;  ///< --duration (ports): stop after this long (0: no limit)
  /// Ports: set (by SIGINT or SIGTERM) to stop; the batch that holds packets runs first.
  const std::atomic<bool>* stop = nullptr;
  std::string out_all;            ///< -w: every packet as the program left it
  std::string out_by_verdict[5];  ///< index = XDP_ABORTED..XDP_REDIRECT; empty = not written
  uint32_t ifindex = 1;           ///< xdp_md->ingress_ifindex (ports: 0 = the port's)
  uint32_t rxq = 0;               ///< xdp_md->rx_queue_index (ports: kPortsQueue = the port's)
  static constexpr uint32_t kPortsQueue = UINT32_MAX;
  uint32_t batch = 256;       ///< packets per batch
  uint32_t workers = 1;       ///< CPU device threads
  bool progress = false;      ///< report progress on stderr
  bool pcap_clock = false;    ///< time helpers read each packet's capture timestamp
  XfrmStage* xfrm = nullptr;  ///< ESP on XDP_PASS frames (nullptr: none)
  /// GPU devices: run the batches through a persistent session (cli/gpu_session.h); a batch
  /// is also cut batch_timeout_ns after its first packet was read (0: on size only).
  bool persistent = false;
  uint64_t batch_timeout_ns = 0;
};

/// One live port's frames (--tap, --xsk).
struct PortCounters {
  std::string kind;  ///< "tap" | "xsk"
  std::string name;  ///< the interface
  uint32_t ifindex = 0;
  uint32_t queue = 0;       ///< xsk: the RX queue read
  std::string mode;         ///< xsk: how it is attached ("xdpdrv, copy"); tap: empty
  uint64_t rx = 0;          ///< frames read from it and run
  uint64_t tx = 0;          ///< XDP_TX frames written back into it
  uint64_t redirected = 0;  ///< XDP_REDIRECT frames (from any port) written into it
  uint64_t refused = 0;     ///< writes that failed (io::Port::write)
  /// Frames the kernel dropped before knod saw them (io::Port::kernel_drops: xsk
  /// XDP_STATISTICS, tap the interface's tx_dropped).
  uint64_t kernel_dropped = 0;
  /// Frames queued for knod when the run ended (-c reached, a stop, an error): counted, not
  /// run. xsk: rx + kernel_dropped + unread = every frame knod's program took from the queue;
  /// tap: every frame the kernel sent out of the interface while knod had it open (up to
  /// the 8192 drained at the end: a TAP's sender is not stopped).
  uint64_t unread = 0;
  /// The drain stopped at its cap (8192 frames a port) with frames maybe still queued: those
  /// are in no counter (a TAP under a flood, a TAP whose tx_queue_len is above the cap).
  bool unread_capped = false;
};

struct JobResult {
  uint64_t packets = 0, bytes = 0;  ///< packets run and their bytes (as read)
  uint64_t verdict_packets[5] = {}, verdict_bytes[5] = {};  ///< by verdict; bytes after the program
  uint64_t faults[8] = {};                                  ///< by vm::Fault
  uint64_t skipped_runt = 0;  ///< frames shorter than ETH_HLEN (14 B): not run, as test_run
  uint64_t skipped_snapped = 0, skipped_too_large = 0;  ///< not run (see io::SkipReason)
  bool truncated = false;                               ///< the capture ended inside a record
  std::string truncated_error;
  double seconds = 0;                      ///< wall time of the batches (excl. I/O)
  std::vector<uint64_t> batch_latency_ns;  ///< --persistent: per batch, first packet read to done
  uint64_t batches_by_timeout = 0;         ///< --persistent: batches cut by the timeout
  /// --tap, --xsk: each port's; taps first in the order given, then the --xsk queues grouped
  /// by interface (interfaces in the order of their first --xsk, queues as given)
  std::vector<PortCounters> ports;
  uint64_t redirect_unsent = 0;  ///< ports: XDP_REDIRECT frames whose target is no port
  std::string pass_tap;          ///< --pass-tap: the interface (a template filled in); empty: none
  uint64_t passed = 0;           ///< --pass-tap: XDP_PASS frames the TAP took (write(2) done)
  /// --pass-tap: XDP_PASS frames write(2) refused (the interface went down: EIO; no buffer).
  uint64_t pass_refused = 0;
  uint64_t from_host = 0;          ///< --pass-tap: frames the host sent out of it, sent by the port
  uint64_t from_host_refused = 0;  ///< --pass-tap: those the port refused (io::Port::write)
  /// --pass-tap: of `passed`, those the kernel's stack dropped (the TAP's rx_dropped: an
  /// EtherType no protocol takes; the refused writes left out: io::TapPort::stack_drops).
  uint64_t pass_stack_dropped = 0;
  /// --pass-tap: frames the host sent out of it that the TAP's queue had no room for (its
  /// tx_dropped), not read by knod.
  uint64_t from_host_dropped = 0;
  /// Ports: why the run ended early (an interface went away: the io::Port error); empty when
  /// it did not. The counters hold what ran until then; the caller reports them, then this.
  std::string port_error;
  /// The CPU device's counters (packets per worker, late and stalled workers); empty items
  /// for a GPU device.
  device::CpuStats cpu;
};

/// Runs `rt`'s program over opts.in_pcap (or the ports) with `ex`. Throws knod::Error for I/O
/// errors of the capture and the output files; a port that fails mid-run ends the run
/// instead (JobResult::port_error).
JobResult run_pcap_job(xdp::Runtime& rt, vm::Executor& ex, const JobOptions& opts);
/// Same on `dev`: a batch device gets rt.env() (every program, the maps) loaded once and
/// runs each batch of opts.batch packets at once (lanes in any order on a GPU: use --batch 1
/// for programs whose result depends on packet order); the maps hold its state afterwards.
/// Throws knod::Error for I/O errors and for a program the device cannot load.
JobResult run_pcap_job(xdp::Runtime& rt, JobDevice& dev, const JobOptions& opts);

}  // namespace knod::cli
