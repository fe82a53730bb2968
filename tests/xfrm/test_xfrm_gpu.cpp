// The GPU ESP engine without a GPU: the ops staging (pack_ops -> the kernels' own op body
// run_dev_op on the host -> unpack_ops) must give the portable engine's bytes through whole
// ESP batches; CudaEngine::open reports a missing driver/GPU as knod::Error; the embedded PTX
// has the three kernels. With a GPU present, CudaEngine itself is compared with the portable
// engine (bytes and drop reasons).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "base/error.h"
#include "device/cuda/driver.h"
#include "util.h"
#include "xfrm/crypto/engines.h"
#include "xfrm/crypto/portable_engine.h"
#include "xfrm/gpu/cuda_engine.h"

namespace knod::xfrm {
namespace {
using namespace test;

/// CryptoEngine that stages ops exactly as CudaEngine does and runs the kernel body on the host.
class StagedHostEngine final : public CryptoEngine {
 public:
  const char* name() const override { return "staged-host"; }
  void add_sa(uint32_t id, const SaConfig& cfg) override {
    gpu::DevSa s;
    s.cfg = cfg;
    if (!portable::portable_sa_init(s.key, cfg, portable::kTables)) throw Error("not AEAD");
    if (sas_.size() <= id) sas_.resize(id + 1), icv_.resize(id + 1, 16);
    sas_[id] = s, icv_[id] = cfg.icv_len;
  }
  void encrypt(CryptoOp* ops, uint32_t n) override { run(ops, n, true); }
  void decrypt(CryptoOp* ops, uint32_t n) override { run(ops, n, false); }

