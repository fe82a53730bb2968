#include "kernel_oracle.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "preload.h"

namespace knod::diff {
namespace {
int silent_print(enum libbpf_print_level, const char*, va_list) {
  return 0;
}

bpf_map* find_map(bpf_object* obj, const std::string& name) {
  bpf_map* m = bpf_object__find_map_by_name(obj, name.c_str());
  if (!m) throw std::runtime_error("kernel: no map " + name);
  return m;
}

bool per_cpu(int type) {
  return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
         type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}
}  // namespace

KernelObject::KernelObject(const std::string& path, uint32_t max_entries_zero) {
  libbpf_set_print(silent_print);
  obj_ = bpf_object__open_file(path.c_str(), nullptr);
  if (!obj_) throw std::runtime_error("kernel: cannot open " + path + ": " + strerror(errno));
  bpf_map* m;
  bpf_object__for_each_map(m, obj_) {
    if (bpf_map__max_entries(m) == 0 && max_entries_zero)
      bpf_map__set_max_entries(m, max_entries_zero);
  }
  if (int err = bpf_object__load(obj_)) {
    bpf_object__close(obj_);
    obj_ = nullptr;
    throw std::runtime_error("kernel: cannot load " + path + ": " + strerror(-err));
  }
}

KernelObject::~KernelObject() {
  if (obj_) bpf_object__close(obj_);
}

int KernelObject::preload(const std::string& json_path, uint32_t devmap_ifindex) {
  return examples::preload_maps(obj_, json_path, devmap_ifindex);
}

std::vector<std::pair<std::string, int>> KernelObject::programs() const {
  std::vector<std::pair<std::string, int>> out;
  bpf_program* p;
  bpf_object__for_each_program(p, obj_) {
    out.emplace_back(bpf_program__name(p), static_cast<int>(bpf_program__type(p)));
  }
  return out;
}

int KernelObject::update(const std::string& map, const Bytes& key, const Bytes& value) {
  bpf_map* m = find_map(obj_, map);
  int err = bpf_map_update_elem(bpf_map__fd(m), key.empty() ? nullptr : key.data(), value.data(),
                                BPF_ANY);
  return err < 0 ? -errno : 0;
}

int KernelObject::set_prog_array(const std::string& map, uint32_t index, const std::string& prog) {
  bpf_program* p = bpf_object__find_program_by_name(obj_, prog.c_str());
  if (!p) throw std::runtime_error("kernel: no program " + prog);
  int fd = bpf_program__fd(p);
  int err = bpf_map_update_elem(bpf_map__fd(find_map(obj_, map)), &index, &fd, BPF_ANY);
  return err < 0 ? -errno : 0;
}

TestRunResult KernelObject::test_run(const std::string& prog, const Bytes& packet) {
  bpf_program* p = bpf_object__find_program_by_name(obj_, prog.c_str());
  if (!p) throw std::runtime_error("kernel: no program " + prog);
  // Pin to CPU 0 so per-CPU map slots and bpf_get_smp_processor_id() are known.
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(0, &set);
  sched_setaffinity(0, sizeof(set), &set);
  TestRunResult r;
  r.data_out.resize(packet.size() + 4096);
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet.data(), .data_out = r.data_out.data(),
              .data_size_in = static_cast<uint32_t>(packet.size()),
              .data_size_out = static_cast<uint32_t>(r.data_out.size()), .repeat = 1);
  int err = bpf_prog_test_run_opts(bpf_program__fd(p), &opts);
  if (err < 0) {
    r.err = -errno;
    r.data_out.clear();
    return r;
  }
  r.retval = opts.retval;
  r.data_out.resize(opts.data_size_out);
  return r;
}

int KernelObject::map_type(const std::string& map) {
  bpf_map* m = bpf_object__find_map_by_name(obj_, map.c_str());
  return m ? static_cast<int>(bpf_map__type(m)) : -1;
}

std::map<std::string, MapContents> KernelObject::dump_maps() {
  std::map<std::string, MapContents> out;
  bpf_map* m;
  bpf_object__for_each_map(m, obj_) {
    int type = bpf_map__type(m);
    if (type == BPF_MAP_TYPE_PROG_ARRAY || type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
        type == BPF_MAP_TYPE_HASH_OF_MAPS || type == BPF_MAP_TYPE_PERF_EVENT_ARRAY ||
        type == BPF_MAP_TYPE_RINGBUF || type == BPF_MAP_TYPE_QUEUE || type == BPF_MAP_TYPE_STACK)
      continue;
    MapContents& c = out[bpf_map__name(m)];
    int fd = bpf_map__fd(m);
    uint32_t ksz = bpf_map__key_size(m);
    uint32_t vsz = bpf_map__value_size(m);
    if (per_cpu(type)) vsz = ((vsz + 7) / 8 * 8) * possible_cpus();
    Bytes key(ksz), next(ksz), value(vsz);
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fd, prev, next.data()) == 0) {
      if (bpf_map_lookup_elem(fd, next.data(), value.data()) == 0) c[next] = value;
      key = next;
      prev = key.data();
    }
  }
  return out;
}

uint32_t KernelObject::possible_cpus() {
  int n = libbpf_num_possible_cpus();
  return n > 0 ? static_cast<uint32_t>(n) : 1;
}

bool KernelObject::available(std::string* why) {
  LIBBPF_OPTS(bpf_map_create_opts, opts);
  int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "knod_probe", 4, 4, 1, &opts);
  if (fd < 0) {
    if (why) *why = std::string("bpf() refused: ") + strerror(errno) + " (needs root / CAP_BPF)";
    return false;
  }
  close(fd);
  return true;
}

}  // namespace knod::diff
