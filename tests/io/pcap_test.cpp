// PcapReader / PcapWriter: round trips, pcapng input, truncated files, skipped frames, link
// types. Files are written into a per-test temporary directory with libpcap itself.
#include "io/pcap.h"

#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace fs = std::filesystem;
using knod::io::Packet;
using knod::io::PcapReader;
using knod::io::PcapWriter;
using knod::io::SkipReason;

namespace {

class PcapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("knod-io-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const char* name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A frame of `len` bytes whose byte i is (seed + i) mod 256.
std::vector<uint8_t> frame(size_t len, uint8_t seed) {
  std::vector<uint8_t> f(len);
  for (size_t i = 0; i < len; i++) f[i] = uint8_t(seed + i);
  return f;
}

constexpr uint64_t kT0 = 1'700'000'000'123'456'789ull;  // 2023-11-14, ns

}  // namespace

TEST_F(PcapTest, RoundTripKeepsBytesAndNanosecondTimestamps) {
  const size_t lens[] = {60, 98, 1514, 3520};
  {
    PcapWriter w(path("rt.pcap"));
    for (size_t i = 0; i < 4; i++) w.write(frame(lens[i], uint8_t(i)), kT0 + i * 1001);
    EXPECT_EQ(w.packets(), 4u);
  }
  // 24-byte global header + per record 16-byte header + data.
  EXPECT_EQ(fs::file_size(path("rt.pcap")), 24u + 4 * 16 + 60 + 98 + 1514 + 3520);
  PcapReader r(path("rt.pcap"));
  EXPECT_EQ(r.link_type(), DLT_EN10MB);
  Packet p;
  for (size_t i = 0; i < 4; i++) {
    ASSERT_TRUE(r.next(p)) << i;
    EXPECT_EQ(p.ts_ns, kT0 + i * 1001);
    EXPECT_EQ(p.wire_len, lens[i]);
    EXPECT_EQ(p.data, frame(lens[i], uint8_t(i)));
  }
  EXPECT_FALSE(r.next(p));
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(r.packets(), 4u);
  EXPECT_EQ(r.bytes(), 60u + 98 + 1514 + 3520);
  EXPECT_TRUE(r.skipped().empty());
}

TEST_F(PcapTest, MicrosecondFileRoundsTimestampsDown) {
  {
    PcapWriter w(path("us.pcap"), 65535, /*nanosecond=*/false);
    w.write(frame(64, 1), kT0);
  }
  std::ifstream f(path("us.pcap"), std::ios::binary);
  uint32_t magic = 0;
  f.read(reinterpret_cast<char*>(&magic), 4);
  EXPECT_EQ(magic, 0xa1b2c3d4u);
  PcapReader r(path("us.pcap"));
  Packet p;
  ASSERT_TRUE(r.next(p));
  EXPECT_EQ(p.ts_ns, 1'700'000'000'123'456'000ull);
}

TEST_F(PcapTest, TruncatedRecordReturnsEarlierPacketsAndFlags) {
  {
    PcapWriter w(path("cut.pcap"));
    for (int i = 0; i < 3; i++) w.write(frame(100, uint8_t(i)), kT0 + i);
  }
  // Cut the last record in the middle of its data: 24 + 2 * 116 + 16 + 50 bytes.
  fs::resize_file(path("cut.pcap"), 24 + 2 * 116 + 16 + 50);
  PcapReader r(path("cut.pcap"));
  Packet p;
  EXPECT_TRUE(r.next(p));
  EXPECT_TRUE(r.next(p));
  EXPECT_EQ(p.data, frame(100, 1));
  EXPECT_FALSE(r.next(p));
  EXPECT_TRUE(r.truncated());
  EXPECT_NE(r.error().find("truncated"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("record 2"), std::string::npos) << r.error();
  EXPECT_EQ(r.packets(), 2u);
  EXPECT_FALSE(r.next(p));  // stays at the end
}

TEST_F(PcapTest, TruncatedRecordHeaderIsFlagged) {
  {
    PcapWriter w(path("cuthdr.pcap"));
    for (int i = 0; i < 2; i++) w.write(frame(80, uint8_t(i)), kT0 + i);
  }
  fs::resize_file(path("cuthdr.pcap"), 24 + 96 + 7);  // 7 bytes of the 2nd record header
  PcapReader r(path("cuthdr.pcap"));
  Packet p;
  EXPECT_TRUE(r.next(p));
  EXPECT_FALSE(r.next(p));
  EXPECT_TRUE(r.truncated());
  EXPECT_EQ(r.packets(), 1u);
}

TEST_F(PcapTest, TruncatedGlobalHeaderThrows) {
  { PcapWriter w(path("tiny.pcap")); }
  fs::resize_file(path("tiny.pcap"), 10);
  EXPECT_THROW(PcapReader r(path("tiny.pcap")), knod::Error);
  EXPECT_THROW(PcapReader r(path("missing.pcap")), knod::Error);
}

TEST_F(PcapTest, SnappedAndOversizedFramesAreSkippedWithReason) {
  {
    PcapWriter w(path("skip.pcap"), /*snaplen=*/200);
    w.write(frame(100, 0), kT0);           // kept
    w.write(frame(300, 1), kT0 + 1);       // caplen 200 < len 300: snapped
    w.write(frame(150, 2), kT0 + 2, 900);  // caplen 150 < len 900: snapped
    w.write(frame(120, 3), kT0 + 3);       // kept
  }
  {
    PcapWriter w(path("big.pcap"));
    w.write(frame(3520, 0), kT0);  // exactly kMaxPacket: kept
    w.write(frame(3521, 1), kT0);  // too large
    w.write(frame(9000, 2), kT0);  // jumbo: too large
  }
  PcapReader r(path("skip.pcap"));
  Packet p;
  ASSERT_TRUE(r.next(p));
  EXPECT_EQ(p.data.size(), 100u);
  ASSERT_TRUE(r.next(p));
  EXPECT_EQ(p.data, frame(120, 3));
  EXPECT_EQ(p.ts_ns, kT0 + 3);
  EXPECT_FALSE(r.next(p));
  EXPECT_FALSE(r.truncated());
  ASSERT_EQ(r.skipped().size(), 2u);
  EXPECT_EQ(r.skipped()[0].index, 1u);
  EXPECT_EQ(r.skipped()[0].caplen, 200u);
  EXPECT_EQ(r.skipped()[0].len, 300u);
  EXPECT_EQ(r.skipped()[1].index, 2u);
  EXPECT_EQ(r.skipped()[1].len, 900u);
  EXPECT_EQ(r.skipped_count(SkipReason::kSnapped), 2u);
  EXPECT_EQ(r.snaplen(), 200u);

  PcapReader b(path("big.pcap"));
  ASSERT_TRUE(b.next(p));
  EXPECT_EQ(p.data.size(), 3520u);
  EXPECT_FALSE(b.next(p));
  EXPECT_EQ(b.skipped_count(SkipReason::kTooLarge), 2u);
  EXPECT_EQ(b.skipped()[1].len, 9000u);

  PcapReader jumbo(path("big.pcap"), 9000);  // a caller with larger frames keeps them all
  int n = 0;
  while (jumbo.next(p)) n++;
  EXPECT_EQ(n, 3);
}

TEST_F(PcapTest, NonEthernetLinkTypeIsRefused) {
  pcap_t* dead = pcap_open_dead(DLT_RAW, 65535);
  pcap_dumper_t* d = pcap_dump_open(dead, path("raw.pcap").c_str());
  ASSERT_NE(d, nullptr);
  pcap_dump_close(d);
  pcap_close(dead);
  try {
    PcapReader r(path("raw.pcap"));
    FAIL() << "no error";
  } catch (const knod::Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("link-type RAW (Raw IP) not supported: knod runs XDP on Ethernet"),
              std::string::npos)
        << m;
  }
}

// A hand-built pcapng (SHB + IDB with if_tsresol 9 + two EPBs), little-endian, per
// draft-ietf-opsawg-pcapng sections 4.1-4.3.
TEST_F(PcapTest, ReadsPcapng) {
  std::vector<uint8_t> b;
  auto u16 = [&](uint16_t v) {
    b.push_back(uint8_t(v));
    b.push_back(uint8_t(v >> 8));
  };
  auto u32 = [&](uint32_t v) {
    u16(uint16_t(v));
    u16(uint16_t(v >> 16));
  };
  // Section Header Block, 28 bytes.
  u32(0x0A0D0D0A);
  u32(28);
  u32(0x1A2B3C4D);
  u16(1);
  u16(0);
  u32(0xffffffff);
  u32(0xffffffff);
  u32(28);
  // Interface Description Block: link type 1, snaplen 0, option if_tsresol=9, end.
  u32(1);
  u32(32);
  u16(1);
  u16(0);
  u32(0);
  u16(9);
  u16(1);
  b.push_back(9);
  b.push_back(0);
  b.push_back(0);
  b.push_back(0);
  u16(0);
  u16(0);
  u32(32);
  auto epb = [&](uint64_t ts, const std::vector<uint8_t>& f) {
    uint32_t padded = uint32_t((f.size() + 3) & ~size_t(3));
    uint32_t total = 32 + padded;
    u32(6);
    u32(total);
    u32(0);
    u32(uint32_t(ts >> 32));
    u32(uint32_t(ts));
    u32(uint32_t(f.size()));
    u32(uint32_t(f.size()));
    b.insert(b.end(), f.begin(), f.end());
    b.resize(b.size() + padded - f.size());
    u32(total);
  };
  epb(kT0, frame(61, 7));
  epb(kT0 + 5, frame(64, 8));
  std::ofstream(path("a.pcapng"), std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));

