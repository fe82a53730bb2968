#include "cli_test.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace knod::cli_test {

std::vector<std::string> Result::err_lines() const {
  std::vector<std::string> lines;
  std::istringstream s(err);
  for (std::string l; std::getline(s, l);) lines.push_back(l);
  return lines;
}

namespace {
struct TempRoot {
  std::filesystem::path root;
  TempRoot() {
    const char* t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/knod-cli-test-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    root = tmpl;
  }
  ~TempRoot() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
};
TempRoot& temp_root() {
  static TempRoot r;
  return r;
}
}  // namespace

std::string temp_dir() {
  static int n = 0;
  std::filesystem::path p = temp_root().root / std::to_string(n++);
  std::filesystem::create_directories(p);
  return p.string();
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

Result knod(const std::string& args, const std::string& env) {
  std::string dir = temp_dir();
  std::string out = dir + "/stdout", err = dir + "/stderr";
  // halt_on_error: a sanitizer build turns any report into a failed status as well.
  // KNOD_TEST_WRAPPER runs knod under a checker, e.g. "valgrind -q --error-exitcode=99":
  // any report then shows as a second stderr line and a wrong status.
  const char* wrap = std::getenv("KNOD_TEST_WRAPPER");
  std::string cmd = "ASAN_OPTIONS=halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1 " + env + " " +
                    (wrap ? std::string(wrap) + " " : "") + KNOD_BIN + " " + args + " >" + out +
                    " 2>" + err + " </dev/null";
  int st = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

namespace {
void put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += char(v >> (8 * i));
}
void put16(std::string& s, uint16_t v) {
  s += char(v);
  s += char(v >> 8);
}
}  // namespace

std::string pcap_bytes(uint32_t dlt, const std::vector<std::string>& frames, uint32_t wire_len) {
  // pcap-savefile(5): magic, version 2.4, thiszone, sigfigs, snaplen, linktype.
  std::string s;
  put32(s, 0xa1b2c3d4);
  put16(s, 2);
  put16(s, 4);
  put32(s, 0);
  put32(s, 0);
  put32(s, 262144);
  put32(s, dlt);
  uint32_t sec = 1700000000;
  for (const std::string& f : frames) {
    put32(s, sec++);
    put32(s, 0);
    put32(s, uint32_t(f.size()));
    put32(s, wire_len > f.size() ? wire_len : uint32_t(f.size()));
    s += f;
  }
  return s;
}

std::string udp_frame(size_t size) {
  std::string f(size, '\0');
  auto b = [&](size_t i, int v) { f[i] = char(v); };
  const uint8_t macs[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};  // dst, src
  for (int i = 0; i < 12; ++i) b(i, macs[i]);
  b(12, 0x08), b(13, 0x00);  // ETH_P_IP
  size_t ip_len = size - 14, udp_len = size - 34;
  b(14, 0x45), b(16, int(ip_len >> 8)), b(17, int(ip_len & 0xff));
  b(22, 64), b(23, 17);                      // TTL, UDP
  b(26, 10), b(29, 1), b(30, 10), b(33, 2);  // 10.0.0.1 -> 10.0.0.2
  uint32_t sum = 0;
  for (size_t i = 14; i < 34; i += 2) sum += (uint8_t(f[i]) << 8) | uint8_t(f[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  b(24, int((~sum >> 8) & 0xff)), b(25, int(~sum & 0xff));
  b(34, 0x30), b(35, 0x39), b(36, 0x00), b(37, 53);      // 12345 -> 53
  b(38, int(udp_len >> 8)), b(39, int(udp_len & 0xff));  // checksum 0: none (IPv4)
  return f;
}

}  // namespace knod::cli_test
