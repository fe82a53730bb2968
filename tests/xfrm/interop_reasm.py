#!/usr/bin/python3
"""ESP that arrives as IP fragments (ctest xfrm_interop_reasm): scapy encrypts
(SecurityAssociation), scapy cuts each ESP packet into 2-4 fragments (fragment() for IPv4,
fragment6() for IPv6, RFC 791 / RFC 8200 §4.5), the fragments of neighbouring datagrams are
interleaved and reordered, and `knod ipsec --dir in` must reassemble and decrypt every one to
the original inner packet, written where its last fragment was (the kernel delivers a
datagram when its last fragment arrives). A datagram missing a fragment is counted
(ReasmTimeout, incomplete_at_end), and fragments further apart than ipfrag_time (30 s;
IPv6 60 s) in capture time time out.
Usage: interop_reasm.py KNOD WORKDIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from interop_common import ALGOS, inner_packets, scapy_sa, xfrm_conf  # noqa: E402

from scapy.all import IP, IPv6, Ether, Raw, fragment, fragment6, raw, rdpcap, wrpcap  # noqa: E402
from scapy.layers.inet6 import IPv6ExtHdrFragment  # noqa: E402
from scapy.layers.ipsec import ESP  # noqa: E402

LAYOUTS = [  # (name, mode, outer family, inner family, NAT-T)
    ("transport4", "transport", 4, 4, False),
    ("tunnel4", "tunnel", 4, 4, False),
    ("transport6", "transport", 6, 6, False),
    ("tunnel4in6", "tunnel", 6, 4, False),
    ("natt4", "transport", 4, 4, True),
]
T0 = 1_700_000_000.0  # capture time of the first frame, seconds


def cut(x, outer, n, ident, mtu_payload=None):
    """The ESP packet `x` as n fragments (payload split in 8-byte units), cut by scapy.
    `ident`: Identification for a tunnel-mode IPv4 outer header (scapy gives them all 1;
    transport mode keeps the inner packet's, which the decrypted packet must show), and
    the IPv6 Fragment header's."""
    if outer == 4:
        o = IP(raw(x))
        if ident is not None:
            o.id = ident
            del o.chksum
        size = mtu_payload or ((len(o.payload) + n - 1) // n + 7) // 8 * 8
        fr = fragment(IP(raw(o)), fragsize=size)
    else:
        e = IPv6(raw(x))
        body = raw(e.payload)
        base = IPv6(src=e.src, dst=e.dst, hlim=e.hlim) / IPv6ExtHdrFragment(nh=e.nh, id=ident) / Raw(body)
        size = mtu_payload or ((len(body) + n - 1) // n + 7) // 8 * 8
        fr = fragment6(base, 40 + 8 + size)
    fr = [f.__class__(raw(f)) for f in fr]
    assert mtu_payload or len(fr) == n, f"scapy made {len(fr)} fragments, not {n}"
    assert all((f.flags.MF or f.frag) if outer == 4 else f.haslayer(IPv6ExtHdrFragment) for f in fr)
    return fr


def run(knod, work, tag, conf, stream):
    """stream: [(scapy IP packet, time s)] -> (output IP packets as bytes, stats JSON, stdout)."""
    os.makedirs(work, exist_ok=True)
    cf, pin, pout, js = (os.path.join(work, tag + x) for x in (".conf", "-in.pcap", "-out.pcap", ".json"))
    with open(cf, "w") as f:
        f.write(conf)
    frames = []
    for p, t in stream:
        e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x0800 if p.version == 4 else 0x86dd) / p
        e.time = t
        frames.append(e)
    wrpcap(pin, frames)
    r = subprocess.run([knod, "ipsec", "--xfrm", cf, "-r", pin, "-w", pout, "--dir", "in", "--stats", js],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"knod failed: {r.stderr}\n{r.stdout}"
    out = [raw(f.payload) for f in rdpcap(pout)] if os.path.getsize(pout) > 24 else []
    with open(js) as f:
        return out, json.load(f), r.stdout


def check_layout(knod, work, a, lay):
    name, mode, outer, inner, natt = lay
    tag = f"{a[0]}-{name}"
    fam = "ipv4" if outer == 4 else "ipv6"
    pkts = inner_packets(mode, outer, inner, sizes=(100, 1000, 1400, 40, 600))
    encs = [scapy_sa(a, mode, outer, natt, k + 1).encrypt(p) for k, p in enumerate(pkts)]
    # Datagram k in 2 + k % 3 fragments; fragments of datagrams 0/1 and 3/4 interleaved,
    # datagram 2 whole. Orders: in order, reversed, and last-first.
    frs = [cut(x, outer, 2 + k % 3, 0x100 + k if outer == 6 or mode == "tunnel" else None)
           for k, x in enumerate(encs)]
    frs[1].reverse()
    frs[4] = frs[4][-1:] + frs[4][:-1]
    stream = []  # (packet, datagram index)
    for i, j in ((0, 1), (3, 4)):
        for m in range(max(len(frs[i]), len(frs[j]))):
            stream += [(frs[i][m], i)] if m < len(frs[i]) else []
            stream += [(frs[j][m], j)] if m < len(frs[j]) else []
        if i == 0:
            stream.append((encs[2].__class__(raw(encs[2])), 2))
    last = {k: max(n for n, (_, d) in enumerate(stream) if d == k) for k in range(len(pkts))}
    order = sorted(range(len(pkts)), key=lambda k: last[k])
    conf = xfrm_conf(a[1], mode, outer, inner, natt)
    out, st, text = run(knod, work, tag, conf, [(p, T0 + n * 0.001) for n, (p, _) in enumerate(stream)])
    assert len(out) == len(pkts), f"{tag}: knod wrote {len(out)} of {len(pkts)}\n{text}"
    for n, k in enumerate(order):
        assert out[n] == raw(pkts[k]), f"{tag}: output {n} is not datagram {k}\n{out[n].hex()}\n{raw(pkts[k]).hex()}"
    nfrag = sum(len(f) for k, f in enumerate(frs) if k != 2)  # datagram 2 goes whole
    rs = st["reasm"][fam]
    assert rs["ReasmReqds"] == nfrag and rs["ReasmOKs"] == 4, f"{tag}: {rs}"
    assert rs["ReasmFails"] == 0 and rs["ReasmTimeout"] == 0 and rs["fragments"]["reassembled"] == nfrag, f"{tag}: {rs}"
    assert st["total"]["packets"] == len(pkts), f"{tag}: {st['total']}"
    assert "ReasmReqds" in text and "ReasmOKs" in text, text

    # A missing fragment: that datagram never completes; counted, the others decrypt.
    drop = frs[3][1]
    short = [(p, T0 + n * 0.001) for n, (p, _) in enumerate(stream) if p is not drop]
    out, st, text = run(knod, work, tag + "-missing", conf, short)
    rs = st["reasm"][fam]
    assert len(out) == len(pkts) - 1 and raw(pkts[3]) not in out, f"{tag}-missing: {len(out)}\n{text}"
    assert rs["ReasmOKs"] == 3 and rs["ReasmTimeout"] == 1 and rs["ReasmFails"] == 1, f"{tag}-missing: {rs}"
    assert rs["incomplete_at_end"] == 1 and rs["fragments"]["timed_out"] == len(frs[3]) - 1, f"{tag}-missing: {rs}"
    assert "ReasmTimeout (1 incomplete at end of capture)" in text, text

    # Fragments further apart than the reassembly timeout (capture time): both halves time
    # out, the first when the second arrives (not at the end of the capture).
    gap = 31 if outer == 4 else 61
    late = [(frs[0][0], T0), (frs[0][1], T0 + gap)]
    out, st, text = run(knod, work, tag + "-late", conf, late)
    rs = st["reasm"][fam]
    assert out == [] and rs["ReasmTimeout"] == 2 and rs["incomplete_at_end"] == 1, f"{tag}-late: {rs}"
    late[1] = (frs[0][1], T0 + gap - 2)  # within the timeout: it completes
    out, st, _ = run(knod, work, tag + "-intime", conf, late)
    assert out == [raw(pkts[0])] and st["reasm"][fam]["ReasmOKs"] == 1, f"{tag}-intime: {st['reasm']}"


def check_big(knod, work, a, lay):
    """A 20000-byte inner datagram (larger than a batch slot) in 1480-byte fragments,
    in reverse order, between two small packets: all three decrypt, in order."""
    name, mode, outer, inner, natt = lay
    tag = f"{a[0]}-{name}-big"
    fam = "ipv4" if outer == 4 else "ipv6"
    pkts = inner_packets(mode, outer, inner, sizes=(20000, 10, 20))
    encs = [scapy_sa(a, mode, outer, natt, k + 1).encrypt(p) for k, p in enumerate(pkts)]
    frs = cut(encs[0], outer, 0, 0x77 if outer == 6 or mode == "tunnel" else None, 1480 if outer == 4 else 1232)
    stream = [encs[1].__class__(raw(encs[1]))] + frs[::-1] + [encs[2].__class__(raw(encs[2]))]
    out, st, text = run(knod, work, tag, xfrm_conf(a[1], mode, outer, inner, natt),
                        [(p, T0 + n * 0.001) for n, p in enumerate(stream)])
    assert [len(x) for x in out] == [len(raw(p)) for p in (pkts[1], pkts[0], pkts[2])], f"{tag}: {text}"
    assert out == [raw(pkts[1]), raw(pkts[0]), raw(pkts[2])], f"{tag}: bytes differ"
    rs = st["reasm"][fam]
    assert rs["ReasmReqds"] == len(frs) > 10 and rs["ReasmOKs"] == 1, f"{tag}: {rs}"


def main():
    knod, work = sys.argv[1], sys.argv[2]
    fails = []
    for a in (ALGOS[0], ALGOS[4]):  # AES-GCM (AEAD) and AES-CBC + HMAC-SHA1
        for lay in LAYOUTS:
            try:
                check_layout(knod, work, a, lay)
            except AssertionError as ex:
                fails.append(str(ex))
    for lay in (LAYOUTS[1], LAYOUTS[2]):
        try:
            check_big(knod, work, ALGOS[0], lay)
        except AssertionError as ex:
            fails.append(str(ex))
    for f in fails:
        print("FAIL", f[:2000])
    print(f"{2 * len(LAYOUTS) + 2 - len(fails)}/{2 * len(LAYOUTS) + 2} checks ok")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
