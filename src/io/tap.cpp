#include "io/tap.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "io/netdev.h"

namespace knod::io {

namespace {
constexpr size_t kReadMax = 65536;  // a TAP frame is at most the interface MTU + 14 (< 64 KiB)

}  // namespace

TapPort::TapPort(const std::string& name, uint32_t max_len, const std::string& option)
    : name_(name), option_(option), max_len_(max_len) {
  if (name.empty() || name.size() >= IFNAMSIZ)
    throw Error(
        fmt::format("{} '{}': an interface name has 1 to {} bytes", option, name, IFNAMSIZ - 1));
  fd_ = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0)
    throw Error(fmt::format("{} {}: cannot open /dev/net/tun ({}{})", option, name, strerror(errno),
                            errno == EACCES || errno == EPERM ? ": needs root" : ""));
  ifreq ifr{};
  ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
  std::memcpy(ifr.ifr_name, name.data(), name.size());
  if (::ioctl(fd_, TUNSETIFF, &ifr) < 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    throw Error(fmt::format("{} {}: cannot create or attach the TAP interface ({}{})", option, name,
                            strerror(e),
                            e == EPERM    ? ": needs CAP_NET_ADMIN"
                            : e == EINVAL ? ": not a valid interface name, or taken by an "
                                            "interface that is not a single-queue TAP"
                                          : ""));
  }
  // A persistent TAP (`ip tuntap add`) outlives knod: the user's; any other, knod made.
  ifreq got{};
  created_ = ::ioctl(fd_, TUNGETIFF, &got) == 0 && !(got.ifr_flags & IFF_PERSIST);
  // The interface's name as the kernel made it: a template ("kt%d") is filled in.
  name_.assign(ifr.ifr_name, strnlen(ifr.ifr_name, IFNAMSIZ));
  buf_.resize(kReadMax);
  ifindex_ = ::if_nametoindex(name_.c_str());
  at_open_ = drops(name_);  // a persistent TAP's drops before knod
}

TapPort::Drops TapPort::drops(const std::string& name) {
  std::ifstream in("/proc/thread-self/net/dev");  // /proc/net: the main thread's
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const size_t first = line.find_first_not_of(' ');
    if (first >= colon || line.compare(first, colon - first, name) != 0) continue;
    std::istringstream fields(line.substr(colon + 1));
    uint64_t v[12] = {};  // receive: bytes packets errs drop fifo frame compressed multicast;
    for (uint64_t& x : v) fields >> x;  // transmit: bytes packets errs drop
    return fields ? Drops{v[3], v[11]} : Drops{};
  }
  return {};
}

TapPort::Drops TapPort::since_open() const {
  // By ifindex: the interface may have been renamed since (and its name taken by another).
  char now_name[IF_NAMESIZE] = {};
  if (!ifindex_ || !::if_indextoname(ifindex_, now_name)) return {};  // deleted: the run says so
  const Drops now = drops(now_name);
  return {now.rx > at_open_.rx ? now.rx - at_open_.rx : 0,
          now.tx > at_open_.tx ? now.tx - at_open_.tx : 0};
}

uint64_t TapPort::kernel_drops() const {
  return since_open().tx;
}

uint64_t TapPort::stack_drops() const {
  const uint64_t rx = since_open().rx;  // the writes refused are write_errors(), not these
  return rx > refused_counted_ ? rx - refused_counted_ : 0;
}

TapPort::~TapPort() {
  if (fd_ >= 0) ::close(fd_);
}

bool TapPort::is_up() const {
  ifreq ifr{};
  return netdev_ioctl(name_, SIOCGIFFLAGS, ifr) == 0 && (ifr.ifr_flags & IFF_UP);
}

void TapPort::set_up(const std::array<uint8_t, 6>& mac) {
  ifreq ifr{};
  ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
  std::memcpy(ifr.ifr_hwaddr.sa_data, mac.data(), mac.size());
  int e = netdev_ioctl(name_, SIOCSIFHWADDR, ifr);
  if (e)
    throw Error(
        fmt::format("{} {}: cannot set its Ethernet address ({})", option_, name_, strerror(e)));
  e = netdev_ioctl(name_, SIOCGIFFLAGS, ifr);
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
  if (!e) e = netdev_ioctl(name_, SIOCSIFFLAGS, ifr);
  if (e) throw Error(fmt::format("{} {}: cannot bring it up ({})", option_, name_, strerror(e)));
}

uint32_t TapPort::ifindex() const {
  return ifindex_;
}

bool TapPort::read(Packet& p, int timeout_ms) {
  for (;;) {
    const ssize_t n = ::read(fd_, buf_.data(), buf_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EBADFD || errno == EIO)  // deleted (tun_chr_read_iter: no tun attached)
        throw Error(
            fmt::format("{} {}: the interface went away ({})", option_, name_, strerror(errno)));
      if (errno != EAGAIN)
        throw Error(fmt::format("{} {}: read: {}", option_, name_, strerror(errno)));
      // Timed out, or a signal (the caller looks at why).
      if (timeout_ms == 0 || !wait_any({this}, timeout_ms)) return false;
      continue;
    }
    if (static_cast<size_t>(n) > max_len_) {
      ++skipped_too_large_;
      continue;
    }
    set_frame(p, buf_.data(), static_cast<uint32_t>(n));
    return true;
  }
}

bool TapPort::write(std::span<const uint8_t> frame) {
  for (;;) {
    const ssize_t n = ::write(fd_, frame.data(), frame.size());
    if (n == static_cast<ssize_t>(frame.size())) return true;
    if (n < 0 && errno == EINTR) continue;
    ++write_errors_;
    // tun_get_user counts in rx_dropped every write it fails but EAGAIN, past the frame's
    // checks (EINVAL: too short) and with the queue attached (EBADFD): EIO (down), ENOMEM...
    if (n < 0 && errno != EAGAIN && errno != EINVAL && errno != EBADFD) ++refused_counted_;
    return false;
  }
}

}  // namespace knod::io
