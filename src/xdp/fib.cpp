// FibTable: JSON parsing (nlohmann::json) and longest-prefix lookup.
#include "xdp/fib.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/file.h"

namespace knod::xdp {
namespace {

FibAddr parse_addr(const std::string& s, const char* what) {
  FibAddr a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET;
  } else if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) {
    a.family = AF_INET6;
  } else {
    throw Error(fmt::format("fib table: bad {} address '{}'", what, s));
  }
  return a;
}

std::array<uint8_t, 6> parse_mac(const std::string& s) {
  std::array<uint8_t, 6> m{};
  unsigned v[6];
  char extra;
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &extra) != 6)
    throw Error(fmt::format("fib table: bad mac '{}'", s));
  for (int i = 0; i < 6; ++i) {
    if (v[i] > 255) throw Error(fmt::format("fib table: bad mac '{}'", s));
    m[i] = uint8_t(v[i]);
  }
  return m;
}

bool prefix_match(const FibAddr& p, uint32_t len, const FibAddr& a) {
  if (p.family != a.family) return false;
  for (uint32_t bit = 0; bit < len; ++bit) {
    uint8_t mask = uint8_t(0x80 >> (bit % 8));
    if ((p.bytes[bit / 8] & mask) != (a.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

bool same_addr(const FibAddr& a, const FibAddr& b) {
  size_t n = a.family == AF_INET ? 4 : 16;
  return a.family == b.family && std::equal(a.bytes.begin(), a.bytes.begin() + n, b.bytes.begin());
}

}  // namespace

const FibIface* FibTable::iface(uint32_t ifindex) const {
  for (const auto& i : ifaces)
    if (i.ifindex == ifindex) return &i;
  return nullptr;
}

const FibRoute* FibTable::route(const FibAddr& dst) const {
  const FibRoute* best = nullptr;
  for (const auto& r : routes) {
    if (!prefix_match(r.prefix, r.prefix_len, dst)) continue;
    if (!best || r.prefix_len > best->prefix_len ||
        (r.prefix_len == best->prefix_len && r.metric < best->metric))
      best = &r;
  }
  return best;
}

const FibNeighbour* FibTable::neighbour(const FibAddr& ip, uint32_t ifindex) const {
  for (const auto& n : neighbours)
    if (n.ifindex == ifindex && same_addr(n.ip, ip)) return &n;
  return nullptr;
}

FibTable parse_fib_table(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("fib table: {}", e.what()));
  }
  FibTable t;
  try {
    for (const auto& i : j.value("ifaces", nlohmann::json::array())) {
      FibIface f;
      f.ifindex = i.at("ifindex").get<uint32_t>();
      if (i.contains("mac")) f.mac = parse_mac(i["mac"].get<std::string>());
      f.mtu = i.value("mtu", 1500u);
      f.forwarding = i.value("forwarding", true);
      t.ifaces.push_back(f);
    }
    for (const auto& r : j.value("routes", nlohmann::json::array())) {
      FibRoute f;
      std::string p = r.at("prefix").get<std::string>();
      auto slash = p.find('/');
      f.prefix = parse_addr(p.substr(0, slash), "prefix");
      uint32_t max = f.prefix.family == AF_INET ? 32 : 128;
      f.prefix_len = slash == std::string::npos ? max : uint32_t(std::stoul(p.substr(slash + 1)));
      if (f.prefix_len > max) throw Error(fmt::format("fib table: bad prefix '{}'", p));
      f.ifindex = r.value("ifindex", 0u);
      if (r.contains("gateway")) {
        f.gateway = parse_addr(r["gateway"].get<std::string>(), "gateway");
        f.has_gateway = true;
      }
      std::string type = r.value("type", std::string("unicast"));
      if (type == "unicast")
        f.type = RouteType::kUnicast;
      else if (type == "blackhole")
        f.type = RouteType::kBlackhole;
      else if (type == "unreachable")
        f.type = RouteType::kUnreachable;
      else if (type == "prohibit")
        f.type = RouteType::kProhibit;
      else
        throw Error(fmt::format("fib table: bad route type '{}'", type));
      f.metric = r.value("metric", 0u);
      t.routes.push_back(f);
    }
    for (const auto& n : j.value("neighbours", nlohmann::json::array())) {
      FibNeighbour f;
      f.ip = parse_addr(n.at("ip").get<std::string>(), "neighbour");
      f.mac = parse_mac(n.at("mac").get<std::string>());
      f.ifindex = n.at("ifindex").get<uint32_t>();
      t.neighbours.push_back(f);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("fib table: {}", e.what()));
  } catch (const std::logic_error& e) {
    throw Error(fmt::format("fib table: {}", e.what()));
  }
  return t;
}

FibTable load_fib_table(const std::string& path) {
  return parse_fib_table(read_file(path, "fib table"));
}

}  // namespace knod::xdp
