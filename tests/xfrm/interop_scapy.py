#!/usr/bin/python3
"""knod <-> scapy ESP interop (ctest xfrm_interop_scapy).

For every transform x layout: knod encrypts and scapy's SecurityAssociation decrypts to the
original packets; scapy encrypts and knod decrypts to the original packets. ESN runs for the
AEADs with sequence numbers crossing 2^32 (replay-oseq-hi / replay-seq-hi).

Usage: interop_scapy.py KNOD WORKDIR
Skips (stated, not counted as passes):
  - rfc4543 GMAC: scapy 2.5 has no AES-NULL-GMAC.
  - GCM with 8- or 12-byte ICVs: scapy 2.5 uses cryptography's AESGCM, which always
    writes and expects the full 16-byte tag (crypt_icv_size is ignored for GCM); these
    SAs are checked against tshark instead (interop_tshark.py).
Worked around: scapy 2.5's AuthAlgo.sign/verify ignore ESN for ESP (the high 32 bits are
not appended to the ICV input, RFC 4303 §2.2.1). With ESN and HMAC this script computes the
ICV itself (hmac over ESP header..trailer || seq-hi): it checks knod's ICV and then lets
scapy decrypt with verify=False, and it re-signs scapy's packets before knod sees them.
"""
import hashlib
import hmac
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from interop_common import ALGOS, LAYOUTS, SPI, inner_packets, run_knod, scapy_sa, xfrm_conf  # noqa: E402

from scapy.all import IP, IPv6, raw  # noqa: E402
from scapy.layers.ipsec import ESP  # noqa: E402


HMACS = {"HMAC-SHA1-96": (hashlib.sha1, 12), "SHA2-256-128": (hashlib.sha256, 16),
         "SHA2-384-192": (hashlib.sha384, 24), "SHA2-512-256": (hashlib.sha512, 32)}


def esn_icv(a, esp_bytes_without_icv, seq_hi):
    h, n = HMACS[a[4]]
    return hmac.new(bytes.fromhex(a[5]), esp_bytes_without_icv + seq_hi.to_bytes(4, "big"), h).digest()[:n]


def main():
    knod, work = sys.argv[1], sys.argv[2]
    fails, passes, skips = [], 0, []
    for a in ALGOS:
        if a[2] == "AES-GCM" and a[6] != 16:
            skips.append(f"{a[0]}: scapy 2.5 AES-GCM always uses a 16-byte tag")
            continue
        for esn in (False, True):
            hm = esn and a[4] != "NULL"  # ESN + HMAC: ICV computed here (see above)
            for lay in LAYOUTS:
                lname, mode, outer, inner, natt = lay
                tag = f"{a[0]}-{lname}{'-esn' if esn else ''}"
                pkts = inner_packets(mode, outer, inner)
                start = (1 << 32) - 3 if esn else 0  # crosses 2^32 within the packets
                extra = f"flag esn replay-oseq-hi {start >> 32} replay-oseq {start & 0xffffffff}" if esn else ""
                conf = xfrm_conf(a[1], mode, outer, inner, natt, extra)
                # knod encrypts, scapy decrypts
                try:
                    enc, _, _ = run_knod(knod, conf, pkts, "out", work, tag)
                    assert len(enc) == len(pkts), f"knod wrote {len(enc)} of {len(pkts)} packets"
                    for k, (e, p) in enumerate(zip(enc, pkts)):
                        seq = start + k + 1
                        sa = scapy_sa(a, mode, outer, natt, esn_hi=(seq >> 32) if esn else None)
                        outer_pkt = (IP if outer == 4 else IPv6)(e)
                        esp = outer_pkt[ESP]
                        assert esp.spi == SPI and esp.seq == seq & 0xffffffff, f"spi/seq {esp.spi:#x}/{esp.seq}"
                        if hm:
                            n = HMACS[a[4]][1]
                            wire = raw(esp)
                            assert wire[-n:] == esn_icv(a, wire[:-n], seq >> 32), f"packet {k}: ESN ICV"
                        dec = sa.decrypt(outer_pkt, verify=not hm)
                        assert raw(dec) == raw(p), f"packet {k}: scapy decrypt differs\n{raw(dec).hex()}\n{raw(p).hex()}"
                    passes += 1
                except Exception as ex:  # noqa: BLE001
                    fails.append(f"{tag} knod->scapy: {ex}")
                # scapy encrypts, knod decrypts
                try:
                    encs = []
                    for k, p in enumerate(pkts):
                        seq = start + k + 1
                        sa = scapy_sa(a, mode, outer, natt, seq & 0xffffffff, (seq >> 32) if esn else None)
                        x = sa.encrypt(p)
                        if hm:  # replace scapy's ICV (no seq-hi) with the RFC 4303 one
                            n = HMACS[a[4]][1]
                            wire = raw(x[ESP])[:-n]
                            x[ESP].data = x[ESP].data[:-n] + esn_icv(a, wire, seq >> 32)
                        encs.append(x)
                    inconf = conf.replace(extra, f"flag esn replay-seq-hi {start >> 32} replay-seq {start & 0xffffffff}") if esn else conf
                    dec, out, _ = run_knod(knod, inconf, [x.__class__(raw(x)) for x in encs], "in", work, tag)
                    assert len(dec) == len(pkts), f"knod passed {len(dec)} of {len(pkts)}:\n{out}"
                    for k, (d, p) in enumerate(zip(dec, pkts)):
                        assert d == raw(p), f"packet {k}: knod decrypt differs\n{d.hex()}\n{raw(p).hex()}"
                    passes += 1
                except Exception as ex:  # noqa: BLE001
                    fails.append(f"{tag} scapy->knod: {ex}")
    skips.append("rfc4543(gcm(aes)) GMAC: scapy 2.5 has no AES-NULL-GMAC")
    for s in sorted(set(skips)):
        print("SKIP", s)
    for f in fails:
        print("FAIL", f)
    print(f"{passes} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
