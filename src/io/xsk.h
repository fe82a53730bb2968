// An AF_XDP socket as a knod port (Documentation/networking/af_xdp.rst; libxdp's xsk API):
// the frames one RX queue of a network interface receives come to knod before the kernel's
// stack sees them, and what knod writes leaves by that interface's TX. This is how a NIC feeds
// knod on a host: `knod run OBJ --xsk eth1:0`.
//
// knod attaches its own XDP program to the interface (6 instructions: bpf_redirect_map of
// the frame's rx_queue_index into an XSKMAP, XDP_PASS where the queue has no socket, so the
// other queues' traffic still reaches the stack) through a BPF link, which the kernel takes
// down when the last port on the interface closes, stop_input() is called or knod ends in any
// way (SIGKILL too). kAuto falls back to
// generic XDP where the driver's own refuses (veth: an MTU too large for XDP). The UMEM is 4096
// frames of 4096 bytes (16 MiB): half on the fill ring for RX, half for TX. Frames are copied in
// and out of knod's batches.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/port.h"

namespace knod::io {

class XskPort final : public Port {
 public:
  /// How the XDP program is attached (`ip link set DEV xdpgeneric|xdpdrv`): kAuto lets the
  /// kernel choose (the driver's own XDP where it has one, else generic XDP).
  enum class Mode { kAuto, kSkb, kDrv };

  /// Opens an AF_XDP socket on RX queue `queue` of interface `ifname`, and attaches knod's
  /// redirect program there. `max_len`: frames longer than this (bytes) are counted as
  /// skipped, not returned. Throws knod::Error naming the interface: no such interface, a
  /// queue it does not have (EINVAL), an XDP program already attached in any mode ("detach it
  /// first (ip link set dev NAME xdpgeneric off)": the ip(8) keyword of each mode in use, or
  /// "bpftool link detach id N" where a BPF link holds it), no CAP_NET_ADMIN / CAP_BPF (EPERM), a
  /// kernel without AF_XDP.
  XskPort(const std::string& ifname, uint32_t queue, Mode mode = Mode::kAuto,
          uint32_t max_len = PcapReader::kDefaultMaxLen);
  /// Opens an AF_XDP socket on each of RX queues `queues` of interface `ifname` (in that
  /// order), then attaches knod's redirect program, which all of them share with its XSKMAP:
  /// the queues start at once, and the program stays on while any of the ports is open.
  /// Throws knod::Error as the constructor does, naming the queue at fault.
  static std::vector<std::unique_ptr<XskPort>> open(const std::string& ifname,
                                                    const std::vector<uint32_t>& queues,
                                                    Mode mode = Mode::kAuto,
                                                    uint32_t max_len = PcapReader::kDefaultMaxLen);
  /// open() but for the program: start() on the first port attaches it. For a caller that
  /// opens several interfaces and attaches to none before every socket is open.
  static std::vector<std::unique_ptr<XskPort>> open_stopped(
      const std::string& ifname, const std::vector<uint32_t>& queues,
      uint32_t max_len = PcapReader::kDefaultMaxLen);
  /// Attaches knod's program to the interface (open_stopped's ports). Throws knod::Error as
  /// the constructor does.
  void start(Mode mode = Mode::kAuto) { attach(mode); }
  ~XskPort() override;
  XskPort(const XskPort&) = delete;
  XskPort& operator=(const XskPort&) = delete;

  /// Parses "IFACE" or "IFACE:QUEUE" (the --xsk argument) into its two parts (queue 0 when
  /// not given). Throws knod::Error for a name of 0 or more than 15 bytes or a bad queue.
  static std::pair<std::string, uint32_t> parse(const std::string& arg);

  bool read(Packet& p, int timeout_ms) override;
  /// Copies `frame` into a free UMEM frame and puts it on the TX ring; flush() sends.
  /// Returns false (write_errors) when it is longer than a UMEM frame or no TX frame is free.
  bool write(std::span<const uint8_t> frame) override;
  /// Kicks the TX ring (sendto) when frames are queued, and takes back the frames the kernel
  /// has sent (completion ring).
  void flush() override;
  /// Detaches knod's program (the BPF link) from the interface, for every port on it; the
  /// socket stays bound, so frames already on the RX ring can be read and the TX ring still
  /// sends.
  void stop_input() override;

  std::string_view kind() const override { return "xsk"; }
  const std::string& name() const override { return name_; }
  uint32_t ifindex() const override { return ifindex_; }
  uint32_t queue() const override { return queue_; }
  uint64_t skipped_too_large() const override { return skipped_too_large_; }
  uint64_t write_errors() const override { return write_errors_; }
  /// XDP_STATISTICS: rx_dropped + rx_ring_full + rx_invalid_descs, read from the socket.
  uint64_t kernel_drops() const override;
  int poll_fd() const override;
  /// The kernel sets the socket's error to ENETDOWN when the interface is deleted.
  void check_alive() const override;

  /// How the program was attached: "xdpdrv" (the driver's XDP) or "xdpgeneric" (where a
  /// frame's rx_queue_index is the queue its driver recorded on the skb, else 0:
  /// netif_get_rxqueue).
  std::string_view attach_mode() const { return drv() ? "xdpdrv" : "xdpgeneric"; }
  /// attach_mode() and "copy" or "zero-copy".
  std::string mode() const override;
  /// Whether the socket is bound in zero-copy mode (XDP_OPTIONS: XDP_OPTIONS_ZEROCOPY).
  bool zero_copy() const;

 private:
  struct Rings;
  struct Attachment;
  // The socket on `queue`, put in the XSKMAP of `at` (not attached yet).
  XskPort(std::shared_ptr<Attachment> at, const std::string& ifname, uint32_t queue,
          uint32_t max_len);
  // The interface's XSKMAP, room for queues up to `top`; `queue` names the errors.
  static std::shared_ptr<Attachment> prepare(const std::string& ifname, uint32_t queue,
                                             uint32_t top);
  void attach(Mode mode);                      // knod's program onto the interface
  void open_socket(const std::string& where);  // UMEM, socket, fill ring; `where` for errors
  bool drv() const;
  std::unique_ptr<Rings> r_;
  std::shared_ptr<Attachment> at_;  // after r_: the program comes off before the socket closes
  std::string name_;
  uint32_t ifindex_ = 0, queue_ = 0, max_len_;
  uint64_t skipped_too_large_ = 0, write_errors_ = 0;
};

}  // namespace knod::io
