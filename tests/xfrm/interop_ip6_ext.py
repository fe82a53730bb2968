#!/usr/bin/python3
"""IPv6 transport-mode ESP with extension headers: knod <-> scapy, knod -> tshark
(ctest xfrm_interop_ip6_ext).

ESP goes where the kernel puts it (ip6_find_1stfragopt, xfrm6_transport_output): after
hop-by-hop and routing headers, and after destination options that come before a routing
header; destination options after a routing header are encrypted (trailer Next Header 60).
Each layout states that offset and trailer Next Header (the kernel's rule, not scapy's), and
both knod's and scapy's packets are checked against it before the other side decrypts.
tshark (when given) must report esp.icv_good for knod's packets and dissect the inner UDP.
Usage: interop_ip6_ext.py KNOD WORKDIR [TSHARK]
"""
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from interop_common import ALGOS, OUTER, SPI, run_knod, tshark_check, xfrm_conf  # noqa: E402

from scapy.all import IPv6, UDP, Raw, raw  # noqa: E402
from scapy.layers.inet6 import IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, PadN  # noqa: E402
from scapy.layers.ipsec import ESP, SecurityAssociation  # noqa: E402

RT = "2001:db8::9"


def layouts():
    """(name, extension headers, ESP offset from the IPv6 header, trailer Next Header)."""
    hbh = IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\x00" * 4)])
    rt = IPv6ExtHdrRouting(addresses=[RT], segleft=0)
    dst = IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\x00" * 4)])
    return [
        ("hbh", hbh, 48, 17),
        ("hbh-dst", hbh / dst, 56, 17),  # no routing header: destination options stay in front
        ("hbh-rt-dst", hbh / rt / dst, 72, 60),
        ("dst-rt", dst / rt, 72, 17),
        ("hbh-dst-rt-dst", hbh / dst / rt / dst, 80, 60),
    ]


def packets(ext, sizes=(0, 1, 17, 200)):
    s, d = OUTER[6]
    out = []
    for n in sizes:
        payload = bytes((i * 5 + n) & 0xff for i in range(n))
        p = IPv6(src=s, dst=d, hlim=64) / ext.copy() / UDP(sport=40000 + n, dport=40001) / Raw(payload)
        out.append(IPv6(raw(p)))
    return out


def check_layout(wire, orig, esp_at, nh_trailer, null_crypt, who):
    """`wire`: ESP packet; `orig`: the plain packet; headers in front byte-equal but for the
    Next Header that names ESP (and payload length)."""
    o = raw(orig)
    assert wire[esp_at:esp_at + 4] == SPI.to_bytes(4, "big"), f"{who}: no SPI at {esp_at}"
    # Next Header byte of the last header in front: 6 (fixed header) or byte 0 of that header.
    hdrs, off, nh_off = [], 40, 6
    while off < esp_at:
        hdrs.append(off)
        nh_off, off = off, off + (o[off + 1] + 1) * 8
    assert off == esp_at, f"{who}: ESP at {esp_at} is not a header boundary"
    assert wire[nh_off] == 50, f"{who}: Next Header at {nh_off} is {wire[nh_off]}, not 50"
    front = bytearray(wire[:esp_at])
    front[nh_off] = o[nh_off]
    front[4:6] = o[4:6]
    assert bytes(front) == o[:esp_at], f"{who}: headers in front changed"
    assert int.from_bytes(wire[4:6], "big") == len(wire) - 40, f"{who}: payload length"
    if null_crypt:  # trailer readable: ... pad, pad length, next header, ICV
        icv = 16
        assert wire[-icv - 1] == nh_trailer, f"{who}: trailer next header {wire[-icv - 1]}"


def main():
    knod, work = sys.argv[1], sys.argv[2]
    tshark = sys.argv[3] if len(sys.argv) > 3 else None
    fails, passes = [], 0
    algos = [a for a in ALGOS if a[0] in ("aes128-gcm16", "aes128-cbc-sha1", "chacha20-poly1305", "null-sha256")]
    for a in algos:
        name, words, calgo, ckey, aalgo, akey, icv = a[:7]
        conf = xfrm_conf(words, "transport", 6, 6, False)
        for lname, ext, esp_at, nh in layouts():
            tag = f"ip6ext-{name}-{lname}"
            pkts = packets(ext)

            def sa(seq):
                kw = dict(crypt_algo=calgo, crypt_key=bytes.fromhex(ckey), auth_algo=aalgo,
                          auth_key=bytes.fromhex(akey) if akey else None)
                if icv:
                    kw["crypt_icv_size"] = icv
                return SecurityAssociation(ESP, spi=SPI, seq_num=seq, **kw)

            # knod encrypts, scapy decrypts
            try:
                enc, _, pcap = run_knod(knod, conf, pkts, "out", work, tag)
                assert len(enc) == len(pkts), f"knod wrote {len(enc)} of {len(pkts)}"
                for k, (e, p) in enumerate(zip(enc, pkts)):
                    check_layout(e, p, esp_at, nh, calgo == "NULL", f"knod packet {k}")
                    dec = sa(k + 1).decrypt(IPv6(e))
                    assert raw(dec) == raw(p), f"packet {k}: scapy decrypt differs\n{raw(dec).hex()}\n{raw(p).hex()}"
                passes += 1
                if tshark and a[7]:
                    tshark_check(tshark, pcap, 6, a, len(pkts))
                    passes += 1
            except Exception as ex:  # noqa: BLE001
                fails.append(f"{tag} knod->scapy/tshark: {ex}")
            # scapy encrypts (checked against the kernel's layout first), knod decrypts
            try:
                encs = []
                for k, p in enumerate(pkts):
                    x = sa(k + 1).encrypt(p)
                    check_layout(raw(x), p, esp_at, nh, calgo == "NULL", f"scapy packet {k}")
                    encs.append(IPv6(raw(x)))
                dec, out, _ = run_knod(knod, conf, encs, "in", work, tag)
                assert len(dec) == len(pkts), f"knod passed {len(dec)} of {len(pkts)}:\n{out}"
                for k, (d, p) in enumerate(zip(dec, pkts)):
                    assert d == raw(p), f"packet {k}: knod decrypt differs\n{d.hex()}\n{raw(p).hex()}"
                passes += 1
            except Exception as ex:  # noqa: BLE001
                fails.append(f"{tag} scapy->knod: {ex}")
    for f in fails:
        print("FAIL", f)
    print(f"{passes} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
