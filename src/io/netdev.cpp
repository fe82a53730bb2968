#include "io/netdev.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace knod::io {

int netdev_ioctl(const std::string& name, unsigned long request, ifreq& ifr) {
  std::memset(ifr.ifr_name, 0, sizeof ifr.ifr_name);
  std::memcpy(ifr.ifr_name, name.data(), std::min(name.size(), size_t(IFNAMSIZ - 1)));
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno;
  const int e = ::ioctl(s, request, &ifr) == 0 ? 0 : errno;
  ::close(s);
  return e;
}

uint32_t rx_queue_count(const std::string& name) {
  ethtool_channels ch{};
  ch.cmd = ETHTOOL_GCHANNELS;
  ifreq ifr{};
  ifr.ifr_data = reinterpret_cast<char*>(&ch);
  return netdev_ioctl(name, SIOCETHTOOL, ifr) == 0 ? ch.max_rx + ch.max_combined : 0;
}

}  // namespace knod::io
