"""Tests for lostreply_adapter.py (standard library only).

Run: ``python3 -m unittest discover -s examples/python`` (or, in this
directory, ``python3 -m unittest -q``).

Most tests drive the adapter exactly as the harness does: one process per
call, JSON on stdin and stdout, a fresh state directory per test. The provider
here is a small scripted fake built on ``http.server`` (127.0.0.1, port 0): it
exists only to exercise the adapter's HTTP handling and classification in
isolation. The real provider is the Rust simulator, and the real certification
of this adapter is ``lostreply run`` over the scenario library.

The strategies (``--strategy replay-once|eager|lazy``) are driven the same
way, through the command line; the default is ``replay-once``.

No test sleeps and hopes: a stalled response is released by an event when the
test ends, the only real-time waits are the adapter's own client timeouts, and
the race test waits (bounded) for the kernel to show the second process
blocked on the lock.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import lostreply_adapter as la  # noqa: E402

ADAPTER = os.path.join(HERE, "lostreply_adapter.py")

# The Standard Webhooks reference vector (provider-api.md).
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TS = "1614265330"
VECTOR_BODY = '{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
OTHER_SECRET = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="

NOW = "2026-01-01T00:00:00Z"
TIMEOUT_MS = 300
# Bounds for the fake provider's waits: far above anything a passing run needs.
RELEASE_WAIT_S = 10.0


# --------------------------------------------------------------------------
# A scripted fake provider (unit tests only)
# --------------------------------------------------------------------------


@dataclass
class Seen:
    """One request as the fake provider received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


Action = tuple  # ("json", status, obj[, headers]) | ("drop",) | ("reset",) | ...


def obj(oid: str = "tkt_1", status: str = "succeeded", ref: str | None = "op-1", **extra: Any) -> dict[str, Any]:
    """A provider object as provider-api.md describes it."""
    found = {
        "id": oid,
        "object": "tickets",
        "status": status,
        "client_reference": ref,
        "created_at": NOW,
        "args": {"title": "Purchase review", "amount": 1200},
        "metadata": {"operation_id": ref} if ref else {},
    }
    found.update(extra)
    return found


class FakeProvider:
    """Answers each request with whatever ``responder(seen)`` returns, and
    keeps a journal of every request."""

    def __init__(self, responder: Callable[[Seen], Action]) -> None:
        self.responder = responder
        self.journal: list[Seen] = []
        self.journal_lock = threading.Lock()
        self.release = threading.Event()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urllib.parse.urlsplit(self.path)
                seen = Seen(
                    method=self.command,
                    path=parts.path,
                    query=urllib.parse.parse_qs(parts.query),
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=json.loads(raw) if raw else None,
                )
                with provider.journal_lock:
                    provider.journal.append(seen)
                self.close_connection = True
                provider.act(self, provider.responder(seen))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def requests(self, method: str | None = None) -> list[Seen]:
        with self.journal_lock:
            return [s for s in self.journal if method is None or s.method == method]

    def act(self, handler: BaseHTTPRequestHandler, action: Action) -> None:
        kind = action[0]
        if kind == "json":
            status, payload = action[1], action[2]
            extra = action[3] if len(action) > 3 else {}
            self._send(handler, status, json.dumps(payload).encode(), extra)
        elif kind == "raw":
            self._send(handler, action[1], action[2], {})
        elif kind == "drop":
            # Read the request, then close without a byte: a FIN.
            pass
        elif kind == "reset":
            # SO_LINGER 0 turns close() into a TCP RST. rfile holds a reference
            # to the socket, so close it first or the close is deferred.
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            handler.rfile.close()
            handler.connection.close()
        elif kind == "stall":
            # Hold the connection until the test ends (bounded).
            self.release.wait(RELEASE_WAIT_S)
        elif kind == "truncate":
            status, payload, keep = action[1], json.dumps(action[2]).encode(), action[3]
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload[:keep])
            handler.wfile.flush()
        elif kind == "idle":
            handler.send_response(action[1])
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", "100")
            handler.end_headers()
            handler.wfile.flush()
            self.release.wait(RELEASE_WAIT_S)
        else:
            raise AssertionError(f"unknown fake action {action!r}")

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: bytes, extra: dict[str, str]) -> None:
        handler.send_response(status)
        # extra may name another Content-Type (problem+json): one header only.
        if not any(name.lower() == "content-type" for name in extra):
            handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in extra.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def sequence(*actions: Action) -> Callable[[Seen], Action]:
    """Answers the nth request with the nth action; a request beyond the script
    is a test failure made visible as a 599."""
    queue = list(actions)
    lock = threading.Lock()

    def respond(_seen: Seen) -> Action:
        with lock:
            if not queue:
                return ("json", 599, {"error": {"type": "unexpected request in test"}})
            return queue.pop(0)

    return respond


# --------------------------------------------------------------------------
# Driving the adapter as the harness does
# --------------------------------------------------------------------------


def common(
    base_url: str,
    mode: str = "stripe",
    retention_s: int = 86400,
    retrieve: bool = True,
    client_reference: bool = True,
    list_recent: bool = True,
    webhooks: str | None = None,
    now: str = NOW,
    timeout_ms: int = TIMEOUT_MS,
) -> dict[str, Any]:
    return {
        "protocol": 1,
        "now": now,
        "provider": {
            "base_url": base_url,
            "credential": "sk_test_a",
            "contract": {
                "idempotency": {"mode": mode, "header": "Idempotency-Key", "retention_s": retention_s},
                "lookup": {"retrieve": retrieve, "client_reference": client_reference, "list_recent": list_recent},
                "asynchronous": False,
                "webhooks": {"secret": webhooks} if webhooks else None,
            },
        },
        "client_timeout_ms": timeout_ms,
    }


OUTCOME_FIELDS = {"operation_id", "outcome", "provider_ref", "needs_review", "evidence"}

OPERATION = {"id": "op-1", "action": "create", "resource": "tickets", "args": {"title": "Purchase review", "amount": 1200}}


def execute_request(base_url: str, **kw: Any) -> dict[str, Any]:
    return {"operation": OPERATION, **common(base_url, **kw)}


def op_request(base_url: str, op_id: str = "op-1", **kw: Any) -> dict[str, Any]:
    return {"operation_id": op_id, **common(base_url, **kw)}


