#include "io/xsk.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "io/netdev.h"

namespace knod::io {

namespace {
constexpr uint32_t kFrameSize = XSK_UMEM__DEFAULT_FRAME_SIZE;  // 4096 bytes
constexpr uint32_t kFrames = 4096;                             // 16 MiB of UMEM
constexpr uint32_t kRxFrames = kFrames / 2;                    // on the fill ring
constexpr uint32_t kRing = 2048;                               // every ring's entries
constexpr uint32_t kMinXskEntries = 64;  // the XSKMAP's entries where the driver says fewer

/// knod's redirect program: return bpf_redirect_map(&xsks, ctx->rx_queue_index, XDP_PASS).
int load_redirect_prog(int map_fd) {
  const bpf_insn insns[] = {
      {BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1,
       static_cast<int16_t>(offsetof(xdp_md, rx_queue_index)), 0},
      {BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd},
      {0, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  return bpf_prog_load(BPF_PROG_TYPE_XDP, "knod_xsk", "GPL", insns, std::size(insns), nullptr);
}

uint32_t mode_flags(XskPort::Mode m) {
  return m == XskPort::Mode::kSkb   ? XDP_FLAGS_SKB_MODE
         : m == XskPort::Mode::kDrv ? XDP_FLAGS_DRV_MODE
                                    : 0;
}

std::string why(int err) {  // err: a positive errno
  std::string s = strerror(err);
  if (err == EPERM || err == EACCES) s += ": needs root (CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF)";
  return s;
}

// The id of an XDP program on interface `ifindex`, in any attach mode (driver, generic,
// offloaded: bpf_xdp_query_id with no mode says 0 where two modes hold one each); 0: none.
uint32_t attached_id(uint32_t ifindex) {
  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0) return 0;
  return q.prog_id       ? q.prog_id
         : q.drv_prog_id ? q.drv_prog_id
         : q.skb_prog_id ? q.skb_prog_id
                         : q.hw_prog_id;
}

// How to take interface `ifindex`'s XDP programs off, one step per attach mode in use: the BPF
// link that holds the mode's program (ip(8) cannot replace a link's program: "Can't replace
// active BPF XDP link"), else ip(8)'s keyword of the mode (its plain `xdp off` leaves a generic
// program on where the driver has XDP of its own, veth's for one). A link counts only where it
// holds the very program of that mode: links in other network namespaces name their own
// interfaces by the same small ifindex numbers (bpf_link_info names no namespace). One program
// linked to that ifindex in several namespaces gives several candidates, all named; one so
// linked elsewhere while ip(8) attached it here still reads as this interface's link.
std::string detach_hint(uint32_t ifindex, const std::string& ifname) {
  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0)
    return fmt::format("ip link set dev {} xdp off", ifname);
  struct Step {
    uint32_t prog_id;
    const char* mode;
    std::vector<uint32_t> links{};  // the links holding prog_id on an interface `ifindex`
  };
  Step steps[] = {
      {q.drv_prog_id, "xdpdrv"}, {q.skb_prog_id, "xdpgeneric"}, {q.hw_prog_id, "xdpoffload"}};
  bool links_unseen = false;  // a link that could not be read: EPERM (no CAP_SYS_ADMIN, an LSM)
  uint32_t id = 0;
  int scan = 0;
  while ((scan = bpf_link_get_next_id(id, &id)) == 0) {
    const int fd = bpf_link_get_fd_by_id(id);
    if (fd < 0) {  // gone since (ENOENT), still being made (EAGAIN), or refused
      links_unseen |= fd != -ENOENT && fd != -EAGAIN;
      continue;
    }
    bpf_link_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
      links_unseen = true;
    else if (info.type == BPF_LINK_TYPE_XDP && info.xdp.ifindex == ifindex)
      for (Step& s : steps)
        if (s.prog_id && s.prog_id == info.prog_id) s.links.push_back(id);
    ::close(fd);
  }
  links_unseen |= scan != -ENOENT;  // -EPERM: no CAP_SYS_ADMIN to list links
  std::vector<std::string> how;
  for (const Step& s : steps) {
    if (!s.prog_id) continue;
    if (s.links.size() == 1)
      how.push_back(fmt::format("bpftool link detach id {}", s.links[0]));
    else if (!s.links.empty())
      how.push_back(
          fmt::format("bpftool link detach id {} (one of them: the others hold it in "
                      "other network namespaces)",
                      fmt::join(s.links, " or ")));
    else
      how.push_back(fmt::format("ip link set dev {} {} off{}", ifname, s.mode,
                                links_unseen ? ", or if a BPF link holds it: bpftool link detach "
                                               "id N (N from bpftool link show, as root)"
                                             : ""));
  }
  if (how.empty()) return fmt::format("ip link set dev {} xdp off", ifname);
  return fmt::format("{}", fmt::join(how, "; "));
}

// The error for an interface that has XDP program `id` already (knod's or another).
Error taken(const std::string& where, const std::string& ifname, uint32_t ifindex, uint32_t id) {
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  const int fd = bpf_prog_get_fd_by_id(id);
  const bool knod = fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
                    std::string_view(info.name) == "knod_xsk";
  if (fd >= 0) ::close(fd);
  if (knod)
    return Error(fmt::format(
        "{}: another knod holds the interface (its XDP program knod_xsk, id {}, is attached)",
        where, id));
  return Error(fmt::format(
      "{}: the interface already has an XDP program (id {}); knod attaches its own: detach "
      "it first ({})",
      where, id, detach_hint(ifindex, ifname)));
}
}  // namespace

struct XskPort::Rings {
  void* area = MAP_FAILED;
  xsk_umem* umem = nullptr;
  xsk_socket* xsk = nullptr;
  xsk_ring_prod fill{}, tx{};
  xsk_ring_cons comp{}, rx{};
  std::vector<uint64_t> free_tx;  // UMEM addresses of TX frames not on the TX ring
  uint32_t tx_out = 0;            // TX frames on the ring, not completed yet

