#!/usr/bin/env python3
"""Writes the seed corpus of the `http` fuzz target (docs/fuzzing.md), or
with `--bodies` that of the `flat_body` target.

Each file is the raw bytes of what a client sends on one connection: creates
whose JSON bodies are the built-in scenarios' operations (with and without an
Idempotency-Key, a client_reference, metadata, a chunked body), creates on
each of the fuzz plan's faulted collections, lookups, control API calls, and
two requests pipelined on one connection. Needs PyYAML.

    python3 fuzz/seed_http.py [OUT_DIR]            # default fuzz/corpus/http
    python3 fuzz/seed_http.py --bodies [OUT_DIR]   # default fuzz/corpus/flat_body

The `flat_body` seeds are the create bodies alone: each operation's arguments
compact and spaced, with a client_reference, and with metadata.
"""

import hashlib
import json
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The collections of the fuzz plan's fault rules (fuzz/fuzz_targets/http.rs).
FAULTED = ["drops", "resets", "stalls", "abandons", "busy", "errors", "partials",
           "idles", "delays", "early"]
AUTH = "Authorization: Bearer sk_test_a\r\n"


def request(method, path, body=b"", headers=""):
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}"
    if body:
        head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


def chunked(path, body, headers):
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    half = len(body) // 2
    out = head.encode()
    for piece in (body[:half], body[half:]):
        if piece:
            out += f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    return out + b"0\r\n\r\n"


def operations():
    """(resource, args) of every operation in the built-in library."""
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        scenario = yaml.safe_load(path.read_text())
        for op in scenario.get("operations") or []:
            if isinstance(op, dict) and "resource" in op:
                yield op["resource"], op.get("args") or {}


def seeds():
    n = 0
    for resource, args in operations():
        n += 1
        body = json.dumps(args, separators=(",", ":")).encode()
        path = f"/v1/{resource}"
        key = f"Idempotency-Key: seed-{n}\r\n"
        yield request("POST", path, body, AUTH + key)
        yield request("POST", path, body, AUTH)
        with_reserved = dict(args, client_reference=f"ref-{n}", metadata={"op": f"op-{n}"})
        yield request("POST", path, json.dumps(with_reserved).encode(), AUTH + key)
        yield chunked(path, body, AUTH + key)
    body = b'{"title":"fuzz","amount":1}'
    for resource in FAULTED:
        yield request("POST", f"/v1/{resource}", body, AUTH + "Idempotency-Key: k-1\r\n")
        yield request("GET", f"/v1/{resource}/tkt_0123456789abcdefghijklmn", headers=AUTH)
    yield request("POST", "/v1/tickets", body, "Idempotency-Key: k-2\r\n")
    yield request("POST", "/v1/tickets", b"{not json", AUTH)
    yield request("GET", "/v1/tickets/tkt_0123456789abcdefghijklmn", headers=AUTH)
    yield request("GET", "/v1/tickets?client_reference=ref-1", headers=AUTH)
    yield request("GET", "/v1/tickets?created_gte=2026-01-01T00:00:00Z&limit=5", headers=AUTH)
    yield request("DELETE", "/v1/tickets", headers=AUTH)
    for path in ["/_lostreply/health", "/_lostreply/clock", "/_lostreply/ledger",
                 "/_lostreply/journal", "/_lostreply/events", "/_lostreply/mcp"]:
        yield request("GET", path)
    yield request("POST", "/_lostreply/clock", b'{"advance":"25h"}')
    yield request("POST", "/_lostreply/clock", b'{"advance_ms":1500}')
    yield request("POST", "/_lostreply/faults/reset")
    yield request("POST", "/_lostreply/events/evt_0123456789abcdefghijklmn/delivery")
    # Two requests on one kept-alive connection: a create, then its replay.
    create = request("POST", "/v1/tickets", body, AUTH + "Idempotency-Key: k-3\r\n")
    yield create + create


def bodies():
    for n, (_, args) in enumerate(operations(), start=1):
        yield json.dumps(args, separators=(",", ":"), ensure_ascii=False).encode()
        yield json.dumps(args, indent=1).encode()
        yield json.dumps(dict(args, client_reference=f"ref-{n}")).encode()
        yield json.dumps(dict(args, metadata={"op": f"op-{n}"})).encode()


def main():
    args = sys.argv[1:]
    target = "http"
    if args[:1] == ["--bodies"]:
        target, args = "flat_body", args[1:]
    out = pathlib.Path(args[0]) if args else ROOT / "fuzz" / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    for data in (bodies() if target == "flat_body" else seeds()):
        (out / hashlib.sha1(data).hexdigest()).write_bytes(data)
        count += 1
    print(f"{count} seeds in {out}")


if __name__ == "__main__":
    main()