def start_call(
    call: str, request: Any, state_dir: str, raw: bytes | None = None, strategy: str | None = None
) -> subprocess.Popen:
    """Starts one call as the harness does: the adapter's command line (with
    ``--strategy`` when given), then the call name last."""
    env = dict(os.environ, LOSTREPLY_STATE_DIR=state_dir, LOSTREPLY_PROTOCOL="1")
    options = ["--strategy", strategy] if strategy is not None else []
    proc = subprocess.Popen(
        [sys.executable, ADAPTER, *options, call],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None
    proc.stdin.write(raw if raw is not None else json.dumps(request).encode())
    proc.stdin.close()
    return proc


def finish_call(proc: subprocess.Popen) -> tuple[int, Any, str]:
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    rc = proc.wait(timeout=30)
    proc.stdout.close()
    proc.stderr.close()
    reply = json.loads(out) if out.strip() else None
    return rc, reply, err.decode()


def run_call(
    call: str, request: Any, state_dir: str, raw: bytes | None = None, strategy: str | None = None
) -> tuple[int, Any, str]:
    return finish_call(start_call(call, request, state_dir, raw, strategy))


class AdapterTest(unittest.TestCase):
    """A fresh state directory and (optionally) a fake provider per test."""

    def setUp(self) -> None:
        self.provider: FakeProvider | None = None
        self.new_state_dir()

    def new_state_dir(self) -> None:
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.state_dir = tmp.name

    def serve(self, responder: Callable[[Seen], Action]) -> FakeProvider:
        provider = FakeProvider(responder)
        # Cleanups run last-in first-out: the provider stops before its state
        # directory goes away.
        self.addCleanup(provider.close)
        self.provider = provider
        return provider

    def call(self, call: str, request: Any, strategy: str | None = None) -> dict[str, Any]:
        rc, reply, err = run_call(call, request, self.state_dir, strategy=strategy)
        self.assertEqual(rc, 0, f"{call} exited {rc}; stderr: {err}")
        self.assertIsInstance(reply, dict, f"{call} printed no JSON object; stderr: {err}")
        if "outcome" in reply:
            # Replies carry the protocol's fields and nothing else.
            self.assertEqual(set(reply), OUTCOME_FIELDS, reply)
        else:
            self.assertEqual(set(reply), {"accepted", "operation_id"}, reply)
        return reply

    def record(self, op_id: str = "op-1") -> dict[str, Any]:
        with open(os.path.join(self.state_dir, "ops", f"{op_id}.json")) as f:
            return json.load(f)


# --------------------------------------------------------------------------
# Webhook verification
# --------------------------------------------------------------------------


class WebhookVerificationTest(unittest.TestCase):
    def vector_now(self, delta_s: int = 0) -> dt.datetime:
        return dt.datetime.fromtimestamp(int(VECTOR_TS) + delta_s, dt.timezone.utc)

    def headers(self, signature: str = VECTOR_SIGNATURE) -> dict[str, str]:
        return {"webhook-id": VECTOR_ID, "webhook-timestamp": VECTOR_TS, "webhook-signature": signature}

    def test_signs_the_standard_webhooks_vector(self) -> None:
        self.assertEqual(la.sign_webhook(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY), VECTOR_SIGNATURE)

    def test_accepts_the_vector_within_tolerance(self) -> None:
        for delta in (0, 299, -299):
            ok, reason = la.verify_webhook(VECTOR_SECRET, self.headers(), VECTOR_BODY, self.vector_now(delta))
            self.assertTrue(ok, f"delta {delta}: {reason}")

    def test_header_names_are_case_insensitive(self) -> None:
        upper = {k.title(): v for k, v in self.headers().items()}
        ok, _ = la.verify_webhook(VECTOR_SECRET, upper, VECTOR_BODY, self.vector_now())
        self.assertTrue(ok)

    def test_accepts_when_one_of_several_signatures_matches(self) -> None:
        several = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= " + VECTOR_SIGNATURE
        ok, _ = la.verify_webhook(VECTOR_SECRET, self.headers(several), VECTOR_BODY, self.vector_now())
        self.assertTrue(ok)

    def test_rejects_a_forged_signature(self) -> None:
        forged = la.sign_webhook(OTHER_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY)
        self.assertNotEqual(forged, VECTOR_SIGNATURE)
        ok, reason = la.verify_webhook(VECTOR_SECRET, self.headers(forged), VECTOR_BODY, self.vector_now())
        self.assertFalse(ok)
        self.assertIn("no v1 signature matches", reason)

    def test_rejects_a_tampered_body(self) -> None:
        ok, _ = la.verify_webhook(VECTOR_SECRET, self.headers(), '{"test": 2432232315}', self.vector_now())
        self.assertFalse(ok)

    def test_rejects_stale_and_future_timestamps(self) -> None:
        for delta in (301, -301, 86400):
            ok, reason = la.verify_webhook(VECTOR_SECRET, self.headers(), VECTOR_BODY, self.vector_now(delta))
            self.assertFalse(ok, f"delta {delta}")
            self.assertIn("tolerance", reason)

    def test_rejects_missing_headers_and_other_versions(self) -> None:
        for missing in ("webhook-id", "webhook-timestamp", "webhook-signature"):
            headers = self.headers()
            del headers[missing]
            ok, _ = la.verify_webhook(VECTOR_SECRET, headers, VECTOR_BODY, self.vector_now())
            self.assertFalse(ok, missing)
        v2 = "v2," + VECTOR_SIGNATURE[3:]
        ok, _ = la.verify_webhook(VECTOR_SECRET, self.headers(v2), VECTOR_BODY, self.vector_now())
        self.assertFalse(ok)


# --------------------------------------------------------------------------
# Store: atomicity and locking
# --------------------------------------------------------------------------


def sample_record(outcome: str = "unknown") -> la.Record:
    return la.Record(
        operation={"id": "op-1", "resource": "tickets", "args": {"title": "x"}},
        key="lr-op-1",
        client_reference="op-1",
        first_sent_at="2026-01-01T00:00:00.000000Z",
        outcome=outcome,
    )


HOLD_LOCK_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import lostreply_adapter as la
store = la.Store(sys.argv[2])
with store.lock("op-1"):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


class StoreTest(unittest.TestCase):
    def setUp(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self.store = la.Store(self._tmp.name)

    def tearDown(self) -> None:
        self._tmp.cleanup()

    def test_round_trip_leaves_no_temporary_file(self) -> None:
        record = sample_record()
        record.events_seen = ["evt_1"]
        self.store.save(record)
        loaded = self.store.load("op-1")
        self.assertEqual(loaded, record)
        self.assertEqual(sorted(os.listdir(self.store.ops_dir)), ["op-1.json"])

    def test_a_record_without_the_operator_flag_reads_as_not_resolved_by_a_person(self) -> None:
        record = sample_record("succeeded")
        record.resolved_by_person = True
        self.store.save(record)
        self.assertTrue(self.store.load("op-1").resolved_by_person)
        old = record.to_json()
        del old["resolved_by_person"]
        self.assertFalse(la.Record.from_json(old).resolved_by_person)

    def test_an_interrupted_write_leaves_the_previous_record(self) -> None:
        # A writer killed before its rename leaves only a partial .tmp behind:
        # readers must still see the last complete record.
        self.store.save(sample_record("pending"))
        with open(os.path.join(self.store.ops_dir, "op-1.json.tmp"), "w") as f:
            f.write('{"operation": {"id": "op-1", "reso')
        self.assertEqual(self.store.load("op-1").outcome, "pending")
        self.store.save(sample_record("succeeded"))
        self.assertEqual(self.store.load("op-1").outcome, "succeeded")
        self.assertNotIn("op-1.json.tmp", os.listdir(self.store.ops_dir))

    def test_missing_record_is_none_and_corrupt_record_is_an_error(self) -> None:
        self.assertIsNone(self.store.load("op-2"))
        with open(os.path.join(self.store.ops_dir, "op-2.json"), "w") as f:
            f.write("not json")
        with self.assertRaises(la.StoreError):
            self.store.load("op-2")

    def test_refuses_ids_that_could_escape_the_directory(self) -> None:
        for bad in ("../op-1", "a/b", "", "x" * 65):
            with self.assertRaises(la.StoreError, msg=bad):
                self.store.load(bad)

    def test_lock_excludes_another_process_until_released(self) -> None:
        child = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK_CHILD, HERE, self._tmp.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdin is not None and child.stdout is not None
            self.assertEqual(child.stdout.readline().strip(), "locked")
            fd = os.open(os.path.join(self.store.ops_dir, "op-1.lock"), os.O_RDWR)
            try:
                with self.assertRaises(BlockingIOError):
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(fd)
            child.stdin.write("go\n")
            child.stdin.flush()
            self.assertEqual(child.stdout.readline().strip(), "released")
            # Blocking acquisition now succeeds (the child has released it).
            with self.store.lock("op-1"):
                pass
        finally:
            if child.stdin and not child.stdin.closed:
                child.stdin.close()
            child.wait(timeout=30)
            if child.stdout:
                child.stdout.close()

    def test_a_killed_holder_releases_the_lock(self) -> None:
        child = subprocess.Popen(
            [sys.executable, "-c", HOLD_LOCK_CHILD, HERE, self._tmp.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdin is not None
        self.assertEqual(child.stdout.readline().strip(), "locked")
        child.kill()
        child.wait(timeout=30)
        child.stdin.close()
        child.stdout.close()
        with self.store.lock("op-1"):
            pass


# --------------------------------------------------------------------------
# Classification of create answers
# --------------------------------------------------------------------------


def answer(status: int, payload: Any, headers: dict[str, str] | None = None) -> la.HttpAnswer:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    # HttpAnswer holds header names in lower case, as ProviderClient reads them.
    return la.HttpAnswer(status=status, headers={k.lower(): v for k, v in (headers or {}).items()}, body=body)


# The ietf mode's "first request still in flight" answer (provider-api.md).
IETF_IN_USE = {
    "type": "urn:lostreply:problem:idempotency-key-in-use", "title": "Idempotency-Key in use", "status": 409,
    "detail": "a request with this key is still being processed",
}
PROBLEM = {"Content-Type": "application/problem+json"}
STRIPE_IN_USE = ("json", 409, {"error": {"type": "idempotency_error", "code": "idempotency_key_in_use"}})


class ClassificationTest(unittest.TestCase):
    def check(
        self, ans: la.HttpAnswer, outcome: str, review: bool = False, ref: str | None = None, says: str = "",
        mode: str = "stripe",
    ) -> None:
        key = None if mode == "none" else "lr-op-1"
        verdict = la.classify_create(ans, key, mode)
        self.assertEqual((verdict.outcome, verdict.needs_review, verdict.provider_ref), (outcome, review, ref), verdict.evidence)
        self.assertIn(says, verdict.evidence)

    def test_created_objects_by_status(self) -> None:
        self.check(answer(201, obj()), "succeeded", ref="tkt_1")
        self.check(answer(202, obj(status="processing")), "pending", ref="tkt_1")
        self.check(answer(201, obj(status="processing")), "pending", ref="tkt_1")
        self.check(answer(201, obj(status="failed")), "failed", ref="tkt_1")
        self.check(answer(201, obj(), {"idempotent-replayed": "true"}), "succeeded", ref="tkt_1", says="replayed")

    def test_a_success_without_an_object_is_not_a_success(self) -> None:
        self.check(answer(201, {"status": "succeeded"}), "unknown", says="not an object with an id")
        self.check(answer(201, b"{not json"), "unknown", says="not valid JSON")
        self.check(answer(201, obj(status="weird")), "unknown", says="unrecognised status")

    def test_rejections_before_execution_are_failures(self) -> None:
        self.check(answer(400, {"error": {"type": "invalid_request"}}), "failed", says="400 invalid_request")
        self.check(answer(401, {"error": {"type": "unauthorized"}}), "failed", says="401 unauthorized")
        self.check(answer(404, {"error": {"type": "not_found"}}), "failed", says="404")
        self.check(answer(413, {"error": {"type": "too_large"}}), "failed", says="413")
        self.check(answer(429, {"error": {"type": "rate_limited"}}, {"retry-after": "1"}), "failed", says="429 rate_limited")
        self.check(answer(400, {"type": "about:blank", "title": "Idempotency-Key is missing"}), "failed")

    def test_a_refusal_of_a_create_sent_again_says_nothing_about_the_earlier_attempt(self) -> None:
        for status, kind in ((400, "invalid_request"), (401, "unauthorized"), (404, "not_found"),
                             (413, "too_large"), (429, "rate_limited")):
            with self.subTest(status=status):
                verdict = la.classify_retry(answer(status, {"error": {"type": kind}}), "lr-op-1", "stripe")
                self.assertEqual((verdict.outcome, verdict.provider_ref, verdict.needs_review), ("unknown", None, False))
                self.assertTrue(verdict.refused and verdict.inconclusive)
                self.assertEqual(
                    verdict.evidence,
                    f"refused: {status} {kind}: a refusal of a request sent again says nothing about the earlier attempt",
                )
        # What a create sent again proves, it proves as a first attempt does.
        replayed = la.classify_retry(answer(201, obj(), {"idempotent-replayed": "true"}), "lr-op-1", "stripe")
        self.assertEqual((replayed.outcome, replayed.provider_ref, replayed.refused), ("succeeded", "tkt_1", False))
        settled = la.classify_retry(answer(201, obj(status="failed")), "lr-op-1", "stripe")
        self.assertEqual((settled.outcome, settled.provider_ref), ("failed", "tkt_1"))
        mismatch = la.classify_retry(answer(400, {"error": {"type": "idempotency_error"}}), "lr-op-1", "stripe")
        self.assertEqual((mismatch.outcome, mismatch.needs_review), ("unknown", True))
        in_flight = la.classify_retry(answer(409, STRIPE_IN_USE[2]), "lr-op-1", "stripe")
        self.assertEqual(in_flight.outcome, "pending")

    def test_key_mismatch_needs_review(self) -> None:
        self.check(answer(400, {"error": {"type": "idempotency_error"}}), "unknown", review=True, says="other arguments")
        self.check(answer(422, {"type": "about:blank", "title": "mismatch"}), "unknown", review=True)

    def test_key_in_flight_is_pending_in_the_shape_its_mode_documents(self) -> None:
        in_use = {"error": {"type": "idempotency_error", "code": "idempotency_key_in_use"}}
        self.check(answer(409, in_use), "pending", says="still processing the first request with key lr-op-1")
        self.check(answer(409, IETF_IN_USE, PROBLEM), "pending", mode="ietf", says="has the operation")
        # Any other 409 proves nothing: not the provider's "in flight".
        self.check(answer(409, {"error": {"type": "idempotency_error", "code": "other"}}), "unknown", says="unexpected 409")
        self.check(answer(409, {"error": {"type": "conflict"}}), "unknown")
        self.check(answer(409, IETF_IN_USE), "unknown", mode="ietf")
        self.check(answer(409, in_use), "unknown", mode="none")

    def test_ambiguous_answers_are_unknown(self) -> None:
        self.check(answer(500, {"error": {"type": "internal"}}), "unknown", says="may or may not")
        self.check(answer(503, b""), "unknown")
        self.check(answer(418, {}), "unknown")


# --------------------------------------------------------------------------
# The HTTP client against real sockets
# --------------------------------------------------------------------------


class ProviderClientTest(AdapterTest):
    def client(self) -> la.ProviderClient:
        assert self.provider is not None
        return la.ProviderClient(la.parse_common(common(self.provider.base_url)))

    def lost(self, action: Action) -> str:
        self.serve(sequence(action))
        with self.assertRaises(la.LostAnswer) as caught:
            self.client().request("POST", "/v1/tickets", {"title": "x"})
        return caught.exception.evidence

    def test_complete_answer(self) -> None:
        self.serve(sequence(("json", 201, obj(), {"Idempotent-Replayed": "true"})))
        got = self.client().request("POST", "/v1/tickets", {"title": "x"}, {"Idempotency-Key": "lr-op-1"})
        self.assertEqual(got.status, 201)
        self.assertEqual(got.json()["id"], "tkt_1")
        self.assertEqual(got.headers["idempotent-replayed"], "true")
        seen = self.provider.requests()[0]
        self.assertEqual(seen.headers["authorization"], "Bearer sk_test_a")
        self.assertEqual(seen.headers["idempotency-key"], "lr-op-1")

    def test_timeout_waiting_for_the_response(self) -> None:
        self.assertIn(f"timeout after {TIMEOUT_MS} ms while waiting for the response", self.lost(("stall",)))

    def test_connection_closed_without_a_response(self) -> None:
        self.assertIn("connection closed without a response", self.lost(("drop",)))

    def test_connection_reset(self) -> None:
        self.assertIn("connection reset", self.lost(("reset",)))

    def test_truncated_body(self) -> None:
        evidence = self.lost(("truncate", 201, obj(), 12))
        self.assertIn("truncated 201 response body (12 of ", evidence)

    def test_idle_after_headers_is_a_body_timeout(self) -> None:
        self.assertIn("timeout after 300 ms while reading the body of a 201 response", self.lost(("idle", 201)))

    def test_connection_refused(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        client = la.ProviderClient(la.parse_common(common(f"http://127.0.0.1:{port}")))
        with self.assertRaises(la.LostAnswer) as caught:
            client.request("GET", "/v1/tickets/tkt_1")
        self.assertIn("refused", caught.exception.evidence)


# --------------------------------------------------------------------------
# The calls, one process each, as the harness runs them
# --------------------------------------------------------------------------


class ExecuteTest(AdapterTest):
    def test_first_answer_is_the_claim_and_the_body_is_args_plus_reserved_fields(self) -> None:
        provider = self.serve(sequence(("json", 201, obj())))
        reply = self.call("execute", execute_request(provider.base_url))
        self.assertEqual(reply, {
            "operation_id": "op-1", "outcome": "succeeded", "provider_ref": "tkt_1",
            "needs_review": False, "evidence": reply["evidence"],
        })
        (post,) = provider.requests("POST")
        self.assertEqual(post.path, "/v1/tickets")
        self.assertEqual(post.headers["idempotency-key"], "lr-op-1")
        self.assertEqual(post.body, {"title": "Purchase review", "amount": 1200, "client_reference": "op-1", "metadata": {"operation_id": "op-1"}})

    def test_intent_is_durable_before_the_create_is_sent(self) -> None:
        seen_on_disk: list[dict[str, Any]] = []

        def respond(_seen: Seen) -> Action:
            seen_on_disk.append(self.record())
            return ("json", 201, obj())

        provider = self.serve(respond)
        self.call("execute", execute_request(provider.base_url))
        self.assertEqual(len(seen_on_disk), 1)
        intent = seen_on_disk[0]
        self.assertEqual((intent["outcome"], intent["key"], intent["client_reference"]), ("unknown", "lr-op-1", "op-1"))
        self.assertEqual(intent["first_sent_at"], "2026-01-01T00:00:00.000000Z")

    def test_lost_answer_is_replayed_once_with_the_same_key_and_body(self) -> None:
        for lost in (("drop",), ("reset",), ("stall",), ("truncate", 201, obj(), 5), ("json", 500, {})):
            with self.subTest(lost=lost[0]):
                self.new_state_dir()
                provider = self.serve(sequence(lost, ("json", 201, obj(), {"Idempotent-Replayed": "true"})))
                reply = self.call("execute", execute_request(provider.base_url))
                self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"), reply["evidence"])
                self.assertIn("retried with key lr-op-1", reply["evidence"])
                first, second = provider.requests("POST")
                self.assertEqual(first.headers["idempotency-key"], second.headers["idempotency-key"])
                self.assertEqual(first.body, second.body)

    def test_two_lost_answers_leave_an_honest_unknown(self) -> None:
        provider = self.serve(sequence(("drop",), ("reset",)))
        reply = self.call("execute", execute_request(provider.base_url))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False))
        self.assertIn("connection reset", reply["evidence"])
        self.assertEqual(len(provider.requests("POST")), 2)

    def test_without_keys_a_lost_answer_is_not_retried(self) -> None:
        provider = self.serve(sequence(("drop",)))
        reply = self.call("execute", execute_request(provider.base_url, mode="none"))
        self.assertEqual(reply["outcome"], "unknown")
        self.assertEqual(len(provider.requests()), 1)
        self.assertNotIn("idempotency-key", provider.requests()[0].headers)

    def test_rejection_is_a_failure_and_not_retried(self) -> None:
        provider = self.serve(sequence(("json", 429, {"error": {"type": "rate_limited"}}, {"Retry-After": "1"})))
        reply = self.call("execute", execute_request(provider.base_url))
        self.assertEqual(reply["outcome"], "failed")
        self.assertEqual(reply["evidence"], "rejected before execution: 429 rate_limited")
        self.assertEqual(len(provider.requests()), 1)

    def test_a_refused_retry_leaves_the_operation_unknown_for_the_next_reconcile(self) -> None:
        refusals = (("json", 429, {"error": {"type": "rate_limited"}}, {"Retry-After": "1"}),
                    ("json", 400, {"error": {"type": "invalid_request"}}), ("json", 401, {"error": {"type": "unauthorized"}}),
                    ("json", 404, {"error": {"type": "not_found"}}), ("json", 413, {"error": {"type": "too_large"}}))
        for refusal in refusals:
            for strategy in (None, "eager"):
                with self.subTest(status=refusal[1], strategy=strategy):
                    self.new_state_dir()
                    replayed = ("json", 201, obj(), {"Idempotent-Replayed": "true"})
                    provider = self.serve(sequence(("drop",), refusal, replayed))
                    reply = self.call("execute", execute_request(provider.base_url), strategy)
                    self.assertEqual(
                        (reply["outcome"], reply["provider_ref"], reply["needs_review"]), ("unknown", None, False),
                        reply["evidence"],
                    )
                    self.assertIn(
                        f"refused: {refusal[1]} {refusal[2]['error']['type']}: a refusal of a request sent again "
                        "says nothing about the earlier attempt",
                        reply["evidence"],
                    )
                    # The climb stops at the refusal: no second replay, no lookup.
                    self.assertEqual([s.method for s in provider.requests()], ["POST", "POST"])
                    # The earlier attempt committed: the next reconcile replays and learns it.
                    done = self.call("reconcile", op_request(provider.base_url), strategy)
                    self.assertEqual((done["outcome"], done["provider_ref"]), ("succeeded", "tkt_1"), done["evidence"])

    def test_key_mismatch_is_escalated_not_retried(self) -> None:
        provider = self.serve(sequence(("json", 400, {"error": {"type": "idempotency_error"}})))
        reply = self.call("execute", execute_request(provider.base_url))
        self.assertEqual((reply["outcome"], reply["needs_review"], reply["provider_ref"]), ("unknown", True, None))
        self.assertEqual(len(provider.requests()), 1)

    def test_execute_again_never_re_executes_a_terminal_operation(self) -> None:
        provider = self.serve(sequence(("json", 201, obj())))
        self.call("execute", execute_request(provider.base_url))
        again = self.call("execute", execute_request(provider.base_url))
        self.assertEqual((again["outcome"], again["provider_ref"]), ("succeeded", "tkt_1"))
        self.assertEqual(len(provider.requests()), 1)


    def test_key_in_flight_is_pending_and_stops_the_replays(self) -> None:
        for mode, in_use in (("stripe", STRIPE_IN_USE), ("ietf", ("json", 409, IETF_IN_USE, PROBLEM))):
            for strategy in (None, "eager"):
                with self.subTest(mode=mode, strategy=strategy):
                    self.new_state_dir()
                    provider = self.serve(sequence(("drop",), in_use))
                    reply = self.call("execute", execute_request(provider.base_url, mode=mode), strategy)
                    self.assertEqual(
                        (reply["outcome"], reply["provider_ref"], reply["needs_review"]), ("pending", None, False),
                        reply["evidence"],
                    )
                    self.assertIn("still processing the first request with key lr-op-1", reply["evidence"])
                    # No second replay, and no lookup: the provider has it.
                    self.assertEqual([s.method for s in provider.requests()], ["POST", "POST"])
                    self.assertEqual(self.record()["outcome"], "pending")

    def test_after_a_key_in_flight_a_later_reconcile_replays_again(self) -> None:
        provider = self.serve(sequence(("drop",), STRIPE_IN_USE, ("json", 201, obj(), {"Idempotent-Replayed": "true"})))
        self.assertEqual(self.call("execute", execute_request(provider.base_url))["outcome"], "pending")
        reply = self.call("reconcile", op_request(provider.base_url, now="2026-01-01T00:00:05Z"))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"), reply["evidence"])
        posts = provider.requests("POST")
        self.assertEqual(len(posts), 3)
        self.assertEqual({p.headers["idempotency-key"] for p in posts}, {"lr-op-1"})
        self.assertTrue(all(p.body == posts[0].body for p in posts))

    def test_a_key_past_its_retention_is_not_replayed_even_in_execute(self) -> None:
        # A provider that forgets keys at once: a "replay" would be new work.
        provider = self.serve(sequence(("drop",)))
        reply = self.call("execute", execute_request(provider.base_url, retention_s=0))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False))
        self.assertEqual(len(provider.requests()), 1)

    def test_every_strategy_keeps_the_invariants(self) -> None:
        for strategy in la.STRATEGIES:
            with self.subTest(strategy=strategy):
                self.new_state_dir()
                seen_on_disk: list[dict[str, Any]] = []

                def respond(_seen: Seen) -> Action:
                    seen_on_disk.append(self.record())
                    return ("json", 201, obj())

                provider = self.serve(respond)
                first = self.call("execute", execute_request(provider.base_url), strategy)
                self.assertEqual((first["outcome"], first["provider_ref"]), ("succeeded", "tkt_1"))
                # Intent on disk before the first send, with its one key.
                self.assertEqual(
                    (seen_on_disk[0]["outcome"], seen_on_disk[0]["key"]), ("unknown", "lr-op-1")
                )
                # A terminal record is the answer; nothing is sent again.
                again = self.call("execute", execute_request(provider.base_url), strategy)
                self.assertEqual(again, first)
                self.assertEqual(len(provider.requests()), 1)


class ReconcileTest(AdapterTest):
    def lose_first_create(self, **kw: Any) -> FakeProvider:
        """execute with every create lost (drop), leaving an unknown record."""
        self.answers: list[Action] = [("drop",)]
        if kw.get("mode", "stripe") != "none":
            self.answers.append(("drop",))

        def respond(_seen: Seen) -> Action:
            if not self.answers:
                return ("json", 599, {"error": {"type": "unexpected request in test"}})
            return self.answers.pop(0)

        provider = self.serve(respond)
        reply = self.call("execute", execute_request(provider.base_url, **kw))
        self.assertEqual(reply["outcome"], "unknown")
        with provider.journal_lock:
            provider.journal.clear()
        return provider

    def test_no_record(self) -> None:
        reply = self.call("reconcile", op_request("http://127.0.0.1:9"))
        self.assertEqual(reply["outcome"], "unknown")
        self.assertEqual(reply["evidence"], "no record of this operation in the store")

    def test_within_retention_replays_the_key(self) -> None:
        provider = self.lose_first_create()
        self.answers.append(("json", 201, obj(), {"Idempotent-Replayed": "true"}))
        reply = self.call("reconcile", op_request(provider.base_url, now="2026-01-01T23:59:59Z"))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"))
        (post,) = provider.requests()
        self.assertEqual((post.method, post.headers["idempotency-key"]), ("POST", "lr-op-1"))

    def test_a_refused_replay_is_not_a_failure_and_the_next_reconcile_replays_again(self) -> None:
        provider = self.lose_first_create()
        self.answers += [
            ("json", 429, {"error": {"type": "rate_limited"}}, {"Retry-After": "1"}),
            ("json", 201, obj(), {"Idempotent-Replayed": "true"}),
        ]
        refused = self.call("reconcile", op_request(provider.base_url, now="2026-01-01T00:01:00Z"))
        self.assertEqual((refused["outcome"], refused["needs_review"]), ("unknown", False), refused["evidence"])
        self.assertIn("refused: 429 rate_limited: a refusal of a request sent again", refused["evidence"])
        self.assertEqual(self.record()["inconclusive"], 1)
        done = self.call("reconcile", op_request(provider.base_url, now="2026-01-01T00:02:00Z"))
        self.assertEqual((done["outcome"], done["provider_ref"]), ("succeeded", "tkt_1"), done["evidence"])
        self.assertEqual([s.method for s in provider.requests()], ["POST", "POST"])

    def test_a_refused_replay_keeps_a_key_in_flight_pending(self) -> None:
        provider = self.serve(sequence(("drop",), STRIPE_IN_USE, ("json", 400, {"error": {"type": "invalid_request"}})))
        self.assertEqual(self.call("execute", execute_request(provider.base_url))["outcome"], "pending")
        reply = self.call("reconcile", op_request(provider.base_url, now="2026-01-01T00:00:05Z"))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("pending", False), reply["evidence"])
        self.assertIn("refused: 400 invalid_request", reply["evidence"])

    def test_a_refused_re_create_after_absence_proven_by_a_later_call_is_a_failure(self) -> None:
        # The lookup of a later call proves that nothing of ours committed, so
        # the re-create is the only attempt left in play: its refusal is final.
        provider = self.lose_first_create(mode="none")
        self.answers += [("json", 200, {"data": [], "has_more": False}), ("json", 400, {"error": {"type": "invalid_request"}})]
        reply = self.call("reconcile", op_request(provider.base_url, mode="none"))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("failed", None), reply["evidence"])
        self.assertIn("so the create never committed; re-created: rejected before execution: 400 invalid_request", reply["evidence"])

    def test_after_retention_looks_up_instead_of_replaying(self) -> None:
        provider = self.lose_first_create()
        self.answers.append(("json", 200, {"data": [obj()], "has_more": False}))
        reply = self.call("reconcile", op_request(provider.base_url, now="2026-01-02T01:00:00Z"))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"), reply["evidence"])
        (search,) = provider.requests()
        self.assertEqual((search.method, search.query), ("GET", {"client_reference": ["op-1"]}))

    def test_absence_proven_by_search_re_creates_once_with_the_same_key(self) -> None:
        provider = self.lose_first_create()
        self.answers += [("json", 200, {"data": [], "has_more": False}), ("json", 201, obj("tkt_2"))]
        reply = self.call("reconcile", op_request(provider.base_url, now="2026-01-02T01:00:00Z"))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_2"))
        search, post = provider.requests()
        self.assertEqual((search.method, post.method, post.headers["idempotency-key"]), ("GET", "POST", "lr-op-1"))

    def test_a_look_alike_from_another_actor_is_not_claimed(self) -> None:
        provider = self.lose_first_create(mode="none", client_reference=False)
        lookalike = obj("tkt_other", ref=None)
        self.answers += [("json", 200, {"data": [lookalike], "has_more": False}), ("json", 201, obj("tkt_ours"))]
        reply = self.call("reconcile", op_request(provider.base_url, mode="none", client_reference=False))
        self.assertEqual(reply["provider_ref"], "tkt_ours")
        listing, post = provider.requests()
        self.assertEqual(listing.query, {"created_gte": ["2025-12-31T23:59:00Z"], "limit": ["100"]})
        self.assertEqual(post.method, "POST")

    def test_list_recent_recognises_our_metadata(self) -> None:
        provider = self.lose_first_create(mode="none", client_reference=False)
        ours = obj("tkt_ours", ref=None, metadata={"operation_id": "op-1"})
        self.answers.append(("json", 200, {"data": [obj("tkt_other", ref=None), ours], "has_more": False}))
        reply = self.call("reconcile", op_request(provider.base_url, mode="none", client_reference=False))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_ours"))
        self.assertEqual(len(provider.requests()), 1)

    def test_a_partial_list_proves_nothing(self) -> None:
        provider = self.lose_first_create(mode="none", client_reference=False)
        self.answers.append(("json", 200, {"data": [obj("tkt_other", ref=None)], "has_more": True}))
        reply = self.call("reconcile", op_request(provider.base_url, mode="none", client_reference=False))
        self.assertEqual(reply["outcome"], "unknown")
        self.assertEqual(len(provider.requests("POST")), 0)

    def test_failing_lookups_invent_nothing_and_stop_after_five(self) -> None:
        kw = dict(mode="none", list_recent=False)
        provider = self.lose_first_create(**kw)
        self.answers += [
            ("json", 500, {}),
            ("stall",),
            ("truncate", 200, {"data": [], "has_more": False}, 3),
            ("json", 400, {"error": {"type": "unsupported_query"}}),
            ("json", 200, {"data": [], "has_more": True}),
        ]
        replies = [self.call("reconcile", op_request(provider.base_url, **kw)) for _ in range(5)]
        self.assertEqual([r["outcome"] for r in replies], ["unknown"] * 5)
        # A lookup that keeps failing is not the contract's absence of
        # lookups: only the safety net stops automation, at the fifth.
        self.assertEqual([r["needs_review"] for r in replies], [False] * 4 + [True])
        self.assertIn("5 reconciles in a row without evidence: automation stopped", replies[4]["evidence"])
        self.assertIn("unsupported_query", replies[3]["evidence"])
        # A sixth changes nothing, and the reason stays the same sentence.
        self.answers.append(("json", 503, {}))
        sixth = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((sixth["outcome"], sixth["needs_review"], sixth["evidence"]), ("unknown", True, replies[4]["evidence"]))
        self.assertEqual(len(provider.requests("POST")), 0)
        self.assertEqual(len(provider.requests("GET")), 6)

    def test_no_keys_and_no_lookup_escalates_without_a_request(self) -> None:
        kw = dict(mode="none", retrieve=False, client_reference=False, list_recent=False)
        provider = self.lose_first_create(**kw)
        reply = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", True))
        self.assertIn("no idempotency and no lookup", reply["evidence"])
        again = self.call("execute", execute_request(provider.base_url, **kw))
        self.assertEqual((again["outcome"], again["needs_review"]), ("unknown", True))
        self.assertEqual(provider.requests(), [])

    def test_pending_is_followed_by_retrieve_until_settled(self) -> None:
        provider = self.serve(sequence(
            ("json", 202, obj(status="processing")),
            ("json", 200, obj(status="processing")),
            ("stall",),
            ("json", 200, obj(status="failed")),
        ))
        self.assertEqual(self.call("execute", execute_request(provider.base_url))["outcome"], "pending")
        self.assertEqual(self.call("reconcile", op_request(provider.base_url))["outcome"], "pending")
        # A failed retrieve does not forget what we know: still pending.
        self.assertEqual(self.call("reconcile", op_request(provider.base_url))["outcome"], "pending")
        settled = self.call("reconcile", op_request(provider.base_url))
        self.assertEqual((settled["outcome"], settled["provider_ref"]), ("failed", "tkt_1"))
        self.assertEqual([s.path for s in provider.requests("GET")], ["/v1/tickets/tkt_1"] * 3)

    def test_two_racing_reconcilers_create_once(self) -> None:
        if not os.path.exists("/proc/locks"):
            self.skipTest("needs /proc/locks to see the second process wait on the lock")
        waiter_seen = threading.Event()
        script: list[Action] = [("drop",)]
        lock_path = os.path.join(self.state_dir, "ops", "op-1.lock")

        def respond(seen: Seen) -> Action:
            if script:
                return script.pop(0)
            if seen.method == "GET":
                # Hold the first search until the kernel shows another process
                # blocked on this operation's lock (bounded), so the test only
                # passes if the lock, not luck, kept the second one out.
                inode = os.stat(lock_path).st_ino
                deadline = time.monotonic() + RELEASE_WAIT_S
                while time.monotonic() < deadline and not waiter_seen.is_set():
                    if lock_waiter_on(inode):
                        waiter_seen.set()
                    else:
                        time.sleep(0.01)
                return ("json", 200, {"data": [], "has_more": False})
            return ("json", 201, obj("tkt_once"))

        provider = self.serve(respond)
        kw = dict(mode="none", list_recent=False, timeout_ms=15000)
        self.call("execute", execute_request(provider.base_url, **kw))
        procs = [start_call("reconcile", op_request(provider.base_url, **kw), self.state_dir) for _ in range(2)]
        replies = [finish_call(p) for p in procs]
        self.assertTrue(waiter_seen.is_set(), "the second reconciler never waited on the lock")
        for rc, reply, err in replies:
            self.assertEqual(rc, 0, err)
            self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_once"))
        self.assertEqual(len(provider.requests("POST")), 2)  # the lost one and the re-create
        self.assertEqual(len(provider.requests("GET")), 1)

    def test_a_refused_lookup_is_never_absence(self) -> None:
        kw = dict(mode="none", list_recent=False)
        provider = self.lose_first_create(**kw)
        self.answers.append(("json", 400, {"error": {"type": "unsupported_query", "message": "disabled"}}))
        reply = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False))
        self.assertIn("400 unsupported_query", reply["evidence"])
        self.assertEqual(len(provider.requests("POST")), 0)

    def test_a_search_that_proves_nothing_falls_back_to_the_list(self) -> None:
        kw = dict(mode="none")
        provider = self.lose_first_create(**kw)
        self.answers += [
            ("json", 400, {"error": {"type": "unsupported_query"}}),
            ("json", 200, {"data": [obj("tkt_ours", ref=None, metadata={"operation_id": "op-1"})], "has_more": False}),
        ]
        reply = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_ours"), reply["evidence"])
        self.assertEqual(len(provider.requests("POST")), 0)

    def test_a_retrieve_404_is_absence_of_that_id_only(self) -> None:
        provider = self.serve(sequence(
            ("json", 202, obj(status="processing")),
            ("json", 404, {"error": {"type": "not_found"}}),
            ("json", 200, obj()),
        ))
        self.call("execute", execute_request(provider.base_url))
        reply = self.call("reconcile", op_request(provider.base_url))
        # The provider named tkt_1 for this operation: its 404 contradicts
        # that, proves nothing about the operation, and never re-creates.
        self.assertEqual((reply["outcome"], reply["provider_ref"], reply["needs_review"]), ("pending", "tkt_1", True))
        self.assertIn("answered 404", reply["evidence"])
        self.assertEqual(len(provider.requests("POST")), 1)
        settled = self.call("reconcile", op_request(provider.base_url))
        self.assertEqual((settled["outcome"], settled["needs_review"]), ("succeeded", False))

    def test_a_disabled_retrieve_is_never_called_and_the_known_object_is_kept(self) -> None:
        kw = dict(retrieve=False, list_recent=False)
        provider = self.serve(sequence(
            ("json", 202, obj(status="processing")),
            ("json", 200, {"data": [obj("tkt_other"), obj(status="processing")], "has_more": False}),
            ("json", 200, {"data": [obj("tkt_other")], "has_more": False}),
        ))
        self.call("execute", execute_request(provider.base_url, **kw))
        reply = self.call("reconcile", op_request(provider.base_url, **kw))
        # Another object carrying our reference does not replace the one we hold.
        self.assertEqual((reply["outcome"], reply["provider_ref"], reply["needs_review"]), ("pending", "tkt_1", False), reply["evidence"])
        # A complete answer without the object the provider named for us is
        # the same contradiction as a retrieve's 404: a person, no re-create.
        gone = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((gone["outcome"], gone["provider_ref"], gone["needs_review"]), ("pending", "tkt_1", True), gone["evidence"])
        self.assertIn("found no object tkt_1", gone["evidence"])
        searches = provider.requests("GET")
        self.assertEqual([(s.path, s.query) for s in searches], [("/v1/tickets", {"client_reference": ["op-1"]})] * 2)
        self.assertEqual(len(provider.requests("POST")), 1)


