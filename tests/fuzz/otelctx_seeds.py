#!/usr/bin/env python3
"""Writes fuzz_otelctx's seeds into tests/fuzz/corpus/fuzz_otelctx: OTEP 4947 records as the
otelctx fixture publishes them (span a with an http_route, span c, a record being written, one
without attributes), each behind the 8-byte pointer that the harness's fake slot reads (0x1008:
the record follows the pointer in the fake memory)."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_otelctx")


def record(i, valid=1, attrs=None):
    trace = bytes(0x10 * (i + 1) + k for k in range(16))
    span = bytes(0xA0 + 0x10 * i + k for k in range(8))
    data = b"".join(bytes([key, len(v)]) + v for key, v in (attrs or []))
    return trace + span + bytes([valid, 1]) + struct.pack("<H", len(data)) + data


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "a": record(0, attrs=[(0, b"/route/a")]),
        "c-two-attrs": record(2, attrs=[(0, b"/route/c"), (1, b"GET")]),
        "writing": record(1, valid=0, attrs=[(0, b"/route/b")]),
        "no-attrs": record(1),
    }
    for name, rec in seeds.items():
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(struct.pack("<Q", 0x1008) + rec)


if __name__ == "__main__":
    main()
