#!/usr/bin/env python3
"""Writes fuzz_otelproc's seeds into tests/fuzz/corpus/fuzz_otelproc: OTEP 4719 process contexts
as the otelctx fixture publishes them (the 32-byte header at the harness's 0x1000, the payload
right behind it at 0x1020): the fixture's ProcessContext (service.name, the schema version, the
key map naming http_route), a bare Resource (the OTEP's other text), a context being updated
(published_at_ns 0), and version 1."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "fuzz_otelproc")


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def kv_string(key, value):
    return field(1, key.encode()) + field(2, field(1, value.encode()))


def key_map(*keys):
    arr = b"".join(field(1, field(1, k.encode())) for k in keys)
    return field(1, b"threadlocal.attribute_key_map") + field(2, field(5, arr))


def context(payload, version=2, published=1733500000000000000):
    return b"OTEL_CTX" + struct.pack("<IIQQ", version, len(payload), published, 0x1020) + payload


def main():
    os.makedirs(OUT, exist_ok=True)
    resource = field(1, kv_string("service.name", "otelctx-fixture"))
    fixture = (field(1, resource) + field(2, kv_string("threadlocal.schema_version", "tlsdesc_v1"))
               + field(2, key_map("http_route")))
    bare = resource + field(1, kv_string("deployment.environment.name", "prod"))
    seeds = {
        "fixture": context(fixture),
        "fixture-two-keys": context(field(1, resource) + field(2, key_map("http_route", "method"))),
        "bare-resource": context(bare),
        "updating": context(fixture, published=0),
        "version-1": context(fixture, version=1),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