def lock_waiter_on(inode: int) -> bool:
    """True when /proc/locks lists a process blocked ("->") on this inode."""
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            if "->" in fields and fields[fields.index("->") + 5].endswith(f":{inode}"):
                return True
    return False


def delivery(event_id: str, event_type: str, data: dict[str, Any], signed_with: str = VECTOR_SECRET, **kw: Any) -> dict[str, Any]:
    """A webhook request as the harness sends it: the provider's contract
    secret is VECTOR_SECRET; ``signed_with`` another secret makes a forgery."""
    body = json.dumps({"id": event_id, "type": event_type, "created_at": NOW, "data": data})
    ts = str(int(la.parse_time(NOW).timestamp()))
    return {
        "headers": {
            "webhook-id": event_id,
            "webhook-timestamp": ts,
            "webhook-signature": la.sign_webhook(signed_with, event_id, ts, body),
        },
        "body": body,
        **common("http://127.0.0.1:9", **{"webhooks": VECTOR_SECRET, **kw}),
    }


class WebhookCallTest(AdapterTest):

    def unknown_op(self) -> None:
        provider = self.serve(sequence(("drop",), ("drop",)))
        self.call("execute", execute_request(provider.base_url))

    def test_forged_rejected_real_applied_duplicate_ignored_late_event_no_regression(self) -> None:
        self.unknown_op()
        before = self.record()
        forged = self.call("webhook", delivery("evt_1", "tickets.created", obj(status="processing"), signed_with=OTHER_SECRET))
        self.assertEqual(forged, {"accepted": False, "operation_id": None})
        self.assertEqual(self.record(), before)

        created = delivery("evt_1", "tickets.created", obj(status="processing"))
        self.assertEqual(self.call("webhook", created), {"accepted": True, "operation_id": "op-1"})
        self.assertEqual(self.call("status", op_request("http://127.0.0.1:9"))["outcome"], "pending")

        settled = delivery("evt_2", "tickets.succeeded", obj(status="succeeded"))
        self.assertEqual(self.call("webhook", settled)["accepted"], True)
        done = self.call("status", op_request("http://127.0.0.1:9"))
        self.assertEqual((done["outcome"], done["provider_ref"]), ("succeeded", "tkt_1"))

        # The first event again, signed afresh: deduplicated, and in any case
        # a "processing" snapshot must not pull a settled operation back.
        self.assertEqual(self.call("webhook", created)["accepted"], True)
        self.assertEqual(self.call("status", op_request("http://127.0.0.1:9"))["outcome"], "succeeded")
        late = delivery("evt_3", "tickets.created", obj(status="processing"))
        self.assertEqual(self.call("webhook", late)["accepted"], True)
        self.assertEqual(self.call("status", op_request("http://127.0.0.1:9"))["outcome"], "succeeded")
        self.assertEqual(self.record()["events_seen"], ["evt_1", "evt_2", "evt_3"])

    def test_stale_delivery_and_no_webhook_contract_are_rejected(self) -> None:
        self.unknown_op()
        stale = delivery("evt_1", "tickets.created", obj())
        stale["now"] = "2026-01-01T00:05:01Z"
        self.assertEqual(self.call("webhook", stale)["accepted"], False)
        no_contract = delivery("evt_1", "tickets.created", obj())
        no_contract["provider"]["contract"]["webhooks"] = None
        self.assertEqual(self.call("webhook", no_contract)["accepted"], False)
        self.assertEqual(self.record()["outcome"], "unknown")

    def test_event_for_an_unknown_operation_is_accepted_without_effect(self) -> None:
        reply = self.call("webhook", delivery("evt_9", "tickets.created", obj(ref="op-elsewhere")))
        self.assertEqual(reply, {"accepted": True, "operation_id": None})


    def test_unknown_operations_leave_no_trace_and_other_resources_prove_nothing(self) -> None:
        self.call("webhook", delivery("evt_8", "tickets.created", obj(ref="op-elsewhere")))
        self.assertFalse(os.path.exists(os.path.join(self.state_dir, "ops", "op-elsewhere.lock")))
        self.unknown_op()
        other = self.call("webhook", delivery("evt_9", "refunds.succeeded", obj("rfd_1")))
        self.assertEqual(other, {"accepted": True, "operation_id": "op-1"})
        self.assertEqual(self.record()["outcome"], "unknown")
        # A foreign client_reference does not hide our operation id.
        ours = obj(status="processing", client_reference="order-77", metadata={"operation_id": "op-1"})
        self.assertEqual(self.call("webhook", delivery("evt_10", "tickets.created", ours))["operation_id"], "op-1")
        self.assertEqual(self.record()["outcome"], "pending")


