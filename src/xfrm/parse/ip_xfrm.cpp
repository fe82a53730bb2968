#include "xfrm/parse/ip_xfrm.h"

#include <fmt/core.h>

#include <cstdlib>
#include <sstream>
#include <string_view>

#include "base/error.h"
#include "base/file.h"
#include "base/text.h"
#include "xfrm/parse/tokens.h"

namespace knod::xfrm {
namespace {

using Words = std::vector<std::string>;

/// Cursor over the words of one command.
struct Cursor {
  const Words& w;
  size_t i = 0;
  bool done() const { return i >= w.size(); }
  const std::string& peek() const { return w[i]; }
  const std::string& next(const char* what) {
    // `what`: a word ("spi"), or a word and the part of its arguments taken ("aead ALGO-KEYMAT").
    if (done() && std::string_view(what).find(' ') != std::string_view::npos)
      throw Error(fmt::format("xfrm: {} is missing", what));
    if (done()) throw Error(fmt::format("xfrm: '{}' needs an argument", what));
    return w[i++];
  }
};

uint64_t parse_u64(const std::string& s, const char* what, uint64_t max = UINT64_MAX) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (s.empty() || *end || errno || s[0] == '-' || v > max)
    throw Error(fmt::format("xfrm: bad {} '{}'", what, s));
  return v;
}

uint8_t parse_proto(const std::string& s) {
  if (s == "esp") return kProtoEsp;
  if (s == "tcp") return 6;
  if (s == "udp") return 17;
  if (s == "icmp") return 1;
  if (s == "ipv6-icmp" || s == "icmpv6") return 58;
  if (s == "ah" || s == "comp" || s == "route2" || s == "hao")
    throw Error(fmt::format("xfrm: unsupported proto '{}'", s));
  return uint8_t(parse_u64(s, "proto", 255));
}

Mode parse_mode(const std::string& s) {
  if (s == "transport") return Mode::kTransport;
  if (s == "tunnel") return Mode::kTunnel;
  throw Error(fmt::format("xfrm: unsupported mode '{}'", s));
}

/// ip-xfrm ALGO-KEYMAT: 0x-prefixed hex, or the bytes of the string itself.
std::vector<uint8_t> parse_key(const std::string& s) {
  std::vector<uint8_t> out;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::string h = s.substr(2);
    if (h.size() % 2) throw Error(fmt::format("xfrm: odd-length key '{}'", s));
    for (size_t i = 0; i < h.size(); i += 2) {
      char* end = nullptr;
      std::string b = h.substr(i, 2);
      long v = std::strtol(b.c_str(), &end, 16);
      if (*end) throw Error(fmt::format("xfrm: bad hex key '{}'", s));
      out.push_back(uint8_t(v));
    }
  } else {
    out.assign(s.begin(), s.end());
  }
  return out;
}

void set_aead(SaConfig& c, const std::string& name, const std::vector<uint8_t>& key,
              uint64_t icv_bits) {
  bool chacha = name == "rfc7539esp(chacha20,poly1305)";
  if (name == "rfc4106(gcm(aes))")
    c.cipher = Cipher::kAesGcm;
  else if (name == "rfc4543(gcm(aes))")
    c.cipher = Cipher::kAesGmac;
  else if (chacha)
    c.cipher = Cipher::kChaCha20Poly1305;
  else
    throw Error(fmt::format("xfrm: unsupported aead '{}'", name));
  size_t klen = key.size();
  if (chacha ? klen != 36 : (klen != 20 && klen != 28 && klen != 36))
    throw Error(
        fmt::format("xfrm: aead '{}' key of {} bytes (want key + 4-byte salt)", name, klen));
  bool icv_ok = c.cipher == Cipher::kAesGcm ? (icv_bits == 64 || icv_bits == 96 || icv_bits == 128)
                                            : icv_bits == 128;
  if (!icv_ok)
    throw Error(fmt::format("xfrm: aead '{}' ICV length {} bits (the kernel's: {})", name, icv_bits,
                            c.cipher == Cipher::kAesGcm ? "64, 96 or 128" : "128"));
  std::copy(key.begin(), key.end() - 4, c.enc_key);
  std::copy(key.end() - 4, key.end(), c.salt);
  c.enc_key_len = uint8_t(klen - 4);
  c.icv_len = uint8_t(icv_bits / 8);
}

