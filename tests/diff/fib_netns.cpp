#include "fib_netns.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

namespace knod::diff {
namespace {

bool g_ok = false;
std::string g_why;

bool write_sysctl(const char* path, std::string* why) {
  std::ofstream f(path);
  f << "1\n";
  f.flush();
  if (!f) *why = std::string("cannot write ") + path;
  return bool(f);
}

bool setup(std::string* why) {
  if (unshare(CLONE_NEWNET) != 0) {
    *why = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
    return false;
  }
  const char* cmds[] = {
      "ip link set lo up",
      "ip link add kd0 type veth peer name kd1",
      "ip link set kd0 address 02:00:00:00:00:fe mtu 1500 up",
      "ip link set kd1 address 02:00:00:00:00:fc mtu 1500 up",
      "ip route add 10.0.0.0/24 dev kd0",
      "ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev kd0 nud permanent",
      "ip neigh add 10.0.0.254 lladdr 02:00:00:00:00:fd dev kd0 nud permanent",
      "ip route add 172.16.0.0/16 via 10.0.0.254 dev kd0",
      "ip route add blackhole 192.0.2.0/24",
      "ip route add unreachable 198.51.100.0/24",
      "ip route add prohibit 203.0.113.0/24",
      "ip -6 route add fd00::/64 dev kd0",
      "ip -6 neigh add fd00::2 lladdr 02:00:00:00:00:02 dev kd0 nud permanent",
      "ip -6 route add blackhole fd00:dead::/32",
  };
  if (!write_sysctl("/proc/sys/net/ipv4/conf/all/forwarding", why) ||
      !write_sysctl("/proc/sys/net/ipv6/conf/all/forwarding", why))
    return false;
  for (const char* c : cmds) {
    const std::string cmd = std::string("PATH=$PATH:/usr/sbin:/sbin ") + c + " 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      *why = std::string("`") + c + "` failed";
      return false;
    }
  }
  return true;
}

}  // namespace

bool enter_fib_netns(std::string* why) {
  static std::once_flag once;
  std::call_once(once, [] { g_ok = setup(&g_why); });
  if (!g_ok && why) *why = g_why;
  return g_ok;
}

std::string fib_json() {
  using nlohmann::json;
  const uint32_t kd0 = if_nametoindex("kd0"), kd1 = if_nametoindex("kd1");
  json t;
  t["ifaces"] = json::array({
      {{"ifindex", 1}, {"mac", "00:00:00:00:00:00"}, {"mtu", 65536}, {"forwarding", true}},
      {{"ifindex", kd0}, {"mac", "02:00:00:00:00:fe"}, {"mtu", 1500}},
      {{"ifindex", kd1}, {"mac", "02:00:00:00:00:fc"}, {"mtu", 1500}},
  });
  t["routes"] = json::array({
      {{"prefix", "10.0.0.0/24"}, {"ifindex", kd0}},
      {{"prefix", "172.16.0.0/16"}, {"ifindex", kd0}, {"gateway", "10.0.0.254"}},
      {{"prefix", "192.0.2.0/24"}, {"type", "blackhole"}},
      {{"prefix", "198.51.100.0/24"}, {"type", "unreachable"}},
      {{"prefix", "203.0.113.0/24"}, {"type", "prohibit"}},
      {{"prefix", "fd00::/64"}, {"ifindex", kd0}},
      {{"prefix", "fe80::/64"}, {"ifindex", kd0}},
      {{"prefix", "fd00:dead::/32"}, {"type", "blackhole"}},
  });
  t["neighbours"] = json::array({
      {{"ip", "10.0.0.2"}, {"mac", "02:00:00:00:00:02"}, {"ifindex", kd0}},
      {{"ip", "10.0.0.254"}, {"mac", "02:00:00:00:00:fd"}, {"ifindex", kd0}},
      {{"ip", "fd00::2"}, {"mac", "02:00:00:00:00:02"}, {"ifindex", kd0}},
  });
  return t.dump(2);
}

}  // namespace knod::diff