def lock_is_held(state_dir: str, op_id: str = "op-1") -> bool:
    """True when some process holds the operation's flock right now."""
    fd = os.open(os.path.join(state_dir, "ops", f"{op_id}.lock"), os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class StrategyTest(AdapterTest):
    """``--strategy eager|lazy`` (and the default, ``replay-once``): how much
    execute does after an ambiguous answer."""

    def test_command_line(self) -> None:
        self.assertEqual(la.parse_argv(["status"]), ("replay-once", "status"))
        self.assertEqual(la.parse_argv(["--strategy", "eager", "execute"]), ("eager", "execute"))
        self.assertEqual(la.parse_argv(["--strategy=lazy", "reconcile"]), ("lazy", "reconcile"))
        for bad in (["--strategy", "bold", "execute"], ["--strategy", "execute"], ["execute", "--strategy", "eager"], []):
            with self.subTest(argv=bad):
                self.assertIsNone(la.parse_argv(bad))
        rc, reply, err = run_call("status", op_request("http://127.0.0.1:9"), self.state_dir, strategy="bold")
        self.assertEqual((rc, reply), (2, None))
        self.assertIn("[--strategy replay-once|eager|lazy] <execute|", err)
        self.assertEqual(self.call("status", op_request("http://127.0.0.1:9"), "lazy")["outcome"], "unknown")

    def test_lazy_sends_once_and_leaves_the_rest_to_reconcile(self) -> None:
        provider = self.serve(sequence(("drop",), ("json", 201, obj(), {"Idempotent-Replayed": "true"})))
        reply = self.call("execute", execute_request(provider.base_url), "lazy")
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False))
        self.assertIn("connection closed without a response", reply["evidence"])
        self.assertEqual(len(provider.requests()), 1)
        done = self.call("reconcile", op_request(provider.base_url), "lazy")
        self.assertEqual((done["outcome"], done["provider_ref"]), ("succeeded", "tkt_1"))
        first, replay = provider.requests("POST")
        self.assertEqual((first.headers["idempotency-key"], first.body), (replay.headers["idempotency-key"], replay.body))

    def test_eager_replays_twice_with_the_same_key_and_body(self) -> None:
        provider = self.serve(sequence(("drop",), ("reset",), ("json", 201, obj(), {"Idempotent-Replayed": "true"})))
        reply = self.call("execute", execute_request(provider.base_url), "eager")
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"), reply["evidence"])
        self.assertIn("replay 2 with key lr-op-1", reply["evidence"])
        posts = provider.requests("POST")
        self.assertEqual(len(posts), 3)
        self.assertEqual({p.headers["idempotency-key"] for p in posts}, {"lr-op-1"})
        self.assertTrue(all(p.body == posts[0].body for p in posts))
        self.assertEqual(provider.requests("GET"), [])

    def test_eager_then_looks_up_and_adopts_ours(self) -> None:
        provider = self.serve(sequence(("drop",), ("drop",), ("drop",), ("json", 200, {"data": [obj()], "has_more": False})))
        reply = self.call("execute", execute_request(provider.base_url), "eager")
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"), reply["evidence"])
        self.assertIn("search by client_reference op-1 found ours", reply["evidence"])
        self.assertEqual([s.method for s in provider.requests()], ["POST", "POST", "POST", "GET"])

    def test_eager_replays_on_absence_seen_in_the_same_call_with_the_same_key_holding_the_lock(self) -> None:
        held: list[bool] = []
        script: list[Action] = [("drop",), ("drop",), ("drop",)]

        def respond(seen: Seen) -> Action:
            if script:
                return script.pop(0)
            held.append(lock_is_held(self.state_dir))
            if seen.method == "GET":
                return ("json", 200, {"data": [], "has_more": False})
            return ("json", 201, obj("tkt_2"))

        provider = self.serve(respond)
        reply = self.call("execute", execute_request(provider.base_url), "eager")
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_2"), reply["evidence"])
        # An absence seen in the call whose create was lost proves nothing
        # about that create: the resend is a replay the provider
        # deduplicates, and the evidence says so.
        self.assertIn(
            "found no object of ours, but our lost create may still be running; replayed with key lr-op-1",
            reply["evidence"],
        )
        self.assertNotIn("never committed", reply["evidence"])
        self.assertEqual(held, [True, True], "the lock must be held while execute climbs the ladder")
        posts = provider.requests("POST")
        self.assertEqual(len(posts), 4)
        self.assertEqual({p.headers["idempotency-key"] for p in posts}, {"lr-op-1"})

    def test_eager_without_keys_adopts_but_never_re_creates_in_the_same_call(self) -> None:
        provider = self.serve(sequence(("drop",), ("json", 200, {"data": [], "has_more": False})))
        reply = self.call("execute", execute_request(provider.base_url, mode="none"), "eager")
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False), reply["evidence"])
        self.assertIn("not re-created in this call", reply["evidence"])
        self.assertEqual([s.method for s in provider.requests()], ["POST", "GET"])

        self.new_state_dir()
        provider = self.serve(sequence(("drop",), ("json", 503, {}), ("json", 200, {"data": [obj()], "has_more": False})))
        reply = self.call("execute", execute_request(provider.base_url, mode="none"), "eager")
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("succeeded", "tkt_1"), reply["evidence"])
        # The search proved nothing, so the list (the next lookup offered) was asked.
        self.assertIn("search by client_reference op-1 proved nothing", reply["evidence"])
        search, listing = provider.requests("GET")
        self.assertEqual((search.query.keys(), listing.query.keys()), ({"client_reference"}, {"created_gte", "limit"}))

    def test_eager_with_an_expired_key_never_re_creates_in_the_same_call(self) -> None:
        # A provider that forgets keys at once: a resend would be new work,
        # and the lost create may still commit after the search.
        empty = ("json", 200, {"data": [], "has_more": False})
        provider = self.serve(sequence(("drop",), empty, empty, ("json", 201, obj("tkt_2"))))
        reply = self.call("execute", execute_request(provider.base_url, retention_s=0), "eager")
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False), reply["evidence"])
        self.assertIn("not re-created in this call", reply["evidence"])
        self.assertEqual([s.method for s in provider.requests()], ["POST", "GET"])
        # A later call's lookup is proof: that reconcile re-creates once.
        later = self.call("reconcile", op_request(provider.base_url, retention_s=0), "eager")
        self.assertEqual((later["outcome"], later["provider_ref"]), ("succeeded", "tkt_2"), later["evidence"])
        self.assertEqual([s.method for s in provider.requests()], ["POST", "GET", "GET", "POST"])

    def test_eager_a_refused_replay_after_a_same_call_absence_leaves_unknown(self) -> None:
        lost: list[Action] = [("drop",)] * 3
        empty = ("json", 200, {"data": [], "has_more": False})
        provider = self.serve(sequence(*lost, empty, ("json", 404, {"error": {"type": "not_found"}})))
        reply = self.call("execute", execute_request(provider.base_url), "eager")
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False), reply["evidence"])
        self.assertIn("replayed with key lr-op-1, which the provider deduplicates against it: refused: 404", reply["evidence"])

    def test_eager_with_nothing_left_to_try_asks_a_person_at_once(self) -> None:
        kw = dict(mode="none", retrieve=False, client_reference=False, list_recent=False)
        provider = self.serve(sequence(("drop",)))
        reply = self.call("execute", execute_request(provider.base_url, **kw), "eager")
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", True))
        self.assertEqual(len(provider.requests()), 1)


