#include "io/port.h"

#include <fmt/core.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "base/error.h"
#include "io/netdev.h"

namespace knod::io {

void set_frame(Packet& p, const uint8_t* data, uint32_t len) {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  p.ts_ns = uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
  p.wire_len = len;
  p.data.assign(data, data + len);
}

std::optional<std::array<uint8_t, 6>> hw_addr(const std::string& name) {
  if (name.size() >= IFNAMSIZ) throw Error(fmt::format("{}: not an interface name", name));
  ifreq ifr{};
  if (const int e = netdev_ioctl(name, SIOCGIFHWADDR, ifr))
    throw Error(fmt::format("{}: cannot read its link address ({})", name, strerror(e)));
  if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) return std::nullopt;
  std::array<uint8_t, 6> mac{};
  std::memcpy(mac.data(), ifr.ifr_hwaddr.sa_data, mac.size());
  return mac;
}

bool wait_any(const std::vector<Port*>& ports, int timeout_ms) {
  std::vector<pollfd> fds;
  for (const Port* p : ports) fds.push_back({p->poll_fd(), POLLIN, 0});
  const int r = ::poll(fds.data(), fds.size(), timeout_ms);
  if (r < 0 && errno != EINTR) throw Error(fmt::format("poll: {}", strerror(errno)));
  for (size_t i = 0; r > 0 && i < fds.size(); ++i)
    if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL))
      throw Error(
          fmt::format("--{} {}: the interface went away", ports[i]->kind(), ports[i]->name()));
  for (const Port* p : ports) p->check_alive();
  return r > 0;
}

}  // namespace knod::io
