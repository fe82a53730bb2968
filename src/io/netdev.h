// An ioctl(2) on a network interface by name (netdevice(7): SIOCGIFFLAGS, SIOCSIFHWADDR, ...),
// for the ports' address and up/down handling.
#pragma once

#include <net/if.h>

#include <cstdint>
#include <string>

namespace knod::io {

/// Runs `request` on interface `name` (at most IFNAMSIZ - 1 bytes are used) with `ifr`, through
/// a datagram socket opened for the call. Returns 0, or the errno of the socket or the ioctl.
int netdev_ioctl(const std::string& name, unsigned long request, ifreq& ifr);

/// The RX queues interface `name` can have: max_rx + max_combined of ETHTOOL_GCHANNELS
/// (`ethtool -l NAME`); 0 where the driver does not say.
uint32_t rx_queue_count(const std::string& name);

}  // namespace knod::io
