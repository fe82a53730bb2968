// PcapReader: pcap/pcapng input through libpcap (pcap_open_offline, pcap_next_ex).
#include <fmt/format.h>
#include <pcap/pcap.h>

#include "base/error.h"
#include "io/pcap.h"

namespace knod::io {

const char* skip_reason_name(SkipReason r) {
  switch (r) {
    case SkipReason::kSnapped:
      return "snapped (caplen < len)";
    case SkipReason::kTooLarge:
      return "larger than the XDP frame";
  }
  return "?";
}

PcapReader::PcapReader(const std::string& path, uint32_t max_len) : path_(path), max_len_(max_len) {
  char errbuf[PCAP_ERRBUF_SIZE] = {};
  pcap_ = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, errbuf);
  if (!pcap_) throw Error(fmt::format("{}: {}", path, errbuf));
  int dlt = pcap_datalink(pcap_);
  if (dlt != DLT_EN10MB) {
    pcap_close(pcap_);
    pcap_ = nullptr;
    throw Error(
        fmt::format("{}: {} not supported: knod runs XDP on Ethernet", path, link_type_text(dlt)));
  }
}

std::string link_type_text(int dlt) {
  const char* name = pcap_datalink_val_to_name(dlt);
  const char* what = pcap_datalink_val_to_description(dlt);
  if (!name) return fmt::format("link-type {} (unknown)", dlt);
  return fmt::format("link-type {} ({})", name, what ? what : "?");
}

PcapReader::~PcapReader() {
  if (pcap_) pcap_close(pcap_);
}

bool PcapReader::next(Packet& p) {
  while (pcap_ && error_.empty()) {
    pcap_pkthdr* hdr = nullptr;
    const u_char* bytes = nullptr;
    int rc = pcap_next_ex(pcap_, &hdr, &bytes);
    if (rc == PCAP_ERROR_BREAK) return false;  // clean end of file
    if (rc != 1) {
      const std::string why = pcap_geterr(pcap_);
      // libpcap reads one link type per file: a pcapng interface of another type is a capture
      // knod cannot read, not a damaged one ("cut short").
      if (why.find("different from the type of the first interface") != std::string::npos)
        throw Error(fmt::format(
            "{}: record {}: {}: knod reads captures of one link type (one file per interface: "
            "tshark -r IN -Y 'frame.interface_id == 0' -w OUT)",
            path_, index_, why));
      error_ = fmt::format("{}: record {}: {}", path_, index_, why);
      return false;
    }
    uint64_t index = index_++;
    if (hdr->caplen < hdr->len) {
      skipped_.push_back({index, SkipReason::kSnapped, hdr->caplen, hdr->len});
      continue;
    }
    if (hdr->len > max_len_) {
      skipped_.push_back({index, SkipReason::kTooLarge, hdr->caplen, hdr->len});
      continue;
    }
    // With PCAP_TSTAMP_PRECISION_NANO, tv_usec carries nanoseconds.
    p.ts_ns = uint64_t(hdr->ts.tv_sec) * 1'000'000'000ull + uint64_t(hdr->ts.tv_usec);
    p.wire_len = hdr->len;
    p.data.assign(bytes, bytes + hdr->caplen);
    packets_++;
    bytes_ += hdr->caplen;
    return true;
  }
  return false;
}

uint64_t PcapReader::skipped_count(SkipReason r) const {
  uint64_t n = 0;
  for (const Skip& s : skipped_) n += s.reason == r;
  return n;
}

uint32_t PcapReader::snaplen() const {
  return uint32_t(pcap_snapshot(pcap_));
}
int PcapReader::link_type() const {
  return pcap_datalink(pcap_);
}

std::string cut_short_note(const std::string& error, uint64_t read) {
  return fmt::format("{} (the capture is cut short; the {} record{} before it {} read)", error,
                     read, read == 1 ? "" : "s", read == 1 ? "was" : "were");
}

}  // namespace knod::io