void set_enc(SaConfig& c, const std::string& name, const std::vector<uint8_t>& key) {
  if (name == "cbc(aes)" || name == "aes") {
    c.cipher = Cipher::kAesCbc;
    if (key.size() != 16 && key.size() != 24 && key.size() != 32)
      throw Error(fmt::format("xfrm: enc 'cbc(aes)' key of {} bytes", key.size()));
  } else if (name == "cbc(des3_ede)" || name == "des3_ede") {
    c.cipher = Cipher::kDes3Cbc;
    if (key.size() != 24) throw Error("xfrm: enc 'cbc(des3_ede)' needs a 24-byte key");
  } else if (name == "cipher_null" || name == "ecb(cipher_null)") {
    c.cipher = Cipher::kNull;
    if (!key.empty()) throw Error("xfrm: enc 'cipher_null' takes an empty key \"\"");
  } else {
    throw Error(fmt::format("xfrm: unsupported enc '{}'", name));
  }
  std::copy(key.begin(), key.end(), c.enc_key);
  c.enc_key_len = uint8_t(key.size());
}

/// `trunc_bits` 0: the kernel's default truncation for `auth` (xfrm_algo.c icv_truncbits).
void set_auth(SaConfig& c, const std::string& name, const std::vector<uint8_t>& key,
              uint64_t trunc_bits) {
  uint32_t full, dflt;
  if (name == "hmac(sha1)" || name == "sha1")
    c.auth = Auth::kHmacSha1, full = 160, dflt = 96;
  else if (name == "hmac(sha256)" || name == "sha256")
    c.auth = Auth::kHmacSha256, full = 256, dflt = 96;
  else if (name == "hmac(sha384)" || name == "sha384")
    c.auth = Auth::kHmacSha384, full = 384, dflt = 192;
  else if (name == "hmac(sha512)" || name == "sha512")
    c.auth = Auth::kHmacSha512, full = 512, dflt = 256;
  else
    throw Error(fmt::format("xfrm: unsupported auth '{}'", name));
  if (!trunc_bits) trunc_bits = dflt;
  if (trunc_bits % 8 || trunc_bits < 32 || trunc_bits > full)
    throw Error(fmt::format("xfrm: auth '{}' truncation {} bits (a multiple of 8 from 32 to {})",
                            name, trunc_bits, full));
  if (key.size() > sizeof c.auth_key) throw Error("xfrm: auth key longer than 64 bytes");
  std::copy(key.begin(), key.end(), c.auth_key);
  c.auth_key_len = uint8_t(key.size());
  c.icv_len = uint8_t(trunc_bits / 8);
}

bool is_state_keyword(const std::string& w) {
  static const char* const kw[] = {
      "src",           "dst",           "proto",         "spi",        "mode", "reqid",
      "replay-window", "flag",          "extra-flag",    "encap",      "sel",  "limit",
      "aead",          "enc",           "auth",          "auth-trunc", "seq",  "replay-seq",
      "replay-oseq",   "replay-seq-hi", "replay-oseq-hi"};
  for (auto* k : kw)
    if (w == k) return true;
  return false;
}

/// `sel`/policy selector words: src P dst P proto P sport N dport N.
bool selector_word(Cursor& cur, Selector& s) {
  const std::string& w = cur.peek();
  if (w == "src")
    ++cur.i, s.src = parse_prefix(cur.next("src"));
  else if (w == "dst")
    ++cur.i, s.dst = parse_prefix(cur.next("dst"));
  else if (w == "proto")
    ++cur.i, s.proto = parse_proto(cur.next("proto"));
  else if (w == "sport")
    ++cur.i, s.sport = uint16_t(parse_u64(cur.next("sport"), "sport", 65535));
  else if (w == "dport")
    ++cur.i, s.dport = uint16_t(parse_u64(cur.next("dport"), "dport", 65535));
  else
    return false;
  return true;
}

/// iproute2's check on a selector's or template's two addresses (ip/xfrm_policy.c).
void check_families(const Addr& src, const Addr& dst) {
  if (src.family && dst.family && src.family != dst.family)
    throw Error(
        "xfrm: the same address family is required between values after \"src\" and \"dst\"");
}

