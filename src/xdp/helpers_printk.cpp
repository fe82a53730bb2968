// bpf_trace_printk (6): the kernel's format subset (kernel/bpf/helpers.c
// bpf_bprintf_prepare): flags "0+- ", a width, then %d %i %u %x %X with l/ll, %c, %s, %%,
// %p %px %pK %ps %pS (printed as 16 hex digits, unhashed), %pks %pus, %pI4 %pi4 %pI6 %pi6;
// at most 3 arguments; fmt must be NUL-terminated within fmt_size and printable. Returns the
// message length (bstr_printf into a 512-byte buffer) or -EINVAL. The message goes to the
// runtime's TraceSink (the kernel's trace_pipe line after "bpf_trace_printk: ").
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

#include "xdp/helpers.h"
#include "xdp/runtime.h"

namespace knod::xdp {
namespace {

constexpr size_t kMaxBuf = 512;  // MAX_BPRINTF_BUF

/// Copies memory the run may read, the way copy_from_kernel_nofault would: false if any
/// byte lies outside the run's memory.
bool read_mem(const vm::Run& run, uint64_t addr, void* out, size_t n) {
  if (!run.can_access(addr, n, false)) return false;
  std::memcpy(out, ptr<const void>(addr), n);
  return true;
}

/// strncpy_from_kernel_nofault: the NUL-terminated string at addr, "" if unreadable.
std::string read_str(const vm::Run& run, uint64_t addr, size_t max) {
  std::string s;
  for (size_t i = 0; i + 1 < max; ++i) {
    char c;
    if (!read_mem(run, addr + i, &c, 1)) return std::string();
    if (c == 0) break;
    s.push_back(c);
  }
  return s;
}

bool is_end(char c) {
  return c == 0 || std::isspace(uint8_t(c)) || std::ispunct(uint8_t(c));
}

std::string ip_str(const uint8_t* a, bool v6, bool padded) {
  char buf[64];
  std::string s;
  if (!v6) {
    std::snprintf(buf, sizeof buf, padded ? "%03u.%03u.%03u.%03u" : "%u.%u.%u.%u", a[0], a[1], a[2],
                  a[3]);
    return buf;
  }
  for (int i = 0; i < 16; i += 2) {
    std::snprintf(buf, sizeof buf, "%02x%02x", a[i], a[i + 1]);
    if (i && !padded) s += ':';
    s += buf;
  }
  return s;
}

uint64_t trace_printk(vm::Run& run, uint64_t fmt_addr, uint64_t fmt_size, uint64_t a1, uint64_t a2,
                      uint64_t a3) {
  if (fmt_size == 0 || !arg_mem(run, fmt_addr, fmt_size, false)) return 0;
  const char* fmt = ptr<const char>(fmt_addr);
  if (fmt[fmt_size - 1] != 0) return neg(EINVAL);
  const size_t n = std::strlen(fmt);
  const uint64_t args[3] = {a1, a2, a3};
  int nargs = 0;
  std::string out;
  char buf[kMaxBuf];
  for (size_t i = 0; i < n; ++i) {
    const char c = fmt[i];
    if ((!std::isprint(uint8_t(c)) && !std::isspace(uint8_t(c))) || !isascii(uint8_t(c)))
      return neg(EINVAL);
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (fmt[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    if (nargs >= 3) return neg(EINVAL);
    const uint64_t arg = args[nargs++];
    std::string spec = "%";
    ++i;
    while (fmt[i] == '0' || fmt[i] == '+' || fmt[i] == '-' || fmt[i] == ' ') spec += fmt[i++];
    if (fmt[i] >= '1' && fmt[i] <= '9') {
      spec += fmt[i++];
      while (fmt[i] >= '0' && fmt[i] <= '9') spec += fmt[i++];
    }
    if (fmt[i] == 'p') {
      char t = fmt[i + 1];
      if (is_end(t) || t == 'K' || t == 'x' || t == 's' || t == 'S') {
        if (!is_end(t)) ++i;
        std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)arg);
        out += buf;
        continue;
      }
      if ((t == 'k' || t == 'u') && fmt[i + 2] == 's') {
        i += 2;
        if (!is_end(fmt[i + 1])) return neg(EINVAL);
        std::snprintf(buf, sizeof buf, (spec + "s").c_str(), read_str(run, arg, kMaxBuf).c_str());
        out += buf;
        continue;
      }
      if ((t != 'i' && t != 'I') || (fmt[i + 2] != '4' && fmt[i + 2] != '6')) return neg(EINVAL);
      const bool v6 = fmt[i + 2] == '6';
      uint8_t ip[16] = {};
      if (!read_mem(run, arg, ip, v6 ? 16 : 4)) std::memset(ip, 0, sizeof ip);
      out += ip_str(ip, v6, t == 'i');
      i += 2;
      continue;
    }
    if (fmt[i] == 's') {
      if (!is_end(fmt[i + 1])) return neg(EINVAL);
      std::snprintf(buf, sizeof buf, (spec + "s").c_str(), read_str(run, arg, kMaxBuf).c_str());
      out += buf;
      continue;
    }
    if (fmt[i] == 'c') {
      std::snprintf(buf, sizeof buf, (spec + "c").c_str(), int(uint8_t(arg)));
      out += buf;
      continue;
    }
    bool is_long = false;
    if (fmt[i] == 'l') {
      is_long = true;
      ++i;
    }
    if (fmt[i] == 'l') ++i;
    const char conv = fmt[i];
    if (conv != 'i' && conv != 'd' && conv != 'u' && conv != 'x' && conv != 'X') return neg(EINVAL);
    spec += "ll";
    spec += conv;
    if (conv == 'd' || conv == 'i') {
      long long v = is_long ? (long long)int64_t(arg) : (long long)int32_t(arg);
      std::snprintf(buf, sizeof buf, spec.c_str(), v);
    } else {
      unsigned long long v = is_long ? arg : uint32_t(arg);
      std::snprintf(buf, sizeof buf, spec.c_str(), v);
    }
    out += buf;
  }
  if (out.size() > kMaxBuf - 1) out.resize(kMaxBuf - 1);
  if (Runtime* rt = runtime_of(run)) rt->emit_trace(run.cpu, out);
  return out.size();
}

}  // namespace

void add_printk_helpers(vm::HelperTable& t) {
  set_helper(t, BPF_FUNC_trace_printk, "bpf_trace_printk", trace_printk, kGplOnly);
}

}  // namespace knod::xdp