  ~Rings() {
    if (xsk) xsk_socket__delete(xsk);  // the kernel takes it out of the XSKMAP
    if (umem) xsk_umem__delete(umem);
    if (area != MAP_FAILED) ::munmap(area, size_t(kFrames) * kFrameSize);
  }

  int fd() const { return xsk_socket__fd(xsk); }
  void recycle(uint64_t addr) {  // an RX frame back on the fill ring
    uint32_t idx = 0;
    if (xsk_ring_prod__reserve(&fill, 1, &idx) != 1) return;  // cannot happen: ring >= frames
    *xsk_ring_prod__fill_addr(&fill, idx) = addr & ~uint64_t(kFrameSize - 1);
    xsk_ring_prod__submit(&fill, 1);
  }
  void reclaim() {  // TX frames the kernel has sent
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_cons__peek(&comp, kRing, &idx);
    for (uint32_t k = 0; k < n; ++k)
      free_tx.push_back(*xsk_ring_cons__comp_addr(&comp, idx + k) & ~uint64_t(kFrameSize - 1));
    if (n) xsk_ring_cons__release(&comp, n);
    tx_out -= std::min(tx_out, n);
  }
};

// knod's redirect program on one interface and its XSKMAP (queue -> socket), shared by the
// ports on the interface's queues; the last one to close detaches the program.
struct XskPort::Attachment {
  uint32_t ifindex = 0;
  int map_fd = -1, prog_fd = -1;
  int link_fd = -1;      // the BPF link holding the program on the interface (gone with knod)
  uint32_t entries = 0;  // the XSKMAP's: queues 0 .. entries - 1
  bool drv = false;      // attached as the driver's XDP (else generic)