SaConfig parse_state(Cursor& cur) {
  SaConfig c;
  bool have_enc = false, have_auth = false, have_aead = false, have_spi = false;
  while (!cur.done()) {
    std::string w = cur.next("state");
    if (w == "src")
      c.src = parse_addr(cur.next("src"));
    else if (w == "dst")
      c.dst = parse_addr(cur.next("dst"));
    else if (w == "proto") {
      c.proto = parse_proto(cur.next("proto"));
      if (c.proto != kProtoEsp)
        throw Error(fmt::format("xfrm: unsupported proto '{}'", cur.w[cur.i - 1]));
    } else if (w == "spi")
      c.spi = uint32_t(parse_u64(cur.next("spi"), "spi", UINT32_MAX)), have_spi = true;
    else if (w == "mode")
      c.mode = parse_mode(cur.next("mode"));
    else if (w == "reqid")
      c.reqid = uint32_t(parse_u64(cur.next("reqid"), "reqid", UINT32_MAX));
    else if (w == "replay-oseq" || w == "replay-oseq-hi" || w == "replay-seq" ||
             w == "replay-seq-hi") {
      uint64_t v = parse_u64(cur.next(w.c_str()), w.c_str(), UINT32_MAX);
      uint64_t& f = w.rfind("replay-oseq", 0) == 0 ? c.oseq : c.seq;
      f = w.size() > 11 && w.substr(w.size() - 3) == "-hi" ? (f & 0xffffffffull) | v << 32
                                                           : (f & ~0xffffffffull) | v;
    } else if (w == "replay-window")
      c.replay_window =
          uint32_t(parse_u64(cur.next("replay-window"), "replay-window", kMaxReplayWindow));
    else if (w == "flag" || w == "extra-flag") {
      bool any = false;
      while (!cur.done() && !is_state_keyword(cur.peek())) {
        const std::string& f = cur.next("flag");
        if (w == "flag" && f == "esn")
          c.flags |= kFlagEsn;
        else if (w == "flag" && f == "noecn")
          c.flags |= kFlagNoEcn;
        else if (w == "flag" && f == "decap-dscp")
          c.flags |= kFlagDecapDscp;
        else if (w == "flag" && f == "nopmtudisc")
          c.flags |= kFlagNoPmtuDisc;
        else if (w == "extra-flag" && f == "dont-encap-dscp")
          c.flags |= kXFlagDontEncapDscp;
        else
          throw Error(fmt::format("xfrm: unsupported {} '{}'", w, f));
        any = true;
      }
      if (!any) throw Error(fmt::format("xfrm: '{}' needs an argument", w));
    } else if (w == "encap") {
      const std::string& t = cur.next("encap");
      if (t != "espinudp") throw Error(fmt::format("xfrm: unsupported encap '{}'", t));
      c.encap = true;
      c.encap_sport = uint16_t(parse_u64(cur.next("encap"), "encap sport", 65535));
      c.encap_dport = uint16_t(parse_u64(cur.next("encap"), "encap dport", 65535));
      c.encap_oa = parse_addr(cur.next("encap"));
    } else if (w == "sel") {
      while (!cur.done() && selector_word(cur, c.sel)) {
      }
    } else if (w == "limit") {
      const std::string& k = cur.next("limit");
      uint64_t v = parse_u64(cur.next("limit"), "limit");
      if (k == "byte-soft")
        c.limits.byte_soft = v;
      else if (k == "byte-hard")
        c.limits.byte_hard = v;
      else if (k == "packet-soft")
        c.limits.packet_soft = v;
      else if (k == "packet-hard")
        c.limits.packet_hard = v;
      else
        throw Error(fmt::format("xfrm: unsupported limit '{}'", k));
    } else if ((w == "aead" && have_aead) || (w == "enc" && have_enc) ||
               ((w == "auth" || w == "auth-trunc") && have_auth)) {
      throw Error(fmt::format("xfrm: duplicate \"ALGO-TYPE\": \"{}\" is the second value", w));
    } else if (w == "aead") {
      // ip-xfrm(8): aead ALGO-NAME ALGO-KEYMAT ALGO-ICV-LEN; the message names what is missing.
      std::string name = cur.next("aead ALGO-NAME");
      auto key = parse_key(cur.next("aead ALGO-KEYMAT"));
      set_aead(c, name, key, parse_u64(cur.next("aead ALGO-ICV-LEN"), "ICV length"));
      have_aead = true;
    } else if (w == "enc") {
      std::string name = cur.next("enc ALGO-NAME");
      set_enc(c, name, parse_key(cur.next("enc ALGO-KEYMAT")));
      have_enc = true;
    } else if (w == "auth" || w == "auth-trunc") {
      std::string name = cur.next(w == "auth" ? "auth ALGO-NAME" : "auth-trunc ALGO-NAME");
      auto key = parse_key(cur.next(w == "auth" ? "auth ALGO-KEYMAT" : "auth-trunc ALGO-KEYMAT"));
      uint64_t t =
          w == "auth-trunc" ? parse_u64(cur.next("auth-trunc ALGO-TRUNC-LEN"), "truncation") : 0;
      set_auth(c, name, key, t);
      have_auth = true;
    } else {
      throw Error(fmt::format("xfrm: unsupported state word '{}'", w));
    }
  }
  check_families(c.sel.src.addr, c.sel.dst.addr);
  if (!c.src.family || !c.dst.family) throw Error("xfrm: state needs src and dst");
  if (c.src.family != c.dst.family) throw Error("xfrm: state src and dst of different families");
  if (!have_spi) throw Error("xfrm: state needs spi");
  if (c.esn() && c.replay_window == 0) throw Error(kEsnNeedsWindow);  // xfrm_init_replay
  if (have_aead && (have_enc || have_auth)) throw Error("xfrm: aead cannot combine with enc/auth");
  if (!have_aead && !have_enc) throw Error("xfrm: state needs aead or enc");
  if (have_enc && !have_auth && c.cipher != Cipher::kNull)
    throw Error("xfrm: enc without auth-trunc is not supported (ESP without integrity)");
  return c;
}

