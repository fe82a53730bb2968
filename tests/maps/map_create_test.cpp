// Invalid definitions are refused as the kernel's map_alloc_check refuses them (-EINVAL...),
// with one clear knod::Error line naming the map and the type.
#include <gtest/gtest.h>

#include "base/error.h"
#include "maps/map.h"

using namespace knod::maps;

namespace {
std::string error_of(MapDef d) {
  try {
    create_map("m", d, 2);
  } catch (const knod::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(CreateMap, InvalidDefinitions) {
  EXPECT_EQ(error_of({BPF_MAP_TYPE_HASH, 0, 4, 8}),
            "map 'm' (BPF_MAP_TYPE_HASH): key_size 0 (the kernel rejects it with -EINVAL)");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_HASH, 4, 0, 8}),
            "map 'm' (BPF_MAP_TYPE_HASH): value_size 0 (the kernel rejects it with -EINVAL)");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_HASH, 4, 4, 0}),
            "map 'm' (BPF_MAP_TYPE_HASH): max_entries 0 (the kernel rejects it with -EINVAL)");
  EXPECT_EQ(
      error_of({BPF_MAP_TYPE_ARRAY, 8, 4, 8}),
      "map 'm' (BPF_MAP_TYPE_ARRAY): key_size 8 must be 4 (the kernel rejects it with -EINVAL)");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_ARRAY, 4, 4, 8, 1u << 30}),
            "map 'm' (BPF_MAP_TYPE_ARRAY): map_flags 0x40000000 not supported for this type (the "
            "kernel rejects it with -EINVAL)");
  EXPECT_EQ(
      error_of({BPF_MAP_TYPE_HASH, 600, 4, 8}),
      "map 'm' (BPF_MAP_TYPE_HASH): key_size over 512 bytes (the kernel rejects it with -E2BIG)");
  EXPECT_NE(error_of({BPF_MAP_TYPE_DEVMAP, 4, 12, 8}), "");
  EXPECT_NE(error_of({BPF_MAP_TYPE_PROG_ARRAY, 4, 8, 8}), "");
  EXPECT_NE(error_of({BPF_MAP_TYPE_XSKMAP, 4, 8, 8}), "");
  EXPECT_NE(error_of({BPF_MAP_TYPE_CPUMAP, 4, 4, 8, BPF_F_NO_PREALLOC}), "");
  EXPECT_NE(error_of({BPF_MAP_TYPE_HASH, 4, 4, 8, BPF_F_NO_COMMON_LRU}), "");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_SOCKMAP, 4, 4, 8}),
            "map 'm': BPF_MAP_TYPE_SOCKMAP is not supported by knod");
}

TEST(CreateMap, AcceptedFlags) {
  EXPECT_EQ(error_of({BPF_MAP_TYPE_HASH, 4, 4, 8, BPF_F_NO_PREALLOC | BPF_F_NUMA_NODE}), "");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_HASH, 4, 4, 8, BPF_F_ZERO_SEED | BPF_F_RDONLY_PROG}), "");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_LRU_HASH, 4, 4, 8, BPF_F_NO_COMMON_LRU}), "");
  EXPECT_EQ(error_of({BPF_MAP_TYPE_ARRAY, 4, 4, 8, BPF_F_MMAPABLE}), "");
  auto m = create_map("m", {BPF_MAP_TYPE_HASH, 4, 4, 8, BPF_F_RDONLY_PROG}, 1);
  EXPECT_TRUE(m->prog_readonly());
}

TEST(CreateMap, AbsurdSizesAreRefusedNotAllocated) {
  EXPECT_EQ(error_of({BPF_MAP_TYPE_HASH, 4, 4, 0xffffffffu}),
            "map 'm' (BPF_MAP_TYPE_HASH): max_entries 4294967295 needs more than 2048 MiB (the "
            "kernel rejects it with -ENOMEM)");
  EXPECT_NE(error_of({BPF_MAP_TYPE_PERCPU_ARRAY, 4, 32768, 1u << 20}), "");
  EXPECT_NE(error_of({BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, 1u << 20}), "");
}
