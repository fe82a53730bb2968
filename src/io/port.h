// A live port: where knod reads the frames of a network interface and writes frames into it,
// as a NIC's port would. Two kinds: a TAP interface (io/tap.h: knod is the far end of its
// wire) and an AF_XDP socket on a NIC queue (io/xsk.h: knod takes the queue's frames before
// the kernel's stack does). `knod run --tap/--xsk` reads every port in turn.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/pcap.h"

namespace knod::io {

class Port {
 public:
  virtual ~Port() = default;

  /// Waits up to `timeout_ms` (0: does not wait; negative: forever) for a frame, and fills
  /// `p` (ts_ns: CLOCK_REALTIME when read, ns since the Unix epoch; wire_len = data.size()).
  /// Returns false when none came in time (or a signal interrupted the wait). Frames over the
  /// port's max_len are counted (skipped_too_large), not returned. Throws knod::Error when
  /// the interface went away.
  virtual bool read(Packet& p, int timeout_ms) = 0;
  /// Queues one Ethernet frame out of the port (into the kernel for a TAP, onto the wire for
  /// AF_XDP). Returns false and counts it in write_errors() when it cannot be queued.
  virtual bool write(std::span<const uint8_t> frame) = 0;
  /// Sends what write() queued (AF_XDP: one kick of the TX ring a batch). TAP: nothing to do.
  virtual void flush() {}
  /// Ends the frames coming to knod, for the end of a run: AF_XDP detaches knod's program, so
  /// that the queue's frames go to the kernel's stack again; what is already queued for knod
  /// can still be read (and is counted by the caller). TAP: nothing to stop (the kernel queues
  /// what it sends out of the interface until the TAP closes).
  virtual void stop_input() {}

  virtual std::string_view kind() const = 0;    ///< "tap" | "xsk"
  virtual const std::string& name() const = 0;  ///< the interface's name
  virtual uint32_t ifindex() const = 0;
  virtual uint32_t queue() const { return 0; }  ///< the RX queue read (xdp_md->rx_queue_index)
  /// How the port is attached, for the summary ("xdpdrv, copy"); empty where there is no choice.
  virtual std::string mode() const { return ""; }
  virtual uint64_t skipped_too_large() const = 0;  ///< frames over max_len
  virtual uint64_t write_errors() const = 0;       ///< writes refused
  /// Frames the kernel dropped before knod saw them (AF_XDP: XDP_STATISTICS rx_dropped +
  /// rx_ring_full + rx_invalid_descs; TAP: the interface's tx_dropped, its queue full).
  virtual uint64_t kernel_drops() const { return 0; }

  /// The descriptor poll(2) waits on for POLLIN.
  virtual int poll_fd() const = 0;
  /// Throws knod::Error when the interface went away in a way poll(2) does not show (an
  /// AF_XDP socket whose device was deleted is unbound and polls as idle; SO_ERROR says).
  virtual void check_alive() const {}
};

/// `p` = a copy of the `len` bytes at `data`, wire_len = len, ts_ns = CLOCK_REALTIME now (ns
/// since the Unix epoch): a frame as a port read it.
void set_frame(Packet& p, const uint8_t* data, uint32_t len);

/// Interface `name`'s Ethernet address (SIOCGIFHWADDR); none when it has another kind of link
/// address (loopback, IP tunnels). Throws knod::Error naming it when it cannot be read.
std::optional<std::array<uint8_t, 6>> hw_addr(const std::string& name);

/// Waits up to `timeout_ms` (negative: forever) until one of `ports` has a frame to read.
/// Returns false on a timeout or a signal. Throws knod::Error when an interface went away.
bool wait_any(const std::vector<Port*>& ports, int timeout_ms);

}  // namespace knod::io