Policy parse_policy(Cursor& cur) {
  Policy p;
  bool have_dir = false;
  while (!cur.done()) {
    if (selector_word(cur, p.sel)) continue;
    std::string w = cur.next("policy");
    if (w == "dir") {
      const std::string& d = cur.next("dir");
      if (d == "out")
        p.dir = Dir::kOut;
      else if (d == "in")
        p.dir = Dir::kIn;
      else if (d == "fwd")
        p.dir = Dir::kFwd;
      else
        throw Error(fmt::format("xfrm: unsupported dir '{}'", d));
      have_dir = true;
    } else if (w == "priority") {
      p.priority = uint32_t(parse_u64(cur.next("priority"), "priority", UINT32_MAX));
    } else if (w == "action") {
      const std::string& a = cur.next("action");
      if (a == "allow")
        p.action = Action::kAllow;
      else if (a == "block")
        p.action = Action::kBlock;
      else
        throw Error(fmt::format("xfrm: unsupported action '{}'", a));
    } else if (w == "ptype") {
      const std::string& t = cur.next("ptype");
      if (t != "main") throw Error(fmt::format("xfrm: unsupported ptype '{}'", t));
    } else if (w == "tmpl") {
      if (p.has_tmpl) throw Error("xfrm: only one tmpl per policy is supported");
      p.has_tmpl = true;
      while (!cur.done()) {
        const std::string& t = cur.peek();
        if (t == "src")
          ++cur.i, p.tmpl.src = parse_addr(cur.next("src"));
        else if (t == "dst")
          ++cur.i, p.tmpl.dst = parse_addr(cur.next("dst"));
        else if (t == "proto") {
          ++cur.i;
          p.tmpl.proto = parse_proto(cur.next("proto"));
          if (p.tmpl.proto != kProtoEsp) throw Error("xfrm: tmpl proto must be esp");
        } else if (t == "spi")
          ++cur.i, p.tmpl.spi = uint32_t(parse_u64(cur.next("spi"), "spi", UINT32_MAX));
        else if (t == "reqid")
          ++cur.i, p.tmpl.reqid = uint32_t(parse_u64(cur.next("reqid"), "reqid", UINT32_MAX));
        else if (t == "mode")
          ++cur.i, p.tmpl.mode = parse_mode(cur.next("mode"));
        else if (t == "level") {
          ++cur.i;
          const std::string& l = cur.next("level");
          if (l != "required" && l != "use")
            throw Error(fmt::format("xfrm: unsupported level '{}'", l));
        } else
          break;
      }
    } else {
      throw Error(fmt::format("xfrm: unsupported policy word '{}'", w));
    }
  }
  if (!have_dir) throw Error("xfrm: policy needs dir");
  check_families(p.sel.src.addr, p.sel.dst.addr);
  check_families(p.tmpl.src, p.tmpl.dst);
  return p;
}

