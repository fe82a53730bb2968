// PcapWriter: pcap output through libpcap (pcap_open_dead + pcap_dump).
#include <fmt/format.h>
#include <pcap/pcap.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "io/pcap.h"

namespace knod::io {

PcapWriter::PcapWriter(const std::string& path, uint32_t snaplen, bool nanosecond, int dlt)
    : path_(path), snaplen_(snaplen), nanosecond_(nanosecond) {
  dead_ = pcap_open_dead_with_tstamp_precision(
      dlt, int(snaplen), nanosecond ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
  if (!dead_) throw Error(fmt::format("{}: pcap_open_dead failed", path));
  dump_ = pcap_dump_open(dead_, path.c_str());
  if (!dump_) {
    std::string err = pcap_geterr(dead_);
    pcap_close(dead_);
    dead_ = nullptr;
    // libpcap's fopen message already names the file ("PATH: No such file or directory").
    if (err.rfind(path + ": ", 0) == 0) throw Error(err);
    throw Error(fmt::format("{}: {}", path, err));
  }
}

PcapWriter::~PcapWriter() {
  try {
    close();
  } catch (const Error&) {
    // Destructors must not throw; call close() to see write errors.
  }
}

void PcapWriter::write(std::span<const uint8_t> data, uint64_t ts_ns, uint32_t wire_len) {
  if (!dump_) throw Error(fmt::format("{}: write after close", path_));
  pcap_pkthdr hdr{};
  uint64_t sub = nanosecond_ ? ts_ns % 1'000'000'000ull : (ts_ns % 1'000'000'000ull) / 1000;
  hdr.ts.tv_sec = time_t(ts_ns / 1'000'000'000ull);
  hdr.ts.tv_usec = suseconds_t(sub);
  hdr.caplen = uint32_t(std::min<size_t>(data.size(), snaplen_));
  hdr.len = wire_len ? std::max<uint32_t>(wire_len, uint32_t(data.size())) : uint32_t(data.size());
  pcap_dump(reinterpret_cast<u_char*>(dump_), &hdr, data.data());
  packets_++;
}

void PcapWriter::close() {
  if (!dump_) return;
  errno = 0;
  int flush_rc = pcap_dump_flush(dump_);
  const int err = errno;  // the flush's cause (ENOSPC on a full disk), as base/file.h says it
  bool ferr = ferror(pcap_dump_file(dump_)) != 0;
  pcap_dump_close(dump_);
  pcap_close(dead_);
  dump_ = nullptr;
  dead_ = nullptr;
  if (flush_rc != 0 || ferr)
    throw Error(err ? fmt::format("{}: write error ({})", path_, std::strerror(err))
                    : fmt::format("{}: write error", path_));
}

}  // namespace knod::io
