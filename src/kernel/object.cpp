// kernel::Object: open/load with libbpf, BPF_PROG_TEST_RUN (tools/lib/bpf/bpf.h).
#include "kernel/object.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/error.h"

namespace knod::kernel {
namespace {
/// libbpf's warnings during the current load (the verifier log comes this way, between
/// "-- BEGIN PROG LOAD LOG --" and "-- END PROG LOAD LOG --"); nothing is printed.
thread_local std::string load_log;

int capture_print(enum libbpf_print_level level, const char* fmt, va_list ap) {
  if (level != LIBBPF_WARN || load_log.size() > (1u << 20)) return 0;
  // Whole messages: the verifier log comes as one, often over a KiB, with its END marker last.
  va_list again;
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, fmt, ap);
  if (n > 0) {
    std::string msg(size_t(n) + 1, '\0');
    std::vsnprintf(msg.data(), msg.size(), fmt, again);
    load_log.append(msg.data(), size_t(n));
  }
  va_end(again);
  return 0;
}

/// The verifier's verdict: the last non-empty line of the program load log, "" if none
/// (e.g. "R1 invalid mem access 'scalar'" is followed by the processed-insns summary, which
/// is skipped).
std::string verifier_reason(const std::string& log) {
  size_t b = log.find("-- BEGIN PROG LOAD LOG --"), e = log.find("-- END PROG LOAD LOG --");
  if (b == std::string::npos || e == std::string::npos || e < b) return "";
  std::string body = log.substr(b, e - b), last;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    std::string line = body.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? body.size() : nl + 1;
    if (line.empty() || line.starts_with("-- BEGIN") || line.starts_with("processed ") ||
        line.starts_with("verification time"))
      continue;
    last = line;
  }
  return last;
}

bpf_program* find_program(bpf_object* obj, const std::string& name) {
  if (bpf_program* p = bpf_object__find_program_by_name(obj, name.c_str())) return p;
  bpf_program* p;
  bpf_object__for_each_program(p, obj) {
    if (name == bpf_program__section_name(p)) return p;
  }
  throw Error(fmt::format("kernel: no program '{}' in {}", name, bpf_object__name(obj)));
}
}  // namespace

Object::Object(const std::string& path, uint32_t max_entries_zero) {
  libbpf_set_print(capture_print);
  load_log.clear();
  obj_ = bpf_object__open_file(path.c_str(), nullptr);
  if (!obj_) throw Error(fmt::format("kernel: cannot open {}: {}", path, strerror(errno)));
  bpf_map* m;
  bpf_object__for_each_map(m, obj_) {
    if (bpf_map__max_entries(m) == 0 && max_entries_zero)
      bpf_map__set_max_entries(m, max_entries_zero);
  }
  if (int err = bpf_object__load(obj_)) {
    bpf_object__close(obj_);
    obj_ = nullptr;
    std::string why = verifier_reason(load_log);
    load_log.clear();
    throw Error(fmt::format("kernel: cannot load {}: {}{}", path, strerror(-err),
                            why.empty() ? "" : " (verifier: " + why + ")"));
  }
}

Object::~Object() {
  if (obj_) bpf_object__close(obj_);
}

TestRun Object::test_run(const std::string& prog, const std::vector<uint8_t>& packet,
                         uint32_t repeat) {
  bpf_program* p = find_program(obj_, prog);
  TestRun r;
  r.data_out.resize(packet.size() + 4096);
  LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = packet.data(), .data_out = r.data_out.data(),
              .data_size_in = static_cast<uint32_t>(packet.size()),
              .data_size_out = static_cast<uint32_t>(r.data_out.size()),
              .repeat = static_cast<int>(repeat ? repeat : 1));
  if (bpf_prog_test_run_opts(bpf_program__fd(p), &opts) < 0)
    throw Error(fmt::format("kernel: BPF_PROG_TEST_RUN {}: {}", prog, strerror(errno)));
  r.retval = opts.retval;
  r.duration_ns = opts.duration;
  r.data_out.resize(opts.data_size_out);
  return r;
}

std::vector<std::string> Object::programs() const {
  std::vector<std::string> out;
  bpf_program* p;
  bpf_object__for_each_program(p, obj_) out.push_back(bpf_program__name(p));
  return out;
}

uint32_t Object::possible_cpus() {
  int n = libbpf_num_possible_cpus();
  return n > 0 ? static_cast<uint32_t>(n) : 1;
}

bool Object::available(std::string* why) {
  LIBBPF_OPTS(bpf_map_create_opts, opts);
  int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "knod_probe", 4, 4, 1, &opts);
  if (fd < 0) {
    if (why) *why = fmt::format("bpf() refused: {} (needs root / CAP_BPF)", strerror(errno));
    return false;
  }
  close(fd);
  return true;
}

}  // namespace knod::kernel
