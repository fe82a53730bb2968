// ESN high-bit inference, RFC 4303 Appendix A2.2 (cases A and B).
#include <gtest/gtest.h>

#include "xfrm/esn.h"

namespace knod::xfrm {
namespace {

constexpr uint64_t seq64(uint32_t hi, uint32_t lo) {
  return uint64_t(hi) << 32 | lo;
}

TEST(XfrmEsn, CaseAWindowInOneSubspace) {
  // T = (5, 1000), W = 64: bottom = 937.
  uint64_t top = seq64(5, 1000);
  EXPECT_EQ(esn_infer(top, 64, 1000), seq64(5, 1000));
  EXPECT_EQ(esn_infer(top, 64, 937), seq64(5, 937));    // bottom of window
  EXPECT_EQ(esn_infer(top, 64, 2000), seq64(5, 2000));  // ahead, same subspace
  EXPECT_EQ(esn_infer(top, 64, 936), seq64(6, 936));    // below bottom: next subspace
  EXPECT_EQ(esn_infer(top, 64, 0), seq64(6, 0));
}

TEST(XfrmEsn, CaseBWindowSpansSubspaces) {
  // T = (5, 10), W = 64: bottom = 10 - 63 = 0xffffffcb (in subspace 4).
  uint64_t top = seq64(5, 10);
  EXPECT_EQ(esn_infer(top, 64, 0xffffffcb), seq64(4, 0xffffffcb));
  EXPECT_EQ(esn_infer(top, 64, 0xffffffff), seq64(4, 0xffffffff));
  EXPECT_EQ(esn_infer(top, 64, 0), seq64(5, 0));
  EXPECT_EQ(esn_infer(top, 64, 11), seq64(5, 11));
  EXPECT_EQ(esn_infer(top, 64, 0xffffffca), seq64(5, 0xffffffca));  // far ahead
}

TEST(XfrmEsn, WrapAt2To32) {
  uint64_t top = seq64(0, 0xffffffff);
  EXPECT_EQ(esn_infer(top, 32, 0), seq64(1, 0));
  EXPECT_EQ(esn_infer(top, 32, 5), seq64(1, 5));
  EXPECT_EQ(esn_infer(top, 32, 0xffffffe0), seq64(0, 0xffffffe0));
  EXPECT_EQ(esn_infer(top, 4096, 0xfffff000), seq64(0, 0xfffff000));
  EXPECT_EQ(esn_infer(top, 4096, 0xffffefff), seq64(1, 0xffffefff));
}

}  // namespace
}  // namespace knod::xfrm
