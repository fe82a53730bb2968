#!/usr/bin/python3
"""knod -> tshark ESP interop (ctest xfrm_interop_tshark).

knod encrypts; tshark (Wireshark 4.0 ESP dissector, SA given through `uat:esp_sa`) must report
esp.icv_good == 1 for every packet and dissect the decrypted inner UDP (dport 40001, no dissector of its own).
Covers the GCM (8/12/16-byte ICV) and CBC/NULL + HMAC SAs in transport, tunnel, IPv6 and
NAT-T layouts. ChaCha20-Poly1305 is not in Wireshark 4.0's ESP decryptor (checked by scapy).
Usage: interop_tshark.py KNOD TSHARK WORKDIR
"""
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from interop_common import ALGOS, LAYOUTS, inner_packets, run_knod, tshark_check, xfrm_conf  # noqa: E402


def main():
    knod, tshark, work = sys.argv[1:4]
    fails, passes = [], 0
    for a in ALGOS:
        if a[7] is None:
            continue
        for lay in LAYOUTS:
            lname, mode, outer, inner, natt = lay
            tag = f"{a[0]}-{lname}"
            pkts = inner_packets(mode, outer, inner)
            try:
                enc, _, pcap = run_knod(knod, xfrm_conf(a[1], mode, outer, inner, natt), pkts, "out", work, tag)
                assert len(enc) == len(pkts), f"knod wrote {len(enc)} of {len(pkts)}"
                tshark_check(tshark, pcap, outer, a, len(pkts))
                passes += 1
            except Exception as ex:  # noqa: BLE001
                fails.append(f"{tag}: {ex}")
    for f in fails:
        print("FAIL", f)
    print(f"{passes} passed, {len(fails)} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