class EscalationTest(AdapterTest):
    """needs_review follows the situation (no rung of the ladder left), with a
    count of failed reconciles only as a safety net."""

    def test_no_keys_and_no_lookup_escalates_in_execute_whatever_the_strategy(self) -> None:
        kw = dict(mode="none", retrieve=False, client_reference=False, list_recent=False)
        for strategy in la.STRATEGIES:
            with self.subTest(strategy=strategy):
                self.new_state_dir()
                provider = self.serve(sequence(("drop",)))
                reply = self.call("execute", execute_request(provider.base_url, **kw), strategy)
                self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", True))
                self.assertIn("no idempotency and no lookup", reply["evidence"])
                self.assertEqual(len(provider.requests()), 1)

    def test_retrieve_without_a_known_id_is_no_lookup(self) -> None:
        kw = dict(mode="none", retrieve=True, client_reference=False, list_recent=False)
        provider = self.serve(sequence(("drop",)))
        reply = self.call("execute", execute_request(provider.base_url, **kw))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", True))
        self.assertIn("no lookup that works without an object id", reply["evidence"])
        again = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((again["outcome"], again["needs_review"]), ("unknown", True))
        self.assertEqual(len(provider.requests()), 1)

    def test_a_known_object_is_followed_with_retrieve_not_escalated(self) -> None:
        kw = dict(mode="none", retrieve=True, client_reference=False, list_recent=False)
        provider = self.serve(sequence(("json", 202, obj(status="processing")), ("json", 200, obj())))
        reply = self.call("execute", execute_request(provider.base_url, **kw))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("pending", False))
        done = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((done["outcome"], done["provider_ref"]), ("succeeded", "tkt_1"))

    def test_a_known_object_nothing_can_follow_is_escalated_and_stays_pending(self) -> None:
        kw = dict(retrieve=False, client_reference=False, list_recent=False, webhooks=VECTOR_SECRET)
        provider = self.serve(sequence(("json", 202, obj(status="processing"))))
        reply = self.call("execute", execute_request(provider.base_url, **kw))
        # A replay would only repeat the saved 202: it is no rung for a known object.
        self.assertEqual((reply["outcome"], reply["provider_ref"], reply["needs_review"]), ("pending", "tkt_1", True))
        self.assertIn("no lookup to follow it", reply["evidence"])
        again = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertEqual((again["outcome"], again["provider_ref"], again["needs_review"]), ("pending", "tkt_1", True))
        self.assertEqual(len(provider.requests()), 1)
        # Evidence still arrives by webhook, and ends the review.
        self.call("webhook", delivery("evt_1", "tickets.succeeded", obj(), **kw))
        done = self.call("status", op_request(provider.base_url, **kw))
        self.assertEqual((done["outcome"], done["needs_review"]), ("succeeded", False))

    def test_key_retention_counts_from_the_first_send_by_the_request_clock(self) -> None:
        kw = dict(retention_s=3600, retrieve=False, client_reference=False, list_recent=False)
        provider = self.serve(sequence(("drop",), ("drop",), ("drop",)))
        # Far from the machine's clock, on purpose: only `now` may count.
        start = "2031-06-01T10:00:00Z"
        reply = self.call("execute", execute_request(provider.base_url, now=start, **kw))
        self.assertEqual((reply["outcome"], reply["needs_review"]), ("unknown", False))
        # One second before retention ends: the key is still a rung.
        almost = self.call("reconcile", op_request(provider.base_url, now="2031-06-01T10:59:59Z", **kw))
        self.assertEqual((almost["outcome"], almost["needs_review"]), ("unknown", False), almost["evidence"])
        self.assertEqual(len(provider.requests("POST")), 3)
        # Replays did not move the start of retention.
        self.assertEqual(self.record()["first_sent_at"], "2031-06-01T10:00:00.000000Z")
        expired = self.call("reconcile", op_request(provider.base_url, now="2031-06-01T11:00:00Z", **kw))
        self.assertEqual((expired["outcome"], expired["needs_review"]), ("unknown", True))
        self.assertIn("our idempotency key is past its retention and no lookup", expired["evidence"])
        self.assertEqual(len(provider.requests()), 3)

    def test_pending_is_also_caught_by_the_safety_net_and_evidence_ends_it(self) -> None:
        provider = self.serve(sequence(
            ("json", 202, obj(status="processing")),
            *[("json", 503, {})] * 5,
            ("json", 200, obj(status="processing")),
        ))
        self.call("execute", execute_request(provider.base_url))
        replies = [self.call("reconcile", op_request(provider.base_url)) for _ in range(5)]
        self.assertEqual({r["outcome"] for r in replies}, {"pending"})
        self.assertEqual([r["needs_review"] for r in replies], [False] * 4 + [True])
        fresh = self.call("reconcile", op_request(provider.base_url))
        self.assertEqual((fresh["outcome"], fresh["needs_review"]), ("pending", False))
        self.assertEqual(self.record()["inconclusive"], 0)

    def test_an_answer_that_proves_nothing_never_takes_back_a_review(self) -> None:
        provider = self.serve(sequence(("json", 400, {"error": {"type": "idempotency_error"}}), ("drop",)))
        first = self.call("execute", execute_request(provider.base_url))
        self.assertEqual((first["outcome"], first["needs_review"]), ("unknown", True))
        again = self.call("reconcile", op_request(provider.base_url))
        self.assertEqual((again["outcome"], again["needs_review"]), ("unknown", True), again["evidence"])
        # ...and the evidence still says why a person was asked.
        self.assertEqual(again["evidence"], first["evidence"])



