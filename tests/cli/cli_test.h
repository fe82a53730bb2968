// Runs the `knod` binary as a user would and captures what it prints.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace knod::cli_test {

struct Result {
  int rc = -1;      ///< exit status; 128+N when killed by signal N (a crash)
  std::string out;  ///< stdout
  std::string err;  ///< stderr
  /// stderr's lines (without "\n"); a message must be exactly one.
  std::vector<std::string> err_lines() const;
};

/// Runs `KNOD_BIN args` through /bin/sh (args are shell words: quote paths with spaces),
/// with `env` ("NAME=value ...") prepended. Sanitizer reports, if any, land in err.
/// $KNOD_TEST_WRAPPER (e.g. "valgrind -q --error-exitcode=99") is put before the binary.
Result knod(const std::string& args, const std::string& env = "");

/// A fresh directory under $TMPDIR (or /tmp), removed at exit.
std::string temp_dir();

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

/// A classic pcap file (microsecond timestamps, little-endian) with link type `dlt`;
/// each frame's caplen == len unless `wire_len` gives a larger len.
std::string pcap_bytes(uint32_t dlt, const std::vector<std::string>& frames, uint32_t wire_len = 0);

/// An Ethernet + IPv4 + UDP frame of `size` bytes (>= 42), valid headers, zero payload.
std::string udp_frame(size_t size);

/// Sends 3 ICMP echo requests (id 0x1234, seq 0-2, 8-byte payload `tag`) to `to_addr` from a
/// raw socket and expects each one's reply as tests/bpf icmp_echo makes it (TTL 64, valid
/// checksums, the payload back) within 10 s. gtest assertions (ping.cpp).
void expect_echo_replies(const std::string& to_addr, const std::string& tag);

/// A socket or other descriptor, closed on every return (a failed assertion's too).
struct Socket {
  int fd;
  explicit Socket(int fd) : fd(fd) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

/// Sends `n` Ethernet frames of 60 bytes (EtherType 0x88b5, local experimental; bytes 14-15
/// the frame's number) out of interface `dev` from a packet socket: to knod at the far end of
/// a TAP, or into a veth's peer. gtest assertions (ping.cpp).
void send_frames(const std::string& dev, int n);

/// Sends one Ethernet frame, `frame` as given, out of interface `dev` from a packet socket.
void send_frame(const std::string& dev, const std::vector<uint8_t>& frame);

}  // namespace knod::cli_test