  ~Attachment() {
    detach();
    if (prog_fd >= 0) ::close(prog_fd);
    if (map_fd >= 0) ::close(map_fd);
  }
  void detach() {
    if (link_fd < 0) return;
    bpf_link_detach(link_fd);
    ::close(link_fd);
    link_fd = -1;
  }
};

std::pair<std::string, uint32_t> XskPort::parse(const std::string& arg) {
  const size_t colon = arg.rfind(':');
  std::string name = arg.substr(0, colon);
  uint32_t queue = 0;
  if (colon != std::string::npos) {
    const std::string q = arg.substr(colon + 1);
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(q.c_str(), &end, 10);
    if (q.empty() || *end || errno || v > 0xffff || q[0] == '-' || q[0] == '+')
      throw Error(fmt::format("--xsk '{}': expected IFACE or IFACE:QUEUE (a queue number)", arg));
    queue = static_cast<uint32_t>(v);
  }
  if (name.find(':') != std::string::npos)  // "eth0:1" is an alias label, not an interface
    throw Error(fmt::format("--xsk '{}': expected IFACE or IFACE:QUEUE (a queue number)", arg));
  if (name.empty() || name.size() >= IFNAMSIZ)
    throw Error(fmt::format("--xsk '{}': an interface name has 1 to {} bytes", arg, IFNAMSIZ - 1));
  return {name, queue};
}

std::shared_ptr<XskPort::Attachment> XskPort::prepare(const std::string& ifname, uint32_t queue,
                                                      uint32_t top) {
  const std::string where = fmt::format("--xsk {}:{}", ifname, queue);
  auto at = std::make_shared<Attachment>();
  at->ifindex = ::if_nametoindex(ifname.c_str());
  if (!at->ifindex) throw Error(fmt::format("{}: no such interface", where));
  if (const uint32_t id = attached_id(at->ifindex)) throw taken(where, ifname, at->ifindex, id);
  // Room for every queue the interface has (ETHTOOL_GCHANNELS) and every queue asked for.
  at->entries = std::max({top + 1, rx_queue_count(ifname), kMinXskEntries});
  at->map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "knod_xsks", 4, 4, at->entries, nullptr);
  if (at->map_fd < 0)
    throw Error(fmt::format("{}: cannot create the XSKMAP ({})", where, why(-at->map_fd)));
  return at;
}

void XskPort::attach(Mode mode) {
  const std::string where = fmt::format("--xsk {}:{}", name_, queue_);
  at_->prog_fd = load_redirect_prog(at_->map_fd);
  if (at_->prog_fd < 0)
    throw Error(
        fmt::format("{}: the kernel refused the redirect program ({})", where, why(-at_->prog_fd)));
  // A BPF link: the kernel detaches the program when knod ends, however it ends (SIGKILL too).
  auto link = [&](uint32_t flags) {
    bpf_link_create_opts lo{};
    lo.sz = sizeof lo;
    lo.flags = flags;
    at_->link_fd = bpf_link_create(at_->prog_fd, static_cast<int>(ifindex_), BPF_XDP, &lo);
    return at_->link_fd < 0 ? at_->link_fd : 0;
  };
  int e = link(mode_flags(mode));
  if (e && mode == Mode::kAuto && -e != EBUSY && -e != EEXIST && -e != EPERM)
    e = link(XDP_FLAGS_SKB_MODE);  // the driver's XDP refused (MTU too large...): generic
  if (e) {
    const uint32_t id = -e == EBUSY || -e == EEXIST ? attached_id(ifindex_) : 0;
    if (id) throw taken(where, name_, ifindex_, id);
    throw Error(fmt::format("{}: cannot attach the XDP program ({}{})", where, why(-e),
                            mode == Mode::kDrv && -e == EOPNOTSUPP
                                ? ": the driver has no XDP of its own (use generic mode)"
                                : ""));
  }
  bpf_xdp_query_opts q{};
  q.sz = sizeof q;
  if (bpf_xdp_query(static_cast<int>(ifindex_), 0, &q) == 0)
    at_->drv = q.attach_mode == XDP_ATTACHED_DRV || q.attach_mode == XDP_ATTACHED_HW;
}