class ResolveAndStatusTest(AdapterTest):
    def test_resolution_is_final_and_later_events_and_retries_change_nothing(self) -> None:
        provider = self.serve(sequence(("drop",)))
        kw = dict(mode="none", retrieve=False, client_reference=False, list_recent=False, webhooks=VECTOR_SECRET)
        self.call("execute", execute_request(provider.base_url, **kw))
        review = self.call("reconcile", op_request(provider.base_url, **kw))
        self.assertTrue(review["needs_review"])
        resolution = {"outcome": "succeeded", "provider_ref": "tkt_9", "evidence": "found in the dashboard", "by": "operator"}
        resolved = self.call("resolve", {"operation_id": "op-1", "resolution": resolution, **common(provider.base_url, **kw)})
        self.assertEqual(resolved, {"operation_id": "op-1", "outcome": "succeeded", "provider_ref": "tkt_9", "needs_review": False, "evidence": "operator: found in the dashboard"})
        late = delivery("evt_1", "tickets.created", obj("tkt_9", status="processing"), **kw)
        self.assertEqual(self.call("webhook", late)["accepted"], True)
        self.assertEqual(self.call("execute", execute_request(provider.base_url, **kw))["outcome"], "succeeded")
        other = dict(resolution, outcome="failed", provider_ref=None)
        ignored = self.call("resolve", {"operation_id": "op-1", "resolution": other, **common(provider.base_url, **kw)})
        self.assertEqual((ignored["outcome"], ignored["provider_ref"]), ("succeeded", "tkt_9"))
        self.assertIn("resolution ignored", ignored["evidence"])
        self.assertEqual(len(provider.requests()), 1)

    def test_status_reads_without_sending_anything(self) -> None:
        provider = self.serve(sequence(("json", 202, obj(status="processing"))))
        self.call("execute", execute_request(provider.base_url))
        provider.journal.clear()
        reply = self.call("status", op_request(provider.base_url))
        self.assertEqual((reply["outcome"], reply["provider_ref"]), ("pending", "tkt_1"))
        missing = self.call("status", op_request(provider.base_url, op_id="op-2"))
        self.assertEqual((missing["outcome"], missing["evidence"]), ("unknown", "no record of this operation in the store"))
        self.assertEqual(provider.requests(), [])


