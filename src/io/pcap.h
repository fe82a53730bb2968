// Packet capture files in and out: pcap and pcapng through libpcap, Ethernet (DLT_EN10MB)
// only, since knod runs XDP programs on Ethernet frames.
// Formats: pcap (https://www.tcpdump.org/manpages/pcap-savefile.5.html), pcapng
// (draft-ietf-opsawg-pcapng). Timestamps are kept in nanoseconds since the Unix epoch.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "device/batch.h"

// libpcap handles, declared here so that this header does not pull in <pcap/pcap.h> (its
// pcap/bpf.h clashes with <linux/bpf.h>).
struct pcap;
struct pcap_dumper;

namespace knod::io {

/// One captured frame: bytes from the Ethernet header on.
struct Packet {
  uint64_t ts_ns = 0;         ///< capture time, ns since the Unix epoch
  uint32_t wire_len = 0;      ///< length on the wire, bytes (pcap `len`); == data.size() here
  std::vector<uint8_t> data;  ///< captured bytes (pcap `caplen`)
};

/// Why a record was not handed out by PcapReader::next.
enum class SkipReason : uint8_t {
  kSnapped,   ///< caplen < len: the capture cut the frame, the program would see a different one
  kTooLarge,  ///< len > max_len (default device::kMaxPacket, 3520 B): no XDP frame holds it
};
const char* skip_reason_name(SkipReason r);

/// What a cut-off capture's warning says (knod run, knod bench): libpcap's `error`, then "(the
/// capture is cut short; the N records before it were read)", `read` being N.
std::string cut_short_note(const std::string& error, uint64_t read);

struct Skip {
  uint64_t index;  ///< 0-based record number in the file
  SkipReason reason;
  uint32_t caplen;  ///< bytes captured
  uint32_t len;     ///< bytes on the wire
};

/// A link type as tcpdump names it: "link-type RAW (Raw IP)". `dlt` is libpcap's DLT value
/// (pcap_datalink), which is not always the file's LINKTYPE number (LINKTYPE_RAW 101 is
/// DLT_RAW 12), so no number is shown.
std::string link_type_text(int dlt);

/// Reads a pcap or pcapng file (pcap_open_offline handles both) frame by frame.
class PcapReader {
 public:
  /// Opens `path`. Throws knod::Error when the file cannot be opened or parsed, or when its
  /// link type is not Ethernet: "link-type NAME (DESCRIPTION) not supported: knod runs XDP on
  /// Ethernet". next() throws it for a pcapng interface whose link type differs from the
  /// first's (libpcap reads one per file).
  /// `max_len`: frames longer than this (bytes on the wire) are skipped as kTooLarge.
  explicit PcapReader(const std::string& path, uint32_t max_len = kDefaultMaxLen);
  ~PcapReader();
  PcapReader(const PcapReader&) = delete;
  PcapReader& operator=(const PcapReader&) = delete;

  /// Fills `p` with the next usable frame. Returns false at the end of the file or when the
  /// file is damaged; then truncated() / error() say which. Skipped frames are not returned:
  /// they are counted in skipped().
  bool next(Packet& p);

  /// True when the file ended inside a record (a cut-off capture): the frames before it
  /// were returned; error() holds libpcap's message.
  bool truncated() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  uint64_t packets() const { return packets_; }  ///< frames returned by next()
  uint64_t bytes() const { return bytes_; }      ///< sum of their lengths, bytes
  const std::vector<Skip>& skipped() const { return skipped_; }
  uint64_t skipped_count(SkipReason r) const;
  uint32_t snaplen() const;
  int link_type() const;  ///< DLT_EN10MB (1)

  static constexpr uint32_t kDefaultMaxLen = device::kMaxPacket;  ///< 3520 B

 private:
  ::pcap* pcap_ = nullptr;
  std::string path_;
  std::string error_;
  uint32_t max_len_;
  uint64_t index_ = 0;
  uint64_t packets_ = 0;
  uint64_t bytes_ = 0;
  std::vector<Skip> skipped_;
};

/// Writes a pcap file through pcap_dump, link type `dlt` (DLT_EN10MB, 1, unless given; knod
/// ipsec also writes DLT_RAW). Nanosecond timestamp precision by default (magic 0xa1b23c4d),
/// so timestamps read by PcapReader survive exactly; `nanosecond = false` writes the classic
/// microsecond format (magic 0xa1b2c3d4).
class PcapWriter {
 public:
  /// Creates/truncates `path`. Throws knod::Error "PATH: why" when it cannot be written.
  explicit PcapWriter(const std::string& path, uint32_t snaplen = 65535, bool nanosecond = true,
                      int dlt = 1);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  /// Appends one frame. `wire_len` 0 means data.size(). Frames longer than the snaplen are
  /// cut to it (caplen = snaplen, len = wire length), as a capture would.
  void write(std::span<const uint8_t> data, uint64_t ts_ns, uint32_t wire_len = 0);
  void write(const Packet& p) { write(p.data, p.ts_ns, p.wire_len); }
  /// Flushes and closes; throws knod::Error on a write error. Also done by the destructor.
  void close();
  uint64_t packets() const { return packets_; }

 private:
  ::pcap* dead_ = nullptr;
  ::pcap_dumper* dump_ = nullptr;
  std::string path_;
  uint32_t snaplen_;
  bool nanosecond_;
  uint64_t packets_ = 0;
};

}  // namespace knod::io
