"""Shared helpers for the xfrm interop tests: SA table, packet sets, running `knod ipsec`."""
import os
import subprocess

# (name, ip-xfrm algorithm words, scapy crypt algo, crypt key+salt hex, scapy auth algo,
#  auth key hex, crypt_icv_size, tshark encryption, tshark authentication)
K16, K32 = "000102030405060708090a0b0c0d0e0f", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
SALT = "c0c1c2c3"
ALGOS = [
    ("aes128-gcm16", f"aead 'rfc4106(gcm(aes))' 0x{K16}{SALT} 128", "AES-GCM", K16 + SALT, "NULL", "", 16,
     "AES-GCM with 16 octet ICV [RFC4106]", "NULL"),
    ("aes256-gcm12", f"aead 'rfc4106(gcm(aes))' 0x{K32}{SALT} 96", "AES-GCM", K32 + SALT, "NULL", "", 12,
     "AES-GCM with 12 octet ICV [RFC4106]", "NULL"),
    ("aes128-gcm8", f"aead 'rfc4106(gcm(aes))' 0x{K16}{SALT} 64", "AES-GCM", K16 + SALT, "NULL", "", 8,
     "AES-GCM with 8 octet ICV [RFC4106]", "NULL"),
    ("chacha20-poly1305", f"aead 'rfc7539esp(chacha20,poly1305)' 0x{K32}{SALT} 128", "CHACHA20-POLY1305",
     K32 + SALT, "NULL", "", 16, None, None),
    ("aes128-cbc-sha1", f"enc 'cbc(aes)' 0x{K16} auth-trunc 'hmac(sha1)' 0x{K16}a0a1a2a3 96", "AES-CBC", K16,
     "HMAC-SHA1-96", K16 + "a0a1a2a3", None, "AES-CBC [RFC3602]", "HMAC-SHA-1-96 [RFC2404]"),
    ("aes256-cbc-sha256", f"enc 'cbc(aes)' 0x{K32} auth-trunc 'hmac(sha256)' 0x{K32} 128", "AES-CBC", K32,
     "SHA2-256-128", K32, None, "AES-CBC [RFC3602]", "HMAC-SHA-256-128 [RFC4868]"),
    ("aes128-cbc-sha384", f"enc 'cbc(aes)' 0x{K16} auth-trunc 'hmac(sha384)' 0x{K32}{K16} 192", "AES-CBC", K16,
     "SHA2-384-192", K32 + K16, None, "AES-CBC [RFC3602]", "HMAC-SHA-384-192 [RFC4868]"),
    ("aes128-cbc-sha512", f"enc 'cbc(aes)' 0x{K16} auth-trunc 'hmac(sha512)' 0x{K32}{K32} 256", "AES-CBC", K16,
     "SHA2-512-256", K32 + K32, None, "AES-CBC [RFC3602]", "HMAC-SHA-512-256 [RFC4868]"),
    ("null-sha256", f"enc 'cipher_null' \"\" auth-trunc 'hmac(sha256)' 0x{K32} 128", "NULL", "",
     "SHA2-256-128", K32, None, "NULL", "HMAC-SHA-256-128 [RFC4868]"),
    # No auth, no ICV: tshark's check is esp.icv_good, so scapy alone checks it.
    ("null-null", "enc 'cipher_null' \"\"", "NULL", "", "NULL", "", None, None, None),
    ("3des-sha1", f"enc 'cbc(des3_ede)' 0x{K16}{K16[:16]} auth-trunc 'hmac(sha1)' 0x{K16}a0a1a2a3 96", "3DES",
     K16 + K16[:16], "HMAC-SHA1-96", K16 + "a0a1a2a3", None, "TripleDES-CBC [RFC2451]",
     "HMAC-SHA-1-96 [RFC2404]"),
]

# Layouts: (name, mode, outer family, inner family, NAT-T)
LAYOUTS = [
    ("transport4", "transport", 4, 4, False),
    ("tunnel4", "tunnel", 4, 4, False),
    ("transport6", "transport", 6, 6, False),
    ("tunnel6in4", "tunnel", 4, 6, False),
    ("tunnel4in6", "tunnel", 6, 4, False),
    ("natt4", "transport", 4, 4, True),
    ("natt-tunnel4", "tunnel", 4, 4, True),
]

OUTER = {4: ("192.0.2.1", "192.0.2.2"), 6: ("2001:db8::1", "2001:db8::2")}
INNER = {4: ("10.1.0.1", "10.2.0.1"), 6: ("fd01::1", "fd02::1")}
SPI = 0x4242