class ContradictionTest(AdapterTest):
    """A resolution is final; a genuine event that contradicts it later keeps
    the outcome and the object, and asks a person to look again."""

    KW = dict(mode="none", retrieve=False, client_reference=False, list_recent=False, webhooks=VECTOR_SECRET)

    def resolved(self, outcome: str, provider_ref: str | None) -> None:
        """A fresh operation in review, then resolved by an operator."""
        self.new_state_dir()
        la.Store(self.state_dir).save(la.Record(
            operation=dict(OPERATION), key="lr-op-1", client_reference="op-1",
            first_sent_at="2026-01-01T00:00:00.000000Z", needs_review=True, evidence="a person must check",
        ))
        resolution = {"outcome": outcome, "provider_ref": provider_ref, "evidence": "checked", "by": "operator"}
        reply = self.call("resolve", {"operation_id": "op-1", "resolution": resolution, **common("http://127.0.0.1:9", **self.KW)})
        self.assertEqual((reply["outcome"], reply["provider_ref"], reply["needs_review"]), (outcome, provider_ref, False))
        self.assertTrue(self.record()["resolved_by_person"])

    def deliver(self, event_id: str, event_type: str, oid: str, status: str) -> dict[str, Any]:
        reply = self.call("webhook", delivery(event_id, event_type, obj(oid, status=status), **self.KW))
        self.assertEqual(reply, {"accepted": True, "operation_id": "op-1"})
        return self.call("status", op_request("http://127.0.0.1:9", **self.KW))

    def test_an_event_that_contradicts_the_decision_raises_it_for_review_again(self) -> None:
        cases = (
            ("failed", None, "tickets.created", "tkt_1", "processing"),
            ("failed", None, "tickets.succeeded", "tkt_1", "succeeded"),
            ("succeeded", "tkt_9", "tickets.created", "tkt_2", "processing"),
            ("succeeded", "tkt_9", "tickets.failed", "tkt_9", "failed"),
            ("succeeded", None, "tickets.failed", "tkt_1", "failed"),
        )
        for outcome, ref, event_type, oid, status in cases:
            with self.subTest(decision=(outcome, ref), event=(event_type, oid)):
                self.resolved(outcome, ref)
                after = self.deliver("evt_1", event_type, oid, status)
                # Outcome and object as the person decided; automation stops.
                self.assertEqual((after["outcome"], after["provider_ref"], after["needs_review"]), (outcome, ref, True))
                self.assertIn(f"operator: checked; contradicted by event evt_1 ({event_type})", after["evidence"])
                # Nothing later takes the review back or moves the outcome.
                again = self.call("reconcile", op_request("http://127.0.0.1:9", **self.KW))
                self.assertEqual((again["outcome"], again["provider_ref"], again["needs_review"]), (outcome, ref, True))

    def test_an_event_that_agrees_with_the_decision_changes_nothing(self) -> None:
        cases = (
            ("failed", None, "tickets.failed", "tkt_1", "failed"),
            ("succeeded", "tkt_9", "tickets.created", "tkt_9", "processing"),
            ("succeeded", "tkt_9", "tickets.succeeded", "tkt_9", "succeeded"),
            ("succeeded", "tkt_9", "tickets.failed", "tkt_2", "failed"),
            ("succeeded", None, "tickets.succeeded", "tkt_1", "succeeded"),
        )
        for outcome, ref, event_type, oid, status in cases:
            with self.subTest(decision=(outcome, ref), event=(event_type, oid)):
                self.resolved(outcome, ref)
                after = self.deliver("evt_1", event_type, oid, status)
                self.assertEqual(after, {
                    "operation_id": "op-1", "outcome": outcome, "provider_ref": ref, "needs_review": False,
                    "evidence": "operator: checked",
                })

    def test_an_outcome_reached_by_evidence_is_not_an_operator_decision(self) -> None:
        provider = self.serve(sequence(("json", 201, obj())))
        kw = dict(self.KW, mode="stripe")
        self.call("execute", execute_request(provider.base_url, **kw))
        self.assertFalse(self.record()["resolved_by_person"])
        self.call("webhook", delivery("evt_1", "tickets.failed", obj(status="failed"), **kw))
        after = self.call("status", op_request(provider.base_url, **kw))
        self.assertEqual((after["outcome"], after["provider_ref"], after["needs_review"]), ("succeeded", "tkt_1", False))