XskPort::XskPort(std::shared_ptr<Attachment> at, const std::string& ifname, uint32_t queue,
                 uint32_t max_len)
    : r_(std::make_unique<Rings>()),
      at_(std::move(at)),
      name_(ifname),
      ifindex_(at_->ifindex),
      queue_(queue),
      max_len_(max_len) {
  const std::string where = fmt::format("--xsk {}:{}", ifname, queue);
  open_socket(where);
  const uint32_t key = queue_;
  const int sock = r_->fd();
  if (bpf_map_update_elem(at_->map_fd, &key, &sock, 0) != 0)
    throw Error(fmt::format("{}: cannot put the socket in the XSKMAP ({})", where, why(errno)));
}

XskPort::XskPort(const std::string& ifname, uint32_t queue, Mode mode, uint32_t max_len)
    : XskPort(prepare(ifname, queue, queue), ifname, queue, max_len) {
  attach(mode);
}

std::vector<std::unique_ptr<XskPort>> XskPort::open(const std::string& ifname,
                                                    const std::vector<uint32_t>& queues, Mode mode,
                                                    uint32_t max_len) {
  auto ports = open_stopped(ifname, queues, max_len);
  if (!ports.empty()) ports[0]->attach(mode);  // every queue's socket is in the XSKMAP
  return ports;
}

std::vector<std::unique_ptr<XskPort>> XskPort::open_stopped(const std::string& ifname,
                                                            const std::vector<uint32_t>& queues,
                                                            uint32_t max_len) {
  std::vector<std::unique_ptr<XskPort>> ports;
  if (queues.empty()) return ports;
  auto at = prepare(ifname, queues[0], *std::max_element(queues.begin(), queues.end()));
  for (const uint32_t q : queues) ports.emplace_back(new XskPort(at, ifname, q, max_len));
  return ports;
}

void XskPort::open_socket(const std::string& where) {
  const size_t size = size_t(kFrames) * kFrameSize;
  r_->area = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r_->area == MAP_FAILED)
    throw Error(fmt::format("{}: cannot map {} bytes of UMEM ({})", where, size, strerror(errno)));
  xsk_umem_config uc{kRing, kRing, kFrameSize, 0, 0};
  xsk_socket_config sc{};
  sc.rx_size = kRing, sc.tx_size = kRing;
  sc.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;  // knod's own program, below
  sc.bind_flags = XDP_USE_NEED_WAKEUP;
  for (int tries = 1;; ++tries) {
    if (int e = xsk_umem__create(&r_->umem, r_->area, size, &r_->fill, &r_->comp, &uc); e)
      throw Error(fmt::format("{}: cannot register the UMEM ({})", where, why(-e)));
    const int e =
        xsk_socket__create(&r_->xsk, name_.c_str(), queue_, r_->umem, &r_->rx, &r_->tx, &sc);
    if (!e) break;
    r_->xsk = nullptr;
    xsk_umem__delete(r_->umem);
    r_->umem = nullptr;
    // The socket of a process that just ended holds the queue until the kernel's deferred
    // work frees its UMEM pool (a few ms after a SIGKILL): give it up to 1 s.
    if (-e == EBUSY && tries < 50) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    throw Error(fmt::format("{}: cannot open an AF_XDP socket on the queue ({}{})", where, why(-e),
                            -e == EINVAL  ? ": does the interface have that queue?"
                            : -e == EBUSY ? ": another AF_XDP socket has it"
                                          : ""));
  }
  uint32_t idx = 0;
  xsk_ring_prod__reserve(&r_->fill, kRxFrames, &idx);
  for (uint32_t i = 0; i < kRxFrames; ++i)
    *xsk_ring_prod__fill_addr(&r_->fill, idx + i) = uint64_t(i) * kFrameSize;
  xsk_ring_prod__submit(&r_->fill, kRxFrames);
  for (uint32_t i = kFrames; i > kRxFrames; --i)
    r_->free_tx.push_back(uint64_t(i - 1) * kFrameSize);
}