def scapy_sa(a, mode, outer, natt, seq=1, esn_hi=None):
    """scapy's SecurityAssociation for ALGOS entry `a` in a layout (scapy imported here: the
    tshark script does not need it). seq: the low 32 bits of the next sequence number (in the
    constructor: scapy's encrypt(seq_num=0) falls back to its own counter); esn_hi: ESN high
    bits, None for a 32-bit SA."""
    from scapy.all import IP, IPv6, UDP
    from scapy.layers.ipsec import ESP, SecurityAssociation

    name, words, calgo, ckey, aalgo, akey, icv = a[:7]
    s, d = OUTER[outer]
    tun = (IP(src=s, dst=d) if outer == 4 else IPv6(src=s, dst=d)) if mode == "tunnel" else None
    kw = dict(crypt_algo=calgo, crypt_key=bytes.fromhex(ckey), auth_algo=aalgo,
              auth_key=bytes.fromhex(akey) if akey else None, tunnel_header=tun)
    if icv:
        kw["crypt_icv_size"] = icv
    if natt:
        kw["nat_t_header"] = UDP(sport=4500, dport=4500)
    if esn_hi is not None:
        kw["esn_en"], kw["esn"] = True, esn_hi
    return SecurityAssociation(ESP, spi=SPI, seq_num=seq, **kw)


def addrs(mode, outer, inner):
    return OUTER[outer] if mode == "transport" else OUTER[outer]


def inner_packets(mode, outer, inner, sizes=(0, 1, 3, 16, 100, 1000)):
    from scapy.all import IP, IPv6, UDP, Raw
    src, dst = OUTER[outer] if mode == "transport" else INNER[inner]
    fam = outer if mode == "transport" else inner
    out = []
    for n in sizes:
        payload = bytes((i * 7 + n) & 0xff for i in range(n))
        if fam == 4:
            p = IP(src=src, dst=dst, ttl=64, id=100 + n, tos=0x20) / UDP(sport=40000 + n, dport=40001) / Raw(payload)
        else:
            p = IPv6(src=src, dst=dst, hlim=64) / UDP(sport=40000 + n, dport=40001) / Raw(payload)
        out.append(p.__class__(bytes(p)))
    return out


def xfrm_conf(algo_words, mode, outer, inner, natt, extra=""):
    s, d = OUTER[outer]
    isrc, idst = (OUTER[outer] if mode == "transport" else INNER[inner])
    plen = 32 if (outer if mode == "transport" else inner) == 4 else 128
    encap = " encap espinudp 4500 4500 0.0.0.0" if natt else ""
    return (f"ip xfrm state add src {s} dst {d} proto esp spi {SPI:#x} reqid 1 mode {mode} "
            f"replay-window 64 {extra} {algo_words}{encap}\n"
            f"ip xfrm policy add src {isrc}/{plen} dst {idst}/{plen} dir out "
            f"tmpl src {s} dst {d} proto esp reqid 1 mode {mode}\n")


def run_knod(knod, conf_text, pkts, direction, workdir, tag):
    from scapy.all import Ether, wrpcap, rdpcap
    os.makedirs(workdir, exist_ok=True)
    conf = os.path.join(workdir, tag + ".conf")
    pin = os.path.join(workdir, tag + f"-{direction}-in.pcap")
    pout = os.path.join(workdir, tag + f"-{direction}-out.pcap")
    with open(conf, "w") as f:
        f.write(conf_text)
    frames = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800 if p.version == 4 else 0x86dd) / p
              for p in pkts]
    wrpcap(pin, frames)
    r = subprocess.run([knod, "ipsec", "--xfrm", conf, "-r", pin, "-w", pout, "--dir", direction],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"knod failed: {r.stderr}\n{r.stdout}")
    return [bytes(f.payload) for f in rdpcap(pout)] if os.path.getsize(pout) > 24 else [], r.stdout, pout


def tshark_check(tshark, pcap, outer, a, n):
    """tshark decrypts the n ESP packets of `pcap` (SA SPI of algorithm row `a`, outer family
    `outer`): every esp.icv_good is 1 and the inner UDP destination port is 40001."""
    s, d = OUTER[outer]
    ckey = "0x" + a[3] if a[3] else ""
    akey = "0x" + a[5] if a[5] else ""
    uat = f'"IPv{outer}","{s}","{d}","{SPI:#010x}","{a[7]}","{ckey}","{a[8]}","{akey}"'
    r = subprocess.run([tshark, "-r", pcap, "-o", "esp.enable_encryption_decode:TRUE",
                        "-o", "esp.enable_authentication_check:TRUE", "-o", f"uat:esp_sa:{uat}",
                        "-T", "fields", "-e", "esp.icv_good", "-e", "udp.dstport"],
                       capture_output=True, text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    assert r.returncode == 0 and len(lines) == n, f"tshark: {r.stderr}{r.stdout}"
    for k, ln in enumerate(lines):
        good, ports = (ln.split("\t") + [""])[:2]
        assert good in ("1", "True"), f"packet {k}: esp.icv_good={good!r}"
        assert "40001" in ports.split(","), f"packet {k}: inner udp dport {ports!r}"
