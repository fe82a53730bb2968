#include "harness.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "device/batch.h"
#include "jit/executor.h"
#include "loader/object.h"
#include "vm/interp.h"
#include "xdp/runtime.h"

namespace knod::xdp::test {
namespace {

bool dumpable(uint32_t type) {
  return type == BPF_MAP_TYPE_HASH || type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_LRU_HASH;
}

}  // namespace

Outcome run_knod(const Case& c, Engine engine) {
  Outcome o;
  loader::Object obj;
  obj.path = "test";
  obj.license = "GPL";  // as run_kernel loads it
  try {
    for (size_t i = 0; i < c.maps.size(); ++i) {
      auto m = maps::create_map("m" + std::to_string(i), c.maps[i].def, 1);
      for (const auto& [k, v] : c.maps[i].entries) m->user_update(k.data(), v.data(), 0);
      obj.maps.push_back(m);
    }
    for (size_t i = 0; i < c.progs.size(); ++i) {
      loader::ProgramSpec p;
      p.name = "p" + std::to_string(i);
      p.section = "xdp";
      p.prog_type = BPF_PROG_TYPE_XDP;
      p.insns = c.progs[i];
      obj.programs.push_back(p);
    }
    for (auto [m, slot, p] : c.prog_slots) {
      uint32_t v = uint32_t(p);
      obj.maps[m]->user_update(&slot, &v, 0);
    }
    Options opts;
    opts.clock_ns = 1'000'000'000;
    Runtime rt(obj, "p0", opts);
    o.loaded = true;
    alignas(64) static uint8_t frame[device::kFrameSize];
    std::memset(frame, 0, sizeof frame);
    const uint32_t meta = c.with_ctx ? c.ctx_meta : 0;
    std::memcpy(frame + device::kXdpHeadroom - meta, c.packet.data(), c.packet.size());
    uint32_t off = device::kXdpHeadroom, len = uint32_t(c.packet.size()) - meta, mlen = meta;
    uint32_t ifindex = 1, rxq = 0, verdict = 0;
    uint64_t redirect = 0;
    uint8_t fault = 0;
    device::Batch b;
    b.count = 1;
    b.stride = device::kFrameSize;
    b.frames = frame;
    b.data_off = &off;
    b.data_len = &len;
    b.meta_len = &mlen;
    b.ingress_ifindex = &ifindex;
    b.rx_queue_index = &rxq;
    b.verdict = &verdict;
    b.redirect = &redirect;
    b.fault = &fault;
    std::unique_ptr<vm::Executor> ex;
    if (engine != Engine::kInterp)
      ex = std::make_unique<jit::JitExecutor>(jit::JitOptions{.ctx = jit::CtxKind::kXdp});
    else
      ex = std::make_unique<vm::Interpreter>();
    RunResult r;
    if (engine == Engine::kCpu) {
      rt.run_packets(*ex, b, 0, 1, 0);
      r.retval = r.verdict = verdict;
      r.fault = vm::Fault(fault);
    } else {
      r = rt.run_packet(*ex, b, 0, 0);
    }
    o.retval = r.retval;
    o.fault = r.fault;
    o.data_out.assign(frame + off - mlen, frame + off + len);
    o.ctx_data = mlen;
    o.ctx_data_end = mlen + len;
    for (size_t i = 0; i < obj.maps.size(); ++i) {
      auto& m = *obj.maps[i];
      if (!dumpable(m.def().type)) continue;
      Bytes k(m.def().key_size), next(m.def().key_size), v(m.user_value_size());
      const void* prev = nullptr;
      while (m.get_next_key(prev, next.data()) == 0) {
        if (m.user_lookup(next.data(), v.data()) == 0) o.map_dump[int(i)][next] = v;
        k = next;
        prev = k.data();
      }
    }
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  return o;
}

bool kernel_available(std::string* why) {
  const bpf_insn ok[] = {{BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, XDP_PASS},
                         {BPF_JMP | BPF_EXIT, 0, 0, 0, 0}};
  int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "probe", "GPL", ok, 2, nullptr);
  if (fd < 0) {
    *why = std::string("bpf(BPF_PROG_LOAD) refused: ") + std::strerror(-fd);
    return false;
  }
  close(fd);
  return true;
}

Outcome run_kernel(const Case& c) {
  Outcome o;
  std::vector<int> map_fds, prog_fds;
  struct btf* btf = nullptr;
  auto cleanup = [&] {
    btf__free(btf);
    for (int fd : prog_fds) close(fd);
    for (int fd : map_fds) close(fd);
  };
  for (const auto& m : c.maps) {
    LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = m.def.map_flags);
    int fd = bpf_map_create(bpf_map_type(m.def.type), nullptr, m.def.key_size, m.def.value_size,
                            m.def.max_entries, &mo);
    if (fd < 0) {
      o.error = std::string("map create: ") + std::strerror(-fd);
      cleanup();
      return o;
    }
    for (const auto& [k, v] : m.entries) bpf_map_update_elem(fd, k.data(), v.data(), 0);
    map_fds.push_back(fd);
  }
  static char log[1 << 16];
  for (size_t p = 0; p < c.progs.size(); ++p) {
    InsnVec insns = c.progs[p];
    for (auto& i : insns)
      if (i.code == (BPF_LD | BPF_DW | BPF_IMM) && i.src_reg == BPF_PSEUDO_MAP_IDX) {
        i.src_reg = BPF_PSEUDO_MAP_FD;
        i.imm = map_fds.at(size_t(i.imm));
      }
    LIBBPF_OPTS(bpf_prog_load_opts, po, .log_level = 1, .log_size = sizeof log, .log_buf = log);
    log[0] = 0;
    std::vector<bpf_func_info> finfo;
    if (p == 0 && !c.subprogs.empty()) {  // callbacks need BTF func_info
      btf = btf__new_empty();
      int int_id = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
      int proto = btf__add_func_proto(btf, int_id);
      finfo.push_back({0, uint32_t(btf__add_func(btf, "main", BTF_FUNC_STATIC, proto))});
      for (size_t s = 0; s < c.subprogs.size(); ++s)
        finfo.push_back(
            {c.subprogs[s], uint32_t(btf__add_func(btf, ("f" + std::to_string(s)).c_str(),
                                                   BTF_FUNC_STATIC, proto))});
      if (btf__load_into_kernel(btf) == 0) {
        po.prog_btf_fd = btf__fd(btf);
        po.func_info = finfo.data();
        po.func_info_cnt = uint32_t(finfo.size());
        po.func_info_rec_size = sizeof(bpf_func_info);
      }
    }
    int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "t", "GPL", insns.data(), insns.size(), &po);
    if (fd < 0) {
      o.error = std::string("load: ") + std::strerror(-fd) + "\n" + log;
      cleanup();
      return o;
    }
    prog_fds.push_back(fd);
  }
  o.loaded = true;
  for (auto [m, slot, p] : c.prog_slots) bpf_map_update_elem(map_fds[m], &slot, &prog_fds[p], 0);
  Bytes out(device::kFrameSize * 2);
  xdp_md ctx{};
  ctx.data = c.ctx_meta;
  ctx.data_end = uint32_t(c.packet.size());
  LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = c.packet.data(), .data_out = out.data(),
              .data_size_in = uint32_t(c.packet.size()), .data_size_out = uint32_t(out.size()),
              .repeat = 1);
  if (c.with_ctx) {
    t.ctx_in = &ctx;
    t.ctx_size_in = sizeof ctx;
    t.ctx_out = &ctx;
    t.ctx_size_out = sizeof ctx;
  }
  int err = bpf_prog_test_run_opts(prog_fds[0], &t);
  o.run_err = err;
  o.retval = t.retval;
  out.resize(t.data_size_out);
  o.data_out = out;
  o.ctx_data = ctx.data;
  o.ctx_data_end = ctx.data_end;
  for (size_t i = 0; i < c.maps.size(); ++i) {
    if (!dumpable(c.maps[i].def.type)) continue;
    Bytes k(c.maps[i].def.key_size), next(k.size()), v(c.maps[i].def.value_size);
    const void* prev = nullptr;
    while (bpf_map_get_next_key(map_fds[i], prev, next.data()) == 0) {
      if (bpf_map_lookup_elem(map_fds[i], next.data(), v.data()) == 0) o.map_dump[int(i)][next] = v;
      k = next;
      prev = k.data();
    }
  }
  cleanup();
  return o;
}

}  // namespace knod::xdp::test