// A line quoted in an error: at most 60 characters (base/text.h printable).
std::string quoted(std::string_view line) {
  return printable(line, 60);
}

}  // namespace

void parse_line(std::string_view line, XfrmConfig& out) {
  if (line.find('\0') != std::string_view::npos)
    throw Error(fmt::format("xfrm: a NUL byte in '{}'", quoted(line)));
  Words w = split_words(line);
  Cursor cur{w};
  if (cur.done()) return;
  if (cur.peek() == "ip") ++cur.i;
  if (cur.done() || cur.next("ip") != "xfrm")
    throw Error(fmt::format("xfrm: expected 'ip xfrm ...', got '{}'", quoted(line)));
  std::string obj = cur.next("xfrm");
  std::string verb = cur.next(obj.c_str());
  if (verb != "add" && verb != "update")
    throw Error(fmt::format("xfrm: unsupported command '{} {}'", obj, verb));
  if (obj == "state") {
    out.states.push_back(parse_state(cur));
    out.state_update.resize(out.states.size() - 1);
    out.state_update.push_back(verb == "update");
  } else if (obj == "policy") {
    out.policies.push_back(parse_policy(cur));
    out.policy_update.resize(out.policies.size() - 1);
    out.policy_update.push_back(verb == "update");
  } else
    throw Error(fmt::format("xfrm: unsupported object '{}'", obj));
}

