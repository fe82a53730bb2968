// A Linux TAP interface as a knod port (Documentation/networking/tuntap.rst): knod sits at
// the far end of the interface's wire. The Ethernet frames the kernel sends out of the
// interface are what knod receives; a frame knod writes is received by the kernel on it, so
// XDP_TX goes back where the packet came from, as from a NIC's port.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/port.h"

namespace knod::io {

class TapPort final : public Port {
 public:
  /// Creates TAP interface `name` (IFF_TAP | IFF_NO_PI; at most IFNAMSIZ - 1 = 15 bytes),
  /// or attaches to an existing persistent one (`ip tuntap add dev NAME mode tap`). A new
  /// interface is down and goes away when knod exits; `ip link set NAME up` and an address
  /// make the kernel send through it. Throws knod::Error naming the interface: no
  /// /dev/net/tun, no CAP_NET_ADMIN ("Operation not permitted"), a name in use by a non-TAP
  /// interface or not valid, a name too long. A name template ("kt%d") becomes the name the
  /// kernel gives (name()).
  /// `max_len`: frames longer than this (bytes) are counted as skipped, not returned.
  /// `option`: the command-line option the errors name ("--tap NAME: ...").
  explicit TapPort(const std::string& name, uint32_t max_len = PcapReader::kDefaultMaxLen,
                   const std::string& option = "--tap");
  ~TapPort() override;
  TapPort(const TapPort&) = delete;
  TapPort& operator=(const TapPort&) = delete;

  /// Port::read. Throws knod::Error on a read error (the interface was deleted: EBADFD/EIO).
  bool read(Packet& p, int timeout_ms) override;
  /// Hands one Ethernet frame to the kernel, as received on the interface. Returns false
  /// and counts it in write_errors() when the kernel refused it (interface down: EIO; no
  /// buffer: ENOBUFS / EAGAIN); a frame the kernel takes may still be dropped by its stack
  /// (a destination MAC not the interface's, as any NIC in non-promiscuous mode).
  bool write(std::span<const uint8_t> frame) override;

  /// Whether this port made the interface (false: it attached to a persistent one, which
  /// `ip tuntap add` made and which outlives knod).
  bool created() const { return created_; }
  /// Whether the interface is up (IFF_UP): the kernel refuses frames written to it while down.
  bool is_up() const;
  /// Gives the interface Ethernet address `mac` (SIOCSIFHWADDR) and brings it up (IFF_UP), so
  /// that the kernel's stack takes the unicast frames written to it for `mac`. Throws
  /// knod::Error naming the interface.
  void set_up(const std::array<uint8_t, 6>& mac);

  /// "tap"; the option's name without "--" where another option opened it ("pass-tap").
  std::string_view kind() const override { return std::string_view(option_).substr(2); }
  const std::string& name() const override { return name_; }
  uint32_t ifindex() const override;  ///< the interface's when the port was opened
  uint64_t skipped_too_large() const override { return skipped_too_large_; }
  uint64_t write_errors() const override { return write_errors_; }
  int poll_fd() const override { return fd_; }
  /// Frames the kernel sent out of the interface while knod's queue (the TAP's ring of
  /// tx_queue_len frames: 1000 on kernel 6.18) was full: the interface's tx_dropped since the port
  /// was opened (in the calling thread's namespace; tun_net_xmit's drop).
  uint64_t kernel_drops() const override;
  /// Frames written to the interface (write() true) that the kernel's stack dropped since the
  /// port was opened: the interface's rx_dropped (__netif_receive_skb_core counts a frame no
  /// protocol takes: an EtherType with no handler), less the writes the kernel refused and
  /// counted there too (in write_errors(): tun_get_user). A frame the stack takes and drops
  /// later (an address not its own, a VLAN with no VLAN interface: rx_otherhost_dropped) is not
  /// counted, nor one dropped on a device above it (a bridge's).
  uint64_t stack_drops() const;

 private:
  struct Drops {
    uint64_t rx = 0, tx = 0;  ///< rx_dropped, tx_dropped
  };
  /// Interface `name`'s drop counters in the calling thread's network namespace
  /// (/proc/thread-self/net/dev, the "drop" columns: dev_get_stats(), core stats included);
  /// zeros where it is not listed.
  static Drops drops(const std::string& name);
  Drops since_open() const;  ///< the counters' growth since the port was opened; 0s: deleted

  int fd_ = -1;
  std::string name_, option_;
  bool created_ = false;
  uint32_t max_len_;
  uint64_t skipped_too_large_ = 0, write_errors_ = 0;
  Drops at_open_;                 ///< the interface's counters when the port was opened
  uint32_t ifindex_ = 0;          ///< the interface's, when the port was opened
  uint64_t refused_counted_ = 0;  ///< writes refused that tun_get_user counts in rx_dropped
  std::vector<uint8_t> buf_;
};

}  // namespace knod::io