class ProtocolMisuseTest(AdapterTest):
    def test_bad_call_name_and_bad_stdin_exit_non_zero(self) -> None:
        for call, raw in (("launch", b"{}"), ("status", b"[1, 2]"), ("status", b"not json"), ("status", b'{"protocol": 2}')):
            with self.subTest(call=call, raw=raw):
                rc, reply, err = run_call(call, None, self.state_dir, raw=raw)
                self.assertNotEqual(rc, 0)
                self.assertIsNone(reply)
                self.assertIn("lostreply_adapter:", err)

    def test_undecidable_requests_are_unknown_not_errors(self) -> None:
        traversal = self.call("status", op_request("http://127.0.0.1:9", op_id="../../etc/passwd"))
        self.assertEqual(traversal["outcome"], "unknown")
        self.assertIn("not a valid id", traversal["evidence"])
        no_now = op_request("http://127.0.0.1:9")
        del no_now["now"]
        reply = self.call("reconcile", no_now)
        self.assertEqual(reply["outcome"], "unknown")
        self.assertIn("request lacks now", reply["evidence"])
        # Nothing was written anywhere: not for the refused id, and status
        # (read-only) did not even create the store's directory.
        self.assertEqual(os.listdir(self.state_dir), [])


def run_serve(lines: list[bytes], state_dir: str, strategy: str | None = None) -> tuple[int, list[Any], str]:
    """Runs ``serve`` over the given lines (the persistent form), then end of file."""
    env = dict(os.environ, LOSTREPLY_STATE_DIR=state_dir, LOSTREPLY_PROTOCOL="1")
    options = ["--strategy", strategy] if strategy is not None else []
    proc = subprocess.run(
        [sys.executable, ADAPTER, *options, "serve"],
        input=b"".join(lines),
        capture_output=True,
        env=env,
        timeout=30,
    )
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    return proc.returncode, replies, proc.stderr.decode()


def serve_line(call: str, request: dict[str, Any]) -> bytes:
    return (json.dumps({"call": call, "request": request}) + "\n").encode()


class ServeTest(AdapterTest):
    """The persistent form: the same replies, one line each, from one process."""

    def test_several_calls_in_one_process_answer_as_separate_processes_would(self) -> None:
        provider = self.serve(sequence(("json", 201, obj())))
        resolution = {"outcome": "failed", "provider_ref": None, "evidence": "looked", "by": "operator"}
        rc, replies, err = run_serve([
            serve_line("execute", execute_request(provider.base_url)),
            b"\n",  # blank lines are skipped
            serve_line("status", op_request(provider.base_url)),
            serve_line("resolve", {**op_request(provider.base_url, op_id="op-2"), "resolution": resolution}),
            serve_line("status", op_request(provider.base_url, op_id="op-2")),
        ], self.state_dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(replies), 4, replies)
        execute, status, resolve, unknown = replies
        self.assertEqual((execute["outcome"], execute["provider_ref"]), ("succeeded", "tkt_1"))
        self.assertEqual(status, {**execute, "evidence": status["evidence"]})
        self.assertEqual((resolve["outcome"], unknown["outcome"]), ("unknown", "unknown"))
        # The store is the only memory: a per-call process reads the same record.
        self.assertEqual(self.call("status", op_request(provider.base_url)), status)
        self.assertEqual(len(provider.requests("POST")), 1)

    def test_a_bad_line_is_misuse_exit_2_after_the_earlier_answers(self) -> None:
        for bad in (b"not json\n", b"[1, 2]\n", b'{"call": "launch", "request": {}}\n',
                    b'{"call": "status"}\n', serve_line("status", {"protocol": 2, "operation_id": "op-1"})):
            with self.subTest(bad=bad):
                rc, replies, err = run_serve([
                    serve_line("status", op_request("http://127.0.0.1:9")),
                    bad,
                    serve_line("status", op_request("http://127.0.0.1:9")),
                ], self.state_dir)
                self.assertEqual(rc, 2)
                self.assertEqual([r["outcome"] for r in replies], ["unknown"])
                self.assertIn("lostreply_adapter:", err)

    def test_end_of_file_at_once_is_a_clean_exit(self) -> None:
        rc, replies, err = run_serve([], self.state_dir)
        self.assertEqual((rc, replies), (0, []), err)


if __name__ == "__main__":
    unittest.main()