XfrmConfig parse_text(std::string_view text, std::string_view name) {
  XfrmConfig out;
  std::istringstream in{std::string(text)};
  std::string line, acc;
  int n = 0, first = 0;
  while (std::getline(in, line)) {
    ++n;
    if (acc.empty()) first = n;
    // A trailing backslash continues the command on the next line, as in a shell script.
    if (!line.empty() && line.back() == '\\') {
      acc += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    acc += line;
    try {
      const size_t before = out.states.size(), pols = out.policies.size();
      parse_line(acc, out);
      if (out.states.size() > before) {
        out.state_where.resize(before);
        out.state_where.push_back(fmt::format("{}:{}", name, first));
      }
      if (out.policies.size() > pols) {
        out.policy_where.resize(pols);
        out.policy_where.push_back(fmt::format("{}:{}", name, first));
      }
    } catch (const Error& e) {
      throw Error(fmt::format("{}:{}: {}", name, first, e.what()));
    }
    acc.clear();
  }
  if (!acc.empty())
    throw Error(fmt::format("{}:{}: line continuation ('\\') at the end of the file", name, first));
  return out;
}

XfrmConfig parse_file(const std::string& path) {
  return parse_text(read_file(path, "xfrm config"), path);
}

const char* cipher_name(Cipher c) {
  switch (c) {
    case Cipher::kNull:
      return "cipher_null";
    case Cipher::kAesCbc:
      return "cbc(aes)";
    case Cipher::kDes3Cbc:
      return "cbc(des3_ede)";
    case Cipher::kAesGcm:
      return "rfc4106(gcm(aes))";
    case Cipher::kAesGmac:
      return "rfc4543(gcm(aes))";
    case Cipher::kChaCha20Poly1305:
      return "rfc7539esp(chacha20,poly1305)";
  }
  return "?";
}

const char* auth_name(Auth a) {
  switch (a) {
    case Auth::kNone:
      return "none";
    case Auth::kHmacSha1:
      return "hmac(sha1)";
    case Auth::kHmacSha256:
      return "hmac(sha256)";
    case Auth::kHmacSha384:
      return "hmac(sha384)";
    case Auth::kHmacSha512:
      return "hmac(sha512)";
  }
  return "?";
}

namespace {
/// Selector words as `ip xfrm` takes them (what is unset is left out).
std::string format_selector(const Selector& sel) {
  std::string s;
  if (sel.src.addr.family) s += fmt::format(" src {}", to_string(sel.src));
  if (sel.dst.addr.family) s += fmt::format(" dst {}", to_string(sel.dst));
  if (sel.proto) s += fmt::format(" proto {}", sel.proto);
  if (sel.sport) s += fmt::format(" sport {}", sel.sport);
  if (sel.dport) s += fmt::format(" dport {}", sel.dport);
  return s;
}
}  // namespace

std::string format_state(const SaConfig& c) {
  std::string s = fmt::format("src {} dst {} proto esp spi 0x{:08x} reqid {} mode {}",
                              to_string(c.src), to_string(c.dst), c.spi, c.reqid,
                              c.mode == Mode::kTunnel ? "tunnel" : "transport");
  s += fmt::format(" replay-window {}", c.replay_window);
  if (c.flags & 0xffff) {
    s += " flag";
    if (c.flags & kFlagNoEcn) s += " noecn";
    if (c.flags & kFlagDecapDscp) s += " decap-dscp";
    if (c.flags & kFlagNoPmtuDisc) s += " nopmtudisc";
    if (c.flags & kFlagEsn) s += " esn";
  }
  if (c.flags & kXFlagDontEncapDscp) s += " extra-flag dont-encap-dscp";
  // Where set: the sequence numbers the SA starts from, and its limits.
  const std::pair<const char*, uint64_t> from[] = {{"replay-seq", c.seq}, {"replay-oseq", c.oseq}};
  for (const auto& [word, v] : from) {
    if (v >> 32) s += fmt::format(" {}-hi 0x{:x}", word, v >> 32);
    if (uint32_t(v)) s += fmt::format(" {} 0x{:x}", word, uint32_t(v));
  }
  const std::pair<const char*, uint64_t> limits[] = {{"byte-soft", c.limits.byte_soft},
                                                     {"byte-hard", c.limits.byte_hard},
                                                     {"packet-soft", c.limits.packet_soft},
                                                     {"packet-hard", c.limits.packet_hard}};
  for (const auto& [word, v] : limits)
    if (v != kXfrmInf) s += fmt::format(" limit {} {}", word, v);
  if (c.aead())
    s += fmt::format(" aead {} ({} bits) icv {}", cipher_name(c.cipher), c.enc_key_len * 8,
                     c.icv_len * 8);
  else if (c.auth == Auth::kNone)  // cipher_null alone: no ICV
    s += fmt::format(" enc {} ({} bits)", cipher_name(c.cipher), c.enc_key_len * 8);
  else
    s += fmt::format(" enc {} ({} bits) auth-trunc {} {}", cipher_name(c.cipher), c.enc_key_len * 8,
                     auth_name(c.auth), c.icv_len * 8);
  if (c.encap)
    s += fmt::format(" encap espinudp {} {} {}", c.encap_sport, c.encap_dport,
                     to_string(c.encap_oa));
  if (std::string sel = format_selector(c.sel); !sel.empty()) s += " sel" + sel;
  return s;
}

std::string format_policy(const Policy& p) {
  static const char* const dirs[] = {"in", "out", "fwd"};
  std::string s = fmt::format("src {} dst {}", to_string(p.sel.src), to_string(p.sel.dst));
  Selector ports = p.sel;  // src and dst are always printed ("any" when unset)
  ports.src = ports.dst = Prefix{};
  s += format_selector(ports);
  s += fmt::format(" dir {} priority {} action {}", dirs[int(p.dir)], p.priority,
                   p.action == Action::kAllow ? "allow" : "block");
  if (p.has_tmpl)
    s += fmt::format(" tmpl src {} dst {} proto esp reqid {} mode {}", to_string(p.tmpl.src),
                     to_string(p.tmpl.dst), p.tmpl.reqid,
                     p.tmpl.mode == Mode::kTunnel ? "tunnel" : "transport");
  return s;
}

}  // namespace knod::xfrm