XskPort::~XskPort() {
  flush();
}

int XskPort::poll_fd() const {
  return r_->fd();
}

bool XskPort::read(Packet& p, int timeout_ms) {
  for (;;) {
    uint32_t idx = 0;
    if (xsk_ring_cons__peek(&r_->rx, 1, &idx) == 1) {
      const xdp_desc* d = xsk_ring_cons__rx_desc(&r_->rx, idx);
      const uint64_t addr = d->addr;
      const uint32_t len = d->len;
      const bool keep = len <= max_len_;
      if (keep) set_frame(p, static_cast<const uint8_t*>(xsk_umem__get_data(r_->area, addr)), len);
      xsk_ring_cons__release(&r_->rx, 1);
      r_->recycle(addr);
      if (keep) return true;
      ++skipped_too_large_;
      continue;
    }
    if (xsk_ring_prod__needs_wakeup(&r_->fill))
      ::recvfrom(r_->fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    // Timed out, or a signal (the caller looks at why).
    if (timeout_ms == 0 || !wait_any({this}, timeout_ms)) return false;
    timeout_ms = 0;  // the frame is there now
  }
}

bool XskPort::write(std::span<const uint8_t> frame) {
  if (r_->free_tx.empty()) r_->reclaim();
  if (r_->free_tx.empty()) flush();  // a batch larger than the TX ring: send what is queued
  uint32_t idx = 0;
  if (frame.size() > kFrameSize || r_->free_tx.empty() ||
      xsk_ring_prod__reserve(&r_->tx, 1, &idx) != 1) {
    ++write_errors_;
    return false;
  }
  const uint64_t addr = r_->free_tx.back();
  r_->free_tx.pop_back();
  std::memcpy(xsk_umem__get_data(r_->area, addr), frame.data(), frame.size());
  xdp_desc* d = xsk_ring_prod__tx_desc(&r_->tx, idx);
  d->addr = addr;
  d->len = static_cast<uint32_t>(frame.size());
  d->options = 0;
  xsk_ring_prod__submit(&r_->tx, 1);
  ++r_->tx_out;
  return true;
}

void XskPort::flush() {
  // Copy mode sends at most 32 frames a sendto (TX_BATCH_SIZE, net/xdp/xsk.c) and says
  // EAGAIN while more wait; a zero-copy driver completes later (reclaimed by the next flush).
  for (int tries = 0; r_->tx_out && tries < 256; ++tries) {
    if (::sendto(r_->fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno != EAGAIN &&
        errno != EBUSY && errno != ENOBUFS && errno != EINTR)
      break;
    r_->reclaim();
  }
  r_->reclaim();
}

void XskPort::stop_input() {
  at_->detach();
}

uint64_t XskPort::kernel_drops() const {
  xdp_statistics s{};
  socklen_t len = sizeof s;
  if (::getsockopt(r_->fd(), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) return 0;
  return s.rx_dropped + s.rx_ring_full + s.rx_invalid_descs;
}

void XskPort::check_alive() const {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(r_->fd(), SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err)
    throw Error(
        fmt::format("--xsk {}:{}: the interface went away ({})", name_, queue_, strerror(err)));
}

bool XskPort::drv() const {
  return at_->drv;
}

std::string XskPort::mode() const {
  return fmt::format("{}, {}", attach_mode(), zero_copy() ? "zero-copy" : "copy");
}

bool XskPort::zero_copy() const {
  xdp_options o{};
  socklen_t len = sizeof o;
  return ::getsockopt(r_->fd(), SOL_XDP, XDP_OPTIONS, &o, &len) == 0 &&
         (o.flags & XDP_OPTIONS_ZEROCOPY);
}

}  // namespace knod::io
