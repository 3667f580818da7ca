#!/usr/bin/env python3
"""Writes the SASL seeds (issue 15): RFC 7677's SCRAM server messages for
fuzz_scram (first byte 0 = server-first, 1 = server-final), and
SaslHandshake v1 / SaslAuthenticate v0-v2 response frames for fuzz_response
(api key byte, int16 version, then the response header and body as a broker
writes them). One lower-case hex line per file.

usage: /usr/bin/python3 tests/fuzz/seeds/sasl_seeds.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"


def write(target, name, data):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    with open(os.path.join(HERE, target, name), "w") as f:
        f.write(data.hex() + "\n")


def s16(s):
    return struct.pack(">h", len(s)) + s


def main():
    write("fuzz_scram", "server_first_rfc7677.hex", b"\x00" + SERVER_FIRST)
    write("fuzz_scram", "server_first_extension.hex", b"\x00" + SERVER_FIRST + b",x=ext")
    write("fuzz_scram", "server_first_mandatory_extension.hex", b"\x00m=x," + SERVER_FIRST)
    write("fuzz_scram", "server_final_rfc7677.hex", b"\x01v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
    write("fuzz_scram", "server_final_error.hex", b"\x01e=invalid-proof")
    corr = struct.pack(">i", 1)
    handshake = struct.pack(">h", 0) + struct.pack(">i", 2) + s16(b"PLAIN") + s16(b"SCRAM-SHA-512")
    write("fuzz_response", "sasl_handshake_v1.hex", b"\x11" + struct.pack(">h", 1) + corr + handshake)
    write("fuzz_response", "sasl_handshake_v1_unsupported.hex",
          b"\x11" + struct.pack(">h", 1) + corr + struct.pack(">h", 33) + struct.pack(">i", 1) + s16(b"PLAIN"))
    write("fuzz_response", "sasl_authenticate_v0_scram.hex",
          b"\x24" + struct.pack(">h", 0) + corr + struct.pack(">hh", 0, -1) + struct.pack(">i", len(SERVER_FIRST))
          + SERVER_FIRST)
    write("fuzz_response", "sasl_authenticate_v1_failed.hex",
          b"\x24" + struct.pack(">h", 1) + corr + struct.pack(">h", 58) + s16(b"Authentication failed")
          + struct.pack(">iq", 0, 0))
    # v2 is flexible: a tagged-fields byte after the correlation id, compact
    # nullable string and bytes (length + 1 as a varint), tags at the end.
    write("fuzz_response", "sasl_authenticate_v2_lifetime.hex",
          b"\x24" + struct.pack(">h", 2) + corr + b"\x00" + struct.pack(">h", 0) + b"\x00"
          + bytes([len(SERVER_FIRST) + 1]) + SERVER_FIRST + struct.pack(">q", 10000) + b"\x00")


if __name__ == "__main__":
    main()