  PcapReader r(path("a.pcapng"));
  Packet p;
  ASSERT_TRUE(r.next(p));
  EXPECT_EQ(p.ts_ns, kT0);
  EXPECT_EQ(p.data, frame(61, 7));
  ASSERT_TRUE(r.next(p));
  EXPECT_EQ(p.ts_ns, kT0 + 5);
  EXPECT_EQ(p.data, frame(64, 8));
  EXPECT_FALSE(r.next(p));
  EXPECT_FALSE(r.truncated());

  // A second interface of another link type (RAW) after the first packet: libpcap reads one
  // link type per file, and knod says so (it reported a capture cut short).
  {
    const size_t keep = b.size();
    u32(1);  // IDB: link type 101 (LINKTYPE_RAW), no options
    u32(20);
    u16(101);
    u16(0);
    u32(0);
    u32(20);
    epb(kT0 + 9, frame(60, 9));
    std::ofstream(path("mixed.pcapng"), std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    b.resize(keep);
    PcapReader m(path("mixed.pcapng"));
    ASSERT_TRUE(m.next(p));
    ASSERT_TRUE(m.next(p));
    try {
      m.next(p);
      FAIL() << "no error";
    } catch (const knod::Error& e) {
      EXPECT_NE(std::string(e.what()).find("record 2: an interface has a type 101 different from "
                                           "the type of the first interface"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("knod reads captures of one link type"),
                std::string::npos)
          << e.what();
    }
  }

  // pcapng in, pcap out: same frames and timestamps.
  {
    PcapReader in(path("a.pcapng"));
    PcapWriter out(path("b.pcap"));
    while (in.next(p)) out.write(p);
  }
  PcapReader back(path("b.pcap"));
  ASSERT_TRUE(back.next(p));
  EXPECT_EQ(p.ts_ns, kT0);
  ASSERT_TRUE(back.next(p));
  EXPECT_EQ(p.data, frame(64, 8));
}

// The bundled capture examples/pcap/ping4.pcap: 2 ARP + 4 echo requests + 4 replies, all
// Ethernet, none skipped, timestamps non-decreasing.
TEST(BundledPcaps, Ping4) {
  PcapReader r(KNOD_EXAMPLES_PCAP "/ping4.pcap");
  Packet p;
  uint64_t last = 0;
  int echo = 0;
  while (r.next(p)) {
    EXPECT_GE(p.ts_ns, last);
    last = p.ts_ns;
    if (p.data.size() == 98 && p.data[12] == 0x08 && p.data[13] == 0x00 && p.data[23] == 1) echo++;
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(r.packets(), 10u);
  EXPECT_EQ(echo, 8);
  EXPECT_TRUE(r.skipped().empty());
}