 private:
  void run(CryptoOp* ops, uint32_t n, bool enc) {
    std::vector<uint8_t> buf, ok(n);
    std::vector<gpu::DevOp> dev;
    gpu::pack_ops(ops, n, icv_, buf, dev);
    gpu::EspKernelArgs a;
    a.sas = sas_.data(), a.nsas = uint32_t(sas_.size()), a.count = n;
    a.buf = buf.data(), a.ops = dev.data(), a.ok = ok.data();
    for (uint32_t i = 0; i < n; ++i)
      gpu::run_dev_op(a, i, enc, portable::kTables.te0, portable::kTables.sbox);
    gpu::unpack_ops(ops, n, icv_, buf.data(), dev.data(), ok.data());
  }
  std::vector<gpu::DevSa> sas_;
  std::vector<uint8_t> icv_;
};

const char* const kAeads[] = {
    "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 96",
    "aead 'rfc4106(gcm(aes))' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
    "aead 'rfc4543(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128",
    "aead 'rfc7539esp(chacha20,poly1305)' "
    "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223 128",
};

/// Encrypts and decrypts (with a replay and a bit flip) through `E` and the portable engine.
template <class E>
void compare_with_portable(E& eng_out, E& eng_in) {
  std::mt19937_64 rng(7);
  for (int a = 0; a < 4; ++a) {
    std::string line = std::string(
                           "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp "
                           "spi 0x42 mode tunnel replay-window 64 flag esn ") +
                       kAeads[a];
    Sad so, sp, io, ip;
    so.add(state(line)), sp.add(state(line)), io.add(state(line)), ip.add(state(line));
    PortableEngine po, pi;
    engine_load(eng_out, so), engine_load(po, sp), engine_load(eng_in, io), engine_load(pi, ip);
    std::vector<Bytes> pkts;
    for (int i = 0; i < 64; ++i) {
      Bytes payload(rng() % 1400);
      for (auto& b : payload) b = uint8_t(rng());
      pkts.push_back(ipv4("10.1.0.1", "10.2.0.1", 17, payload));
    }
    TestBatch bo(pkts), bp(pkts);
    for (uint32_t i = 0; i < pkts.size(); ++i) bo.sa[i] = bp.sa[i] = 0;
    Counters c1, c2;
    esp_encrypt_batch(so, eng_out, bo.b, c1);
    esp_encrypt_batch(sp, po, bp.b, c2);
    std::vector<Bytes> wire;
    for (uint32_t i = 0; i < pkts.size(); ++i) {
      ASSERT_EQ(bo.result(i), Drop::kOk);
      ASSERT_EQ(bo.packet(i), bp.packet(i)) << "algo " << a << " packet " << i;
      wire.push_back(bo.packet(i));
    }
    wire.push_back(wire[3]);  // replay
    wire[5][40] ^= 0x10;      // integrity failure
    TestBatch ro(wire), rp(wire);
    esp_decrypt_batch(io, eng_in, ro.b, c1);
    esp_decrypt_batch(ip, pi, rp.b, c2);
    for (uint32_t i = 0; i < wire.size(); ++i) {
      ASSERT_EQ(ro.result(i), rp.result(i)) << "algo " << a << " packet " << i;
      if (ro.result(i) == Drop::kOk) {
        EXPECT_EQ(ro.packet(i), pkts[i]);
        EXPECT_EQ(ro.packet(i), rp.packet(i));
      }
    }
    EXPECT_EQ(ro.result(5), Drop::kIntegrity);
    EXPECT_EQ(ro.result(uint32_t(wire.size() - 1)), Drop::kReplay);
  }
}

TEST(XfrmGpuStaging, KernelOpBodyOnHostMatchesPortableEngine) {
  StagedHostEngine o, i;
  compare_with_portable(o, i);
}

TEST(XfrmGpuPtx, HasTheEspKernels) {
  std::string ptx(gpu::esp_ptx());
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos);
  for (const char* k :
       {"knod_esp_encrypt_batch", "knod_esp_decrypt_batch", "knod_aead_encrypt_batch"})
    EXPECT_NE(ptx.find(std::string(".entry ") + k), std::string::npos) << k;
}

TEST(XfrmGpuEngine, ReportsNoGpuAsError) {
  std::string why;
  if (device::cuda::Driver::try_get(&why)) GTEST_SKIP() << "a CUDA driver is present";
  try {
    make_engine("cuda");
    FAIL() << "cuda engine opened without a driver";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no NVIDIA driver"), std::string::npos) << e.what();
  }
}

TEST(XfrmGpuEngine, MatchesPortableEngine) {
  std::string why;
  if (!device::cuda::Driver::try_get(&why)) GTEST_SKIP() << "no GPU here: " << why;
  auto o = gpu::CudaEngine::open("cuda"), in = gpu::CudaEngine::open("cuda");
  compare_with_portable(*o, *in);
}

TEST(XfrmGpuEngine, DeviceFramedEncryptMatchesCpu) {
  std::string why;
  if (!device::cuda::Driver::try_get(&why)) GTEST_SKIP() << "no GPU here: " << why;
  auto eng = gpu::CudaEngine::open("cuda");
  for (const char* aead : kAeads) {
    for (const char* mode : {"tunnel", "transport"}) {
      std::string line = std::string(
                             "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp "
                             "spi 0x42 mode ") +
                         mode + " replay-window 64 " + aead;
      Sad sg, sc;
      sg.add(state(line)), sc.add(state(line));
      engine_load(*eng, sg);
      PortableEngine pc;
      engine_load(pc, sc);
      std::vector<Bytes> pkts;
      for (int i = 0; i < 300; ++i)
        pkts.push_back(ipv4("192.0.2.1", "192.0.2.2", 17, counting(size_t(i * 5), uint8_t(i))));
      TestBatch bg(pkts), bc(pkts);
      for (uint32_t i = 0; i < pkts.size(); ++i) bg.sa[i] = bc.sa[i] = 0;
      Counters cg, cc;
      eng->esp_encrypt(sg, bg.b, cg);
      esp_encrypt_batch(sc, pc, bc.b, cc);
      for (uint32_t i = 0; i < pkts.size(); ++i) {
        ASSERT_EQ(bg.result(i), bc.result(i)) << i;
        ASSERT_EQ(bg.packet(i), bc.packet(i)) << mode << " " << aead << " packet " << i;
      }
      EXPECT_EQ(cg.packets, cc.packets);
    }
  }
}

}  // namespace
}  // namespace knod::xfrm
