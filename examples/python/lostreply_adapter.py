#!/usr/bin/env python3
"""A correct lostreply adapter in Python, speaking the adapter protocol v1.

Usage::

    python3 lostreply_adapter.py [--strategy replay-once|eager|lazy] \
        <execute|reconcile|webhook|resolve|status>

with one JSON object on stdin; one JSON object is written to stdout. The
harness appends the call name, so a strategy is chosen in the adapter command
line: ``--adapter 'python3 lostreply_adapter.py --strategy eager'``.

It also speaks the persistent form (``lostreply run --adapter ... --persistent``)::

    python3 lostreply_adapter.py [--strategy ...] serve

reads ``{"call": "execute", "request": {...}}`` one per line until end of
file and answers each with one line, the reply the per-call form would print.
Nothing is kept in memory from one call to the next: every call opens the
store afresh, exactly as a new process would.

This is the Python twin of the Rust reference adapter: both implement the
algorithm of docs/writing-an-adapter.md ("the reference algorithm"). This one
already follows the contract points being clarified in the docs (a key "in
flight" is ``pending``; a refused lookup is never absence; escalation by
situation, with a count of five only as a safety net), so until the Rust
adapter and the docs catch up the two differ there. It uses only the standard
library so that it runs anywhere Python 3.11 does, and so that every line of
its behaviour is here to read.

The strategy decides only how much ``execute`` does after an ambiguous answer
to its first create (a timeout, a reset, a 5xx...); everything else (intent
before the first send, one key per operation, the same body on every attempt,
the per-operation lock for the whole call, webhook verification and dedupe,
terminal records never regressing, ``status`` read-only) is the same in all
three:

* ``replay-once`` (the default): one immediate replay under the same key when
  the provider documents keys and still retains ours; no lookups. Everything
  else is left to ``reconcile``.
* ``eager``: climbs the whole ladder at once: up to two same-key replays while
  the key is retained, then the lookups the contract offers (search by
  reference, then list recent), re-creating only on proven absence. Fewer
  operations are left ``unknown`` after ``execute``, at the price of more
  requests inside it.
* ``lazy``: sends the create once and answers ``unknown`` on any ambiguous
  answer; ``reconcile`` does all the finding out. The cheapest ``execute``,
  and the one that leaves the most to the reconciler.

The shape of the file follows the shape of the problem:

* ``Store``: the durable record of each operation. Intent is written *before*
  the create is sent, so that a crash after the provider committed leaves
  behind the key and reference that let a later process find the effect.
* ``ProviderClient``: one HTTP request with one deadline, and a precise name
  for every way the answer can be lost (timeout, reset, closed, truncated,
  unparsable), because "what exactly did we see" is the evidence.
* classification: turns an HTTP answer into a claim. Only a definite answer
  is ``succeeded``/``failed``; a key "in flight" (409) is ``pending``; anything
  ambiguous is ``unknown``. A refusal answers the request it refuses: on a
  create sent again after an ambiguous answer it leaves the operation
  ``unknown``, since the earlier attempt may have committed.
* webhook verification: Standard Webhooks signatures, checked in constant time
  against the simulator clock.
* the five calls, each holding the operation's lock for its whole duration, so
  two processes racing on one operation act one after the other.

Escalation (``needs_review``) follows the situation, not a count: as soon as
no rung of the ladder can give evidence any more (no key, or a key past its
retention, and no lookup that can find or follow the object) a person is
asked, in ``execute`` as well as in ``reconcile``. A count of reconciles in a
row without evidence is kept only as a safety net for lookups that keep
failing.

Exit status: 0 with a reply for every request it can read, including requests
it cannot act on (those get an ``unknown`` outcome with evidence saying why).
Non-zero only for protocol misuse: an unknown call name or strategy, stdin
that is not one JSON object, a protocol version other than 1, or no state
directory.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import datetime as dt
import fcntl
import hashlib
import hmac
import http.client
import json
import os
import re
import socket
import sys
import time
import urllib.parse
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

PROTOCOL_VERSION = 1
CALLS = ("execute", "reconcile", "webhook", "resolve", "status")
# What execute does after an ambiguous answer (see the module docstring). The
# default is named for what it does: one replay, nothing more.
STRATEGIES = ("replay-once", "eager", "lazy")
DEFAULT_STRATEGY = "replay-once"
SERVE = "serve"
USAGE = f"lostreply_adapter.py [--strategy {'|'.join(STRATEGIES)}] <{'|'.join((*CALLS, SERVE))}>"

# Operation ids name files in the store, so anything beyond this alphabet is
# refused: no separator can reach the path, whatever the caller sends.
OPERATION_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")

# Limits (everything has one). A provider object is small; a request from the
# harness is small. Larger means something is wrong, and wrong is not evidence.
MAX_RESPONSE_BODY_BYTES = 1024 * 1024
MAX_REQUEST_BYTES = 8 * 1024 * 1024
MAX_EVENTS_REMEMBERED = 1000

# Standard Webhooks' default tolerance: a signed event older or newer than
# this (by the simulator clock) could be a replay of a captured delivery.
WEBHOOK_TOLERANCE_S = 300

# A safety net, not the escalation rule: after this many reconciles in a row
# without evidence (lookups that keep erroring, replays that keep getting
# lost), automation stops and a person must look, because retrying forever
# hides the problem instead of reporting it. The contract offering no evidence
# at all escalates at once instead (Adapter._dead_end); a lookup that keeps
# failing is a different situation, worth a few more tries.
MAX_INCONCLUSIVE_RECONCILES = 5

# eager: how many same-key replays execute sends after an ambiguous first
# answer, before turning to the lookups.
EAGER_REPLAYS = 2

# list_recent looks a little before the first send, because the provider's
# created_at and our `now` come from the same clock but not the same instant.
LIST_WINDOW_BEFORE_S = 60
LIST_LIMIT = 100

TERMINAL = ("succeeded", "failed")


def log(message: str) -> None:
    """Diagnostics go to stderr: the harness keeps them for the report."""
    print(f"lostreply_adapter: {message}", file=sys.stderr)


# --------------------------------------------------------------------------
# Requests from the harness
# --------------------------------------------------------------------------


class BadRequest(Exception):
    """A request field is missing or malformed. The reply is ``unknown`` with
    this message as evidence: the adapter cannot decide, so it says so."""


@dataclass(frozen=True)
class Contract:
    """What the provider documents about itself (the request's
    ``provider.contract``). Every decision about keys and lookups is made from
    this, never from guessing what the provider might support."""

    idempotency_mode: str
    idempotency_header: str
    retention_s: int
    retrieve: bool
    client_reference: bool
    list_recent: bool
    asynchronous: bool
    webhook_secret: str | None

    @property
    def has_keys(self) -> bool:
        """Keys make a retry safe: the provider replays instead of redoing."""
        return self.idempotency_mode != "none"

    @property
    def has_lookup(self) -> bool:
        """A lookup that can find our object without knowing its id."""
        return self.client_reference or self.list_recent


@dataclass(frozen=True)
class Common:
    """Fields every call carries."""

    now: dt.datetime
    base_url: str
    credential: str
    contract: Contract
    client_timeout_ms: int


def _field(obj: Any, name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict) or name not in obj:
        raise BadRequest(f"request lacks {where}{name}")
    value = obj[name]
    # bool is an int in Python; a timeout of `true` is still a malformed request.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise BadRequest(f"request field {where}{name} has the wrong type")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def parse_time(text: str) -> dt.datetime:
    """Parses RFC 3339 (``Z`` or an offset, any number of fraction digits).

    The simulator clock is the only clock an adapter may use for ages and
    retention: the harness moves it by hours in milliseconds of real time.
    """
    match = re.fullmatch(
        r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text
    )
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    date, clock, fraction, offset = match.groups()
    micros = (fraction or ".0")[1:7].ljust(6, "0")
    zone = "+00:00" if offset in ("Z", "z") else offset
    return dt.datetime.fromisoformat(f"{date}T{clock}.{micros}{zone}")


def format_time(moment: dt.datetime) -> str:
    """RFC 3339 in UTC, whole seconds (floored: it only ever widens a window)."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_common(request: dict[str, Any]) -> Common:
    """Reads the common fields, raising ``BadRequest`` naming the first bad one."""
    try:
        now = parse_time(_field(request, "now", str, ""))
    except ValueError as err:
        raise BadRequest(f"request field now: {err}") from None
    provider = _field(request, "provider", dict, "")
    contract = _field(provider, "contract", dict, "provider.")
    idem = _field(contract, "idempotency", dict, "provider.contract.")
    lookup = _field(contract, "lookup", dict, "provider.contract.")
    webhooks = contract.get("webhooks")
    if webhooks is not None and not isinstance(webhooks, dict):
        raise BadRequest("request field provider.contract.webhooks must be null or an object")
    secret = _field(webhooks, "secret", str, "provider.contract.webhooks.") if webhooks else None
    timeout_ms = _field(request, "client_timeout_ms", int, "")
    if timeout_ms <= 0:
        raise BadRequest("request field client_timeout_ms must be positive")
    base_url = _field(provider, "base_url", str, "provider.")
    scheme = urllib.parse.urlsplit(base_url).scheme
    if scheme not in ("http", "https"):
        raise BadRequest(f"provider.base_url must be http(s), got {base_url!r}")
    return Common(
        now=now,
        base_url=base_url,
        credential=_field(provider, "credential", str, "provider."),
        contract=Contract(
            idempotency_mode=_field(idem, "mode", str, "provider.contract.idempotency."),
            idempotency_header=idem.get("header") or "Idempotency-Key",
            retention_s=_field(idem, "retention_s", int, "provider.contract.idempotency."),
            retrieve=_field(lookup, "retrieve", bool, "provider.contract.lookup."),
            client_reference=_field(lookup, "client_reference", bool, "provider.contract.lookup."),
            list_recent=_field(lookup, "list_recent", bool, "provider.contract.lookup."),
            asynchronous=bool(contract.get("asynchronous", False)),
            webhook_secret=secret,
        ),
        client_timeout_ms=timeout_ms,
    )


def check_operation_id(value: Any) -> str:
    """Operation ids become file names: only a safe alphabet is accepted."""
    if not isinstance(value, str) or OPERATION_ID_RE.match(value) is None:
        raise BadRequest(
            f"operation id {value!r} is not a valid id ([A-Za-z0-9_.-], 1 to 64 characters); nothing was done"
        )
    return value


# --------------------------------------------------------------------------
# Store
# --------------------------------------------------------------------------


class StoreError(Exception):
    """The durable store could not be read or written. Without it no claim can
    be made safely, so the reply is ``unknown`` and a person must look."""


@dataclass
class Record:
    """Everything the adapter knows about one operation, as stored on disk.

    ``key`` and ``client_reference`` are derived from the operation id, never
    from the action or the arguments: two operations that happen to look alike
    are still two operations, and one operation keeps one key for its life.
    """

    operation: dict[str, Any]
    key: str
    client_reference: str
    first_sent_at: str
    outcome: str = "unknown"
    provider_ref: str | None = None
    needs_review: bool = False
    evidence: str = "create about to be sent"
    inconclusive: int = 0
    events_seen: list[str] = field(default_factory=list)
    # The outcome is an operator's decision: final, and raised for review
    # again (never changed) when a later genuine event contradicts it.
    resolved_by_person: bool = False

    @property
    def op_id(self) -> str:
        return str(self.operation["id"])

    @property
    def resource(self) -> str:
        return str(self.operation["resource"])

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.operation["args"])

    @property
    def terminal(self) -> bool:
        return self.outcome in TERMINAL

    def reply(self, evidence: str | None = None) -> dict[str, Any]:
        """The protocol's outcome reply for this record."""
        return {
            "operation_id": self.op_id,
            "outcome": self.outcome,
            "provider_ref": self.provider_ref,
            "needs_review": self.needs_review,
            "evidence": self.evidence if evidence is None else evidence,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "key": self.key,
            "client_reference": self.client_reference,
            "first_sent_at": self.first_sent_at,
            "outcome": self.outcome,
            "provider_ref": self.provider_ref,
            "needs_review": self.needs_review,
            "evidence": self.evidence,
            "inconclusive": self.inconclusive,
            "events_seen": self.events_seen,
            "resolved_by_person": self.resolved_by_person,
        }

    @classmethod
    def from_json(cls, data: Any) -> "Record":
        try:
            operation = data["operation"]
            if not isinstance(operation.get("args"), dict):
                raise TypeError("operation.args is not an object")
            record = cls(
                operation={
                    "id": str(operation["id"]),
                    "resource": str(operation["resource"]),
                    "args": operation["args"],
                },
                key=str(data["key"]),
                client_reference=str(data["client_reference"]),
                first_sent_at=str(data["first_sent_at"]),
                outcome=str(data["outcome"]),
                provider_ref=data.get("provider_ref"),
                needs_review=bool(data.get("needs_review", False)),
                evidence=str(data.get("evidence", "")),
                inconclusive=int(data.get("inconclusive", 0)),
                events_seen=[str(e) for e in data.get("events_seen", [])],
                # Records written before the flag existed hold no decision
                # the adapter can tell from its own outcome: read as false.
                resolved_by_person=bool(data.get("resolved_by_person", False)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise StoreError(f"stored record is malformed: {err}") from None
        if record.outcome not in ("unknown", "pending", "succeeded", "failed"):
            raise StoreError(f"stored record has an unknown outcome {record.outcome!r}")
        return record


class Store:
    """One JSON file per operation under ``<state dir>/ops/``, replaced
    atomically, plus one lock file per operation.

    Atomic replacement (write a temporary file, fsync, rename, fsync the
    directory) means a reader sees the old record or the new one, never half of
    one, even if the writer is SIGKILLed mid-write: ``status`` can therefore
    read without a lock.
    """

    def __init__(self, state_dir: str, create: bool = True) -> None:
        """``create=False`` opens the store for reading only (``status``): a
        read-only call leaves the state directory exactly as it found it, even
        when that means not creating ``ops/``."""
        self.ops_dir = os.path.join(state_dir, "ops")
        if not create:
            return
        try:
            os.makedirs(self.ops_dir, exist_ok=True)
        except OSError as err:
            raise StoreError(f"cannot create the store in {self.ops_dir}: {err}") from None

    def _path(self, op_id: str, suffix: str) -> str:
        # check_operation_id already ran; checking again keeps the path safe
        # even if a caller forgets.
        if OPERATION_ID_RE.match(op_id) is None:
            raise StoreError(f"refusing a store path for operation id {op_id!r}")
        return os.path.join(self.ops_dir, op_id + suffix)

    @contextlib.contextmanager
    def lock(self, op_id: str) -> Iterator[None]:
        """Exclusive lock on one operation for the duration of a call.

        ``flock`` is released by the kernel when the process dies, so a
        crashed worker never leaves an operation locked.
        """
        try:
            fd = os.open(self._path(op_id, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise StoreError(f"cannot open the lock for {op_id}: {err}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            # Closing the descriptor releases the lock.
            os.close(fd)

    def load(self, op_id: str) -> Record | None:
        """The stored record, or ``None`` when the store has never seen the id."""
        try:
            with open(self._path(op_id, ".json"), "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StoreError(f"cannot read the record of {op_id}: {err}") from None
        try:
            data = json.loads(raw)
        except ValueError as err:
            raise StoreError(f"the record of {op_id} is not JSON: {err}") from None
        return Record.from_json(data)

    def save(self, record: Record) -> None:
        """Durably replaces the record (see the class docstring for why)."""
        final = self._path(record.op_id, ".json")
        tmp = final + ".tmp"
        payload = json.dumps(record.to_json(), sort_keys=True, indent=2).encode()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(payload)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, final)
            dir_fd = os.open(self.ops_dir, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as err:
            raise StoreError(f"cannot save the record of {record.op_id}: {err}") from None


# --------------------------------------------------------------------------
# Provider client
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpAnswer:
    """A complete HTTP answer: status, headers (lower-case names), whole body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        """The parsed body; raises ``ValueError`` when it is not JSON."""
        return json.loads(self.body.decode("utf-8"))

    def error_type(self) -> str:
        """The provider's error type, from ``{"error":{"type":…}}`` or a
        problem+json ``type``/``title``, for evidence and for telling a key
        mismatch from an invalid request."""
        try:
            data = self.json()
        except (ValueError, UnicodeDecodeError):
            return "unparsable error body"
        if isinstance(data, dict):
            err = data.get("error")
            if isinstance(err, dict) and isinstance(err.get("type"), str):
                return err["type"]
            for name in ("type", "title"):
                if isinstance(data.get(name), str):
                    return data[name]
        return "no error type"

    def media_type(self) -> str:
        """The Content-Type without parameters, lower case (``""`` if none)."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class LostAnswer(Exception):
    """The request was sent (or may have been) and no complete answer came
    back. ``evidence`` says precisely what was observed; the caller treats all
    of these as ambiguous, because any of them can happen after a commit."""

    def __init__(self, evidence: str) -> None:
        super().__init__(evidence)
        self.evidence = evidence


class ProviderClient:
    """HTTP/1.1 to the provider with one deadline per request.

    A fresh connection per request: a connection the provider broke on
    purpose must never be reused, and one connection per request keeps the
    provider's journal easy to read.
    """

    def __init__(self, common: Common) -> None:
        parts = urllib.parse.urlsplit(common.base_url)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port
        self.prefix = parts.path.rstrip("/")
        self.credential = common.credential
        self.timeout_ms = common.client_timeout_ms

    def request(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> HttpAnswer:
        """Sends one request and reads the whole answer before the deadline.

        Raises ``LostAnswer`` naming the phase and the failure: the difference
        between "nothing came back" and "a 201 came back and then the body
        stopped" matters to the operator reading the evidence.
        """
        timeout_s = self.timeout_ms / 1000
        deadline = time.monotonic() + timeout_s
        payload = None
        all_headers = {
            "Authorization": f"Bearer {self.credential}",
            "Accept": "application/json",
        }
        if body is not None:
            payload = json.dumps(body, separators=(",", ":"), sort_keys=True).encode()
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        conn_cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = conn_cls(self.host, self.port, timeout=timeout_s)
        phase = "connecting"
        status: int | None = None
        received = 0
        expected: int | None = None
        try:
            conn.connect()
            # Keep our own reference: http.client drops conn.sock when the
            # answer says "Connection: close", but the response still reads
            # from this socket and we still need to move its timeout.
            sock = conn.sock
            phase = "sending the request"
            _set_timeout(sock, deadline)
            conn.request(method, self.prefix + path, body=payload, headers=all_headers)
            phase = "waiting for the response"
            _set_timeout(sock, deadline)
            response = conn.getresponse()
            status = response.status
            expected = response.length
            phase = f"reading the body of a {status} response"
            chunks: list[bytes] = []
            while True:
                _set_timeout(sock, deadline)
                # read1: at most one recv per call, so the deadline is checked
                # between every piece, not only per call.
                chunk = response.read1(64 * 1024)
                if not chunk:
                    break
                received += len(chunk)
                if received > MAX_RESPONSE_BODY_BYTES:
                    raise LostAnswer(
                        f"{method} {path}: {status} response body exceeds {MAX_RESPONSE_BODY_BYTES} bytes; not read"
                    )
                chunks.append(chunk)
            if response.length:
                # http.client does not raise for a short Content-Length body
                # read in pieces; this is the same condition it would report.
                raise http.client.IncompleteRead(b"".join(chunks), response.length)
            return HttpAnswer(
                status=status,
                headers={k.lower(): v for k, v in response.getheaders()},
                body=b"".join(chunks),
            )
        except LostAnswer:
            raise
        except (socket.timeout, TimeoutError):
            raise LostAnswer(
                f"{method} {path}: timeout after {self.timeout_ms} ms while {phase}"
            ) from None
        except http.client.IncompleteRead as err:
            total = f" of {expected}" if expected is not None else ""
            raise LostAnswer(
                f"{method} {path}: truncated {status} response body "
                f"({received}{total} bytes arrived, then the connection closed)"
                if status is not None
                else f"{method} {path}: truncated response ({err})"
            ) from None
        except http.client.RemoteDisconnected:
            raise LostAnswer(
                f"{method} {path}: connection closed without a response while {phase}"
            ) from None
        except ConnectionResetError:
            raise LostAnswer(f"{method} {path}: connection reset while {phase}") from None
        except BrokenPipeError:
            raise LostAnswer(
                f"{method} {path}: connection closed by the provider while {phase}"
            ) from None
        except ConnectionRefusedError:
            raise LostAnswer(
                f"{method} {path}: connection refused (the provider is not listening)"
            ) from None
        except http.client.HTTPException as err:
            raise LostAnswer(
                f"{method} {path}: malformed HTTP while {phase}: {type(err).__name__}"
            ) from None
        except OSError as err:
            raise LostAnswer(f"{method} {path}: network error while {phase}: {err}") from None
        finally:
            conn.close()


def _set_timeout(sock: socket.socket | None, deadline: float) -> None:
    """Gives the next socket operation only what is left of the deadline."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise socket.timeout("deadline passed")
    if sock is not None:
        sock.settimeout(remaining)


# --------------------------------------------------------------------------
# Classification: from an HTTP answer to a claim
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """A claim and what it rests on. ``inconclusive`` (unknown, and no person
    asked for) is the "no evidence this time" that counts towards the safety
    net; any other verdict is evidence (a 409 "in flight" ``pending``
    included), and even an escalation resets that count."""

    outcome: str
    provider_ref: str | None
    evidence: str
    needs_review: bool = False
    # A create sent again was refused (400, 401, 404, 413, 429): nothing ran
    # for this request, and pressing the provider again in the same call
    # would only be refused again.
    refused: bool = False

    @property
    def inconclusive(self) -> bool:
        return self.outcome == "unknown" and not self.needs_review


OBJECT_STATUS_OUTCOME = {"succeeded": "succeeded", "processing": "pending", "failed": "failed"}

# Statuses that mean "refused before anything ran": the provider's contract
# says these commit nothing. They answer the request they refuse, and only
# that one: on a first attempt the operation has definitely not happened;
# on a create sent again after an ambiguous attempt they say nothing about
# that attempt, which may have committed (classify_retry).
REJECTED_BEFORE_EXECUTION = (400, 401, 404, 413, 429)
REJECTED_EVIDENCE = "rejected before execution"


def classify_object(obj: Any, source: str) -> Verdict:
    """A provider object's status is the evidence: ``processing`` is not done."""
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"]:
        return Verdict("unknown", None, f"{source}: the answer is not an object with an id")
    outcome = OBJECT_STATUS_OUTCOME.get(obj.get("status"))  # type: ignore[arg-type]
    if outcome is None:
        return Verdict(
            "unknown", None, f"{source}: object {obj['id']} has an unrecognised status {obj.get('status')!r}"
        )
    return Verdict(outcome, obj["id"], f"{source}: object {obj['id']} is {obj['status']}")


def key_in_flight(answer: HttpAnswer, mode: str) -> bool:
    """True when a 409 is the provider's documented "this key's first request
    is still being processed" answer for the contract's mode: in ``stripe``
    ``{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}``,
    in ``ietf`` a problem+json body. Only that answer proves the provider has
    the operation; any other 409 (or any 409 when keys are ignored) is just an
    unexpected status."""
    if answer.status != 409:
        return False
    if mode == "stripe":
        try:
            data = answer.json()
        except (ValueError, UnicodeDecodeError):
            return False
        err = data.get("error") if isinstance(data, dict) else None
        return (
            isinstance(err, dict)
            and err.get("type") == "idempotency_error"
            and err.get("code") == "idempotency_key_in_use"
        )
    if mode == "ietf":
        return answer.media_type() == "application/problem+json"
    return False


def classify_create(answer: HttpAnswer, key: str | None, mode: str) -> Verdict:
    """What a create's answer proves. See the reference algorithm's table.

    ``key`` is the key the request carried (``None`` when the contract has no
    keys) and ``mode`` the contract's idempotency mode: a 409 means "in
    flight" only in the shape that mode documents.
    """
    status = answer.status
    if status in (200, 201, 202):
        try:
            obj = answer.json()
        except (ValueError, UnicodeDecodeError):
            return Verdict(
                "unknown", None, f"create answered {status} but the body is not valid JSON: may have committed"
            )
        replayed = answer.headers.get("idempotent-replayed", "").lower() == "true"
        source = f"create answered {status}" + (f" (replayed for key {key})" if replayed else "")
        return classify_object(obj, source)
    if key is not None and key_in_flight(answer, mode):
        # Not a failure and not absence: the first request with this key is
        # still running at the provider, so the provider has the operation.
        # Replaying again now would only get the same 409; a later reconcile
        # replays and learns how it ended.
        return Verdict(
            "pending",
            None,
            f"create answered 409 {answer.error_type()}: the provider is still processing the first request "
            f"with key {key}, so it has the operation",
        )
    if status == 422 or (status == 400 and answer.error_type() == "idempotency_error"):
        return Verdict(
            "unknown",
            None,
            f"our key {key} was already used with other arguments ({status} {answer.error_type()}): "
            "never a success, never retried under another key; a person must check",
            needs_review=True,
        )
    if status in REJECTED_BEFORE_EXECUTION:
        return Verdict("failed", None, f"{REJECTED_EVIDENCE}: {status} {answer.error_type()}")
    if 500 <= status <= 599:
        return Verdict(
            "unknown", None, f"create answered {status} {answer.error_type()}: the provider may or may not have committed"
        )
    return Verdict(
        "unknown", None, f"create answered an unexpected {status} {answer.error_type()}: cannot tell whether it committed"
    )


def classify_retry(answer: HttpAnswer, key: str | None, mode: str) -> Verdict:
    """What the answer to a create sent again after an ambiguous attempt (a
    same-key retry or replay) proves. An object, a key in flight or a key
    mismatch proves what it proves on a first attempt; a refusal refuses this
    request only. The earlier attempt may have committed, so the operation
    stays ``unknown`` and the next reconcile climbs the ladder again."""
    verdict = classify_create(answer, key, mode)
    if verdict.outcome != "failed" or verdict.provider_ref is not None:
        return verdict
    refused = verdict.evidence.replace(REJECTED_EVIDENCE, "refused", 1)
    return Verdict(
        "unknown",
        None,
        f"{refused}: a refusal of a request sent again says nothing about the earlier attempt",
        refused=True,
    )


# --------------------------------------------------------------------------
# Webhook verification (Standard Webhooks)
# --------------------------------------------------------------------------


def sign_webhook(secret: str, msg_id: str, timestamp: str, body: str) -> str:
    """``v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>`` where the key
    is the base64 part of ``whsec_…``. Raises ``ValueError`` for a bad secret."""
    encoded = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        key = base64.b64decode(encoded, validate=True)
    except binascii.Error as err:
        raise ValueError(f"webhook secret is not base64: {err}") from None
    mac = hmac.new(key, f"{msg_id}.{timestamp}.{body}".encode(), hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


def verify_webhook(
    secret: str, headers: dict[str, str], body: str, now: dt.datetime
) -> tuple[bool, str]:
    """Checks a delivery's signature and freshness. Returns (ok, reason).

    The timestamp is checked against the simulator clock (the request's
    ``now``) so that a captured delivery replayed later is refused, and the
    signature comparison is constant-time so that it leaks nothing.
    """
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    msg_id = lower.get("webhook-id")
    timestamp = lower.get("webhook-timestamp")
    signatures = lower.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        return False, "missing webhook-id, webhook-timestamp or webhook-signature"
    try:
        sent_at = int(timestamp)
    except ValueError:
        return False, f"webhook-timestamp {timestamp!r} is not an integer"
    age_s = abs(now.timestamp() - sent_at)
    if age_s > WEBHOOK_TOLERANCE_S:
        return False, f"webhook-timestamp is {int(age_s)} s from now (tolerance {WEBHOOK_TOLERANCE_S} s)"
    try:
        expected = sign_webhook(secret, msg_id, timestamp, body)
    except ValueError as err:
        return False, str(err)
    # Compare every candidate (no early exit) so timing says nothing about which matched.
    matched = False
    for candidate in signatures.split():
        if candidate.startswith("v1,"):
            matched |= hmac.compare_digest(candidate.encode(), expected.encode())
    if not matched:
        return False, "no v1 signature matches"
    return True, "signature verified"


# --------------------------------------------------------------------------
# The calls
# --------------------------------------------------------------------------


def unknown_reply(op_id: Any, evidence: str, needs_review: bool = False) -> dict[str, Any]:
    """An honest "cannot tell" (also for requests the adapter cannot act on)."""
    return {
        "operation_id": op_id if isinstance(op_id, str) else "",
        "outcome": "unknown",
        "provider_ref": None,
        "needs_review": needs_review,
        "evidence": evidence,
    }


@dataclass(frozen=True)
class Lookup:
    """One correlation lookup (search or list) as evidence: the objects in its
    answer that are ours, or why the answer proves nothing. ``complete`` is
    false when the provider said there is more than this page: what the page
    does not show proves nothing."""

    source: str
    ours: list[dict[str, Any]]
    problem: str | None = None
    complete: bool = True


class Adapter:
    """The five calls over one store and one provider, with one ``execute``
    strategy (see the module docstring)."""

    def __init__(self, store: Store, common: Common, strategy: str = DEFAULT_STRATEGY) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}")
        self.store = store
        self.common = common
        self.contract = common.contract
        self.client = ProviderClient(common)
        self.strategy = strategy

    # -- provider requests -------------------------------------------------

    def _create_body(self, record: Record) -> dict[str, Any]:
        # Same body on every attempt (invariant 5): the args as given plus the
        # two reserved fields, both derived from the operation id.
        body = record.args
        body["client_reference"] = record.client_reference
        body["metadata"] = {"operation_id": record.op_id}
        return body

    def _send_create(self, record: Record, again: bool = False) -> Verdict:
        """Sends the operation's create. ``again`` when an earlier attempt is
        in doubt (a retry, a replay, a resend in the call whose create lost
        its answer): then a refusal is not the operation's failure."""
        key = record.key if self.contract.has_keys else None
        headers = {self.contract.idempotency_header: key} if key is not None else {}
        try:
            answer = self.client.request(
                "POST", f"/v1/{record.resource}", self._create_body(record), headers
            )
        except LostAnswer as lost:
            return Verdict("unknown", None, f"{lost.evidence}: the create may or may not have committed")
        classify = classify_retry if again else classify_create
        return classify(answer, key, self.contract.idempotency_mode)

    def _get_json(self, path: str) -> tuple[Any, str | None, int | None]:
        """A lookup's answer: (parsed 200 body, None, 200), or (None, why it
        proves nothing, the status if one arrived).

        A lookup the provider refuses as unsupported (``400
        unsupported_query``, which is how a disabled lookup, retrieve
        included, answers) is named as such: it is never evidence of absence,
        whatever the contract said about that lookup.
        """
        try:
            answer = self.client.request("GET", path)
        except LostAnswer as lost:
            return None, lost.evidence, None
        if answer.status == 400 and answer.error_type() == "unsupported_query":
            return None, f"GET {path} answered 400 unsupported_query: the provider refuses this lookup", 400
        if answer.status != 200:
            return None, f"GET {path} answered {answer.status} {answer.error_type()}", answer.status
        try:
            return answer.json(), None, 200
        except (ValueError, UnicodeDecodeError):
            return None, f"GET {path} answered 200 with a body that is not valid JSON", 200

    def _retrieve(self, record: Record) -> Verdict:
        """Follows the object we know by its id (only called when the contract
        offers retrieve, and only with an id the provider gave us)."""
        ref = str(record.provider_ref)
        path = f"/v1/{record.resource}/{urllib.parse.quote(ref, safe='')}"
        obj, problem, status = self._get_json(path)
        if status == 404 and self.contract.retrieve:
            # With retrieve enabled a 404 is an answer, not an error: the
            # provider has no object with this id for us. But the id came from
            # the provider itself (a create answer, a lookup, a signed event),
            # so this is absence of that id, not of the operation: never a
            # reason to re-create, and a contradiction no rung of the ladder
            # can settle. What we knew stands (pending); a person is asked.
            return Verdict(
                "unknown",
                None,
                f"retrieve of {ref} answered 404: the provider shows no object {ref} although it named it "
                "for this operation; not re-created, a person must check",
                needs_review=True,
            )
        if problem is not None:
            return Verdict("unknown", None, f"retrieve of {ref} proved nothing: {problem}")
        verdict = classify_object(obj, f"retrieve {ref}")
        if verdict.provider_ref not in (None, ref):
            return Verdict("unknown", None, f"retrieve of {ref} answered another object")
        return verdict

    def _list_answer(self, path: str, source: str, keep: Callable[[dict[str, Any]], bool]) -> Lookup:
        """Reads a search or list answer, keeping the objects ``keep`` says are ours."""
        data, problem, _ = self._get_json(path)
        if problem is None and not _is_list_envelope(data):
            problem = f"GET {path} answered 200 without a data list"
        if problem is not None:
            return Lookup(source, [], problem)
        ours = [o for o in data["data"] if isinstance(o, dict) and keep(o)]
        return Lookup(source, ours, complete=data.get("has_more") is not True)

    def _search(self, record: Record) -> Lookup:
        """Search by client_reference: only an object carrying our reference counts."""
        query = urllib.parse.urlencode({"client_reference": record.client_reference})
        return self._list_answer(
            f"/v1/{record.resource}?{query}",
            f"search by client_reference {record.client_reference}",
            lambda o: o.get("client_reference") == record.client_reference,
        )

    def _list_recent(self, record: Record) -> Lookup:
        """List objects created since just before our first send. Only an
        object carrying our reference or our operation id counts: another
        actor's look-alike in the window is not evidence about ours."""
        since = parse_time(record.first_sent_at) - dt.timedelta(seconds=LIST_WINDOW_BEFORE_S)
        query = urllib.parse.urlencode({"created_gte": format_time(since), "limit": LIST_LIMIT})
        return self._list_answer(
            f"/v1/{record.resource}?{query}",
            f"list of objects created since {format_time(since)}",
            lambda o: _is_ours(o, record),
        )

    def _look_up(self, record: Record, object_id: str | None = None) -> tuple[dict[str, Any] | None, bool, str]:
        """Looks for our object with the correlation lookups the contract
        offers: search by reference first, then the recent list when the
        search proved nothing. With ``object_id`` only that object counts
        (following an object we already know).

        Returns (our object or None, absence proven, evidence). Absence is
        proven only by a clean, complete answer; an error, a stall, a
        malformed or cut-short answer, or a refused lookup proves nothing, and
        the next lookup is tried.
        """
        wanted = f"object {object_id}" if object_id is not None else "ours"
        problems: list[str] = []
        offered = ((self._search, self.contract.client_reference), (self._list_recent, self.contract.list_recent))
        for lookup in [lookup for lookup, on in offered if on]:
            found = lookup(record)
            # What earlier lookups failed to prove stays in the evidence.
            before = "".join(f"{p}; then " for p in problems)
            if found.problem is None:
                matches = [o for o in found.ours if object_id is None or o.get("id") == object_id]
                if matches:
                    return matches[0], False, f"{before}{found.source} found {wanted}"
                if found.complete:
                    missing = f"object {object_id}" if object_id is not None else "object of ours"
                    return None, True, f"{before}{found.source} found no {missing}"
                problems.append(
                    f"{found.source} proved nothing: more than one page ({LIST_LIMIT} objects) and {wanted} is not on it"
                )
            else:
                problems.append(f"{found.source} proved nothing: {found.problem}")
        return None, False, "; ".join(problems) or "the contract offers no search or list"

    # -- the ladder ----------------------------------------------------------

    def _key_retained(self, record: Record) -> bool:
        """Whether the provider still remembers our key. Retention counts from
        our FIRST send (``first_sent_at``, never moved by later sends) by the
        request's ``now``: the simulator clock, never the machine's."""
        age_s = (self.common.now - parse_time(record.first_sent_at)).total_seconds()
        return age_s < self.contract.retention_s

    def _key_usable(self, record: Record) -> bool:
        """A same-key send is safe (a replay, not new work) only while the
        contract has keys and the provider still retains ours."""
        return self.contract.has_keys and self._key_retained(record)

    def _dead_end(self, record: Record) -> str | None:
        """Why no rung of the ladder can give evidence about this operation
        any more, or ``None`` while one can.

        The rungs: a same-key replay while the key is retained, a search or a
        list, and a retrieve once we know the object's id. For an object we
        already know a replay is no rung: it repeats the create's saved answer
        and cannot show the object settle. When none is left, reconciling
        again cannot find anything (a webhook still may, and is still
        applied), so a person is asked now, not after a count of reconciles
        that could never have learned anything.
        """
        contract = self.contract
        if contract.has_lookup:
            return None
        if record.provider_ref is not None:
            if contract.retrieve:
                return None
            return (
                f"object {record.provider_ref} is known but the contract offers no lookup to follow it: "
                "cannot tell how it ends; a person must check"
            )
        if self._key_usable(record):
            return None
        keys = "our idempotency key is past its retention" if contract.has_keys else "no idempotency"
        lookup = "no lookup that works without an object id" if contract.retrieve else "no lookup"
        return f"{keys} and {lookup}: cannot tell whether the create committed; a person must check"

    def _find_or_recreate(self, record: Record, lost_in_this_call: bool = False) -> Verdict:
        """Step c: adopt our object if a lookup shows it; re-create (same key,
        if any) only when a lookup proved absence.

        ``lost_in_this_call``: a create of this very call lost its answer. It
        may still be on its way to the provider and commit after the lookup,
        so an absence seen now is no proof: only a retained-key replay, which
        the provider deduplicates against the lost create, may be sent, and a
        refusal of it says nothing about that create. A later call's lookup
        (the provider has long answered or dropped the request) is proof.
        """
        obj, absent, said = self._look_up(record)
        if obj is not None:
            return classify_object(obj, said)
        if not absent:
            return Verdict("unknown", None, said)
        if lost_in_this_call:
            if not self._key_usable(record):
                return Verdict(
                    "unknown",
                    None,
                    f"{said}, but without a retained key our lost create may still be running at the provider: "
                    "not re-created in this call, a reconcile will look again",
                )
            verdict = self._send_create(record, again=True)
            return _prefixed(
                verdict,
                f"{said}, but our lost create may still be running; replayed with key {record.key}, "
                "which the provider deduplicates against it",
            )
        verdict = self._send_create(record)
        keyed = f" with key {record.key}" if self.contract.has_keys else ""
        return _prefixed(verdict, f"{said}, so the create never committed; re-created{keyed}")

    def _reconcile_locked(self, record: Record) -> Verdict:
        """Steps a to d of the reference algorithm, for a non-terminal record."""
        # d. First, because it needs no request: when no rung can give
        # evidence, guessing either way is dishonest and re-creating is blind.
        dead_end = self._dead_end(record)
        if dead_end is not None:
            return Verdict("unknown", None, dead_end, needs_review=True)
        # a. We know the object: ask about it directly.
        if record.provider_ref is not None:
            if self.contract.retrieve:
                return self._retrieve(record)
            obj, absent, said = self._look_up(record, record.provider_ref)
            if obj is not None:
                return classify_object(obj, said)
            if absent:
                # The same contradiction as a retrieve's 404 (see _retrieve).
                return Verdict(
                    "unknown", None, f"{said}, although the provider named it for this operation; "
                    "not re-created, a person must check", needs_review=True,
                )
            return Verdict("unknown", None, said)
        # b. The provider still remembers our key: replaying it is safe and is
        # how a keyed API hands back a lost response (or says, 409, that the
        # first request is still running).
        if self._key_usable(record):
            # Sent again after an earlier attempt in doubt: a refusal of it
            # leaves the operation unknown (classify_retry).
            return _prefixed(self._send_create(record, again=True), f"replayed the create with key {record.key}")
        # c. Look for our object; re-create only when a lookup proves absence.
        return self._find_or_recreate(record)

    def _after_ambiguous_create(self, record: Record, first: Verdict) -> Verdict:
        """What ``execute`` does after an ambiguous first answer, by strategy."""
        if self.strategy == "lazy":
            return first
        if self.strategy == "replay-once":
            if not self._key_usable(record):
                return first
            # One immediate replay under the same key: on a keyed API it
            # either returns the committed object or does the work once.
            return _prefixed(
                self._send_create(record, again=True), f"after [{first.evidence}] retried with key {record.key}"
            )
        # eager: the whole ladder, now.
        steps = [f"after [{first.evidence}]"]
        for n in range(1, EAGER_REPLAYS + 1):
            if not self._key_usable(record):
                break
            verdict = self._send_create(record, again=True)
            steps.append(f"replay {n} with key {record.key}: {verdict.evidence}")
            if not verdict.inconclusive or verdict.refused:
                # Evidence, including a 409 (still running: replaying again
                # now would only be refused again) or a key mismatch; or a
                # refusal, which a replay now would only meet again: the
                # operation stays unknown and a reconcile climbs again.
                return _with_evidence(verdict, "; ".join(steps))
        if not self.contract.has_lookup:
            return Verdict("unknown", None, "; ".join(steps))
        # Absence seen a moment after our create was lost is not proof: that
        # create may still be running. Only a retained-key replay may follow.
        verdict = self._find_or_recreate(record, lost_in_this_call=True)
        steps.append(verdict.evidence)
        return _with_evidence(verdict, "; ".join(steps))

    def _apply(self, record: Record, verdict: Verdict, reconciling: bool) -> None:
        """Folds a verdict into the record, never regressing, then decides
        whether a person must look.

        Terminal outcomes are final (invariant 4). A known object is never
        forgotten: ``pending`` does not fall back to ``unknown`` because one
        lookup failed. A request for review is never taken back by an answer
        that proves nothing: only evidence (or an operator) ends it.

        Escalation: at once when no rung can give evidence any more
        (``_dead_end``); otherwise, as a safety net, after
        ``MAX_INCONCLUSIVE_RECONCILES`` reconciles in a row without evidence.
        """
        if record.terminal:
            return
        if verdict.inconclusive:
            if reconciling:
                record.inconclusive += 1
            if record.needs_review:
                # A person has been asked, and this answer changes neither the
                # claim nor why they were asked: the evidence keeps saying why
                # (what was seen this time goes to stderr, into the report).
                log(f"{record.op_id}: still awaiting review; no new evidence: {verdict.evidence}")
            elif record.outcome == "pending":
                record.evidence = f"still pending as last seen; {verdict.evidence}"
            else:
                record.evidence = verdict.evidence
        elif verdict.outcome == "unknown" and record.outcome == "pending":
            # An escalation about an operation the provider is known to have:
            # a person must look, and what we know stands.
            record.inconclusive = 0
            record.needs_review = True
            record.evidence = f"still pending as last seen; {verdict.evidence}"
        else:
            record.inconclusive = 0
            record.outcome = verdict.outcome
            if verdict.provider_ref is not None:
                record.provider_ref = verdict.provider_ref
            record.needs_review = verdict.needs_review
            record.evidence = verdict.evidence
        if record.terminal:
            return
        dead_end = self._dead_end(record)
        if dead_end is not None and not record.needs_review:
            record.needs_review = True
            record.evidence += f"; {dead_end}"
        if record.inconclusive >= MAX_INCONCLUSIVE_RECONCILES and not record.needs_review:
            record.needs_review = True
            record.evidence += (
                f" ({record.inconclusive} reconciles in a row without evidence: automation stopped, "
                "a person must check)"
            )

    @contextlib.contextmanager
    def _locked_record(self, op_id: str) -> Iterator[Record | None]:
        """The operation's record, under its lock for the rest of the block;
        ``None`` when the store has never seen the id. Records are never
        deleted, so an id absent before locking needs no lock: no lock file is
        left behind for ids this store never knew (a signed event about
        someone else's operation, say)."""
        if self.store.load(op_id) is None:
            yield None
            return
        with self.store.lock(op_id):
            yield self.store.load(op_id)

    # -- the five calls ----------------------------------------------------

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        operation = _field(request, "operation", dict, "")
        op_id = check_operation_id(operation.get("id"))
        resource = _field(operation, "resource", str, "operation.")
        if re.fullmatch(r"[a-z][a-z0-9_]{0,39}", resource) is None:
            raise BadRequest(f"operation.resource {resource!r} is not a collection name; nothing was done")
        args = _field(operation, "args", dict, "operation.")
        with self.store.lock(op_id):
            record = self.store.load(op_id)
            if record is not None:
                # Never execute twice: a terminal record (including an
                # operator's resolution) is the answer; otherwise find out,
                # exactly as reconcile would.
                if not record.terminal:
                    self._apply(record, self._reconcile_locked(record), reconciling=True)
                    self.store.save(record)
                return record.reply()
            record = Record(
                operation={"id": op_id, "resource": resource, "args": args},
                key=f"lr-{op_id}",
                client_reference=op_id,
                first_sent_at=format_rfc3339_exact(self.common.now),
            )
            # Intent is durable before the call: if this process dies after
            # the provider commits, the key and reference survive it.
            self.store.save(record)
            verdict = self._send_create(record)
            if verdict.inconclusive:
                verdict = self._after_ambiguous_create(record, verdict)
            self._apply(record, verdict, reconciling=False)
            self.store.save(record)
            return record.reply()

    def reconcile(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        with self._locked_record(op_id) as record:
            if record is None:
                return unknown_reply(op_id, "no record of this operation in the store")
            if not record.terminal:
                self._apply(record, self._reconcile_locked(record), reconciling=True)
                self.store.save(record)
            return record.reply()

    def resolve(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        resolution = _field(request, "resolution", dict, "")
        outcome = _field(resolution, "outcome", str, "resolution.")
        if outcome not in TERMINAL:
            raise BadRequest(f"resolution.outcome must be succeeded or failed, got {outcome!r}; nothing was changed")
        provider_ref = resolution.get("provider_ref")
        if provider_ref is not None and not isinstance(provider_ref, str):
            raise BadRequest("resolution.provider_ref must be a string or null; nothing was changed")
        said = resolution.get("evidence")
        said = said if isinstance(said, str) else ""
        with self._locked_record(op_id) as record:
            if record is None:
                return unknown_reply(op_id, "no record of this operation in the store; resolution not applied")
            if record.terminal:
                return record.reply(
                    f"resolution ignored: the outcome was already final ({record.evidence})"
                )
            record.outcome = outcome
            record.provider_ref = provider_ref
            record.needs_review = False
            record.resolved_by_person = True
            record.evidence = f"operator: {said}"
            self.store.save(record)
            return record.reply()

    def status(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        # No lock and no network: records are replaced atomically, and status
        # must never change anything, here or at the provider.
        record = self.store.load(op_id)
        if record is None:
            return unknown_reply(op_id, "no record of this operation in the store")
        return record.reply()

    def webhook(self, request: dict[str, Any]) -> dict[str, Any]:
        rejected = {"accepted": False, "operation_id": None}
        headers = request.get("headers")
        body = request.get("body")
        if not isinstance(headers, dict) or not isinstance(body, str):
            log("webhook rejected: request lacks headers (object) or body (string)")
            return rejected
        secret = self.contract.webhook_secret
        if secret is None:
            log("webhook rejected: the provider's contract has no webhooks")
            return rejected
        ok, reason = verify_webhook(secret, headers, body, self.common.now)
        if not ok:
            log(f"webhook rejected: {reason}")
            return rejected
        try:
            event = json.loads(body)
        except ValueError:
            log("webhook rejected: signed body is not JSON")
            return rejected
        data = event.get("data") if isinstance(event, dict) else None
        if not isinstance(data, dict) or not isinstance(event.get("type"), str):
            log("webhook rejected: event lacks type or data")
            return rejected
        op_id = next((c for c in _correlate(data) if self.store.load(c) is not None), None)
        if op_id is None:
            return {"accepted": True, "operation_id": None}
        event_id = {str(k).lower(): v for k, v in headers.items()}["webhook-id"]
        with self._locked_record(op_id) as record:
            if record is None:
                return {"accepted": True, "operation_id": None}
            if event_id in record.events_seen:
                # The same event delivered again: already applied or ignored.
                return {"accepted": True, "operation_id": op_id}
            record.events_seen = (record.events_seen + [event_id])[-MAX_EVENTS_REMEMBERED:]
            verdict = _event_verdict(event["type"], data, event_id, record.resource)
            if verdict is not None and record.terminal:
                # Terminal outcomes never change (a resolution's included).
                # An event that contradicts an operator's decision raises the
                # operation for review again, outcome and object kept.
                if record.resolved_by_person and _contradicts_decision(record, verdict):
                    record.needs_review = True
                    record.evidence = f"{record.evidence}; contradicted by {verdict.evidence}: a person must review again"
            elif verdict is not None and _same_object(record, verdict):
                # _apply never regresses: a late "created (processing)" after
                # a settle changes nothing.
                self._apply(record, verdict, reconciling=False)
            self.store.save(record)
            return {"accepted": True, "operation_id": op_id}


def format_rfc3339_exact(moment: dt.datetime) -> str:
    """RFC 3339 in UTC keeping microseconds: first_sent_at is compared with
    later clocks for retention, so it must not be rounded."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _with_evidence(verdict: Verdict, evidence: str) -> Verdict:
    """The same claim, resting on a fuller account of how it was reached."""
    return replace(verdict, evidence=evidence)


def _prefixed(verdict: Verdict, prefix: str) -> Verdict:
    return _with_evidence(verdict, f"{prefix}: {verdict.evidence}")


def _is_list_envelope(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("data"), list)


def _is_ours(obj: Any, record: Record) -> bool:
    if not isinstance(obj, dict):
        return False
    if obj.get("client_reference") == record.client_reference:
        return True
    metadata = obj.get("metadata")
    return isinstance(metadata, dict) and metadata.get("operation_id") == record.op_id


def _correlate(data: dict[str, Any]) -> list[str]:
    """The operations an event may be about, best first: its client_reference,
    then its metadata.operation_id. The caller takes the first its store
    knows, so a foreign reference does not hide our operation id."""
    candidates = [data.get("client_reference")]
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        candidates.append(metadata.get("operation_id"))
    found: list[str] = []
    for candidate in candidates:
        if isinstance(candidate, str) and OPERATION_ID_RE.match(candidate) and candidate not in found:
            found.append(candidate)
    return found


def _event_verdict(event_type: str, data: dict[str, Any], event_id: str, resource: str) -> Verdict | None:
    """What an event proves. ``{resource}.created`` carries the object as it was
    at commit (possibly still processing); the settle events are final. An
    event about another resource than the operation's proves nothing about it."""
    source = f"event {event_id} ({event_type})"
    prefix, _, suffix = event_type.rpartition(".")
    if prefix != resource:
        return None
    if suffix == "created":
        return classify_object(data, source)
    if suffix in ("succeeded", "failed") and isinstance(data.get("id"), str):
        return Verdict(suffix, data["id"], f"{source}: object {data['id']} is {suffix}")
    return None


def _contradicts_decision(record: Record, event: Verdict) -> bool:
    """True when a genuine event about an object of the operation contradicts
    the operator's decision the record holds: an object alive (not failed)
    where the person said ``failed``; another live object beside the one they
    named in ``succeeded``; the named object settled ``failed``; or, for a
    ``succeeded`` naming no object, an object settled ``failed``. An event
    that proves nothing (no id, an unrecognised status) contradicts nothing."""
    if event.outcome == "unknown" or event.provider_ref is None:
        return False
    alive = event.outcome != "failed"
    if record.outcome == "failed":
        return alive
    if record.outcome != "succeeded":
        return False
    if record.provider_ref is None or record.provider_ref == event.provider_ref:
        return not alive
    return alive


def _same_object(record: Record, verdict: Verdict) -> bool:
    """An event about another object than the one we already hold changes nothing."""
    if verdict.outcome == "unknown" or verdict.provider_ref is None:
        return False
    return record.provider_ref in (None, verdict.provider_ref)


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def handle(
    call: str, request: dict[str, Any], state_dir: str, strategy: str = DEFAULT_STRATEGY
) -> dict[str, Any]:
    """Runs one call. Anything the adapter cannot act on becomes a reply that
    says so (``unknown`` or a rejected webhook), never a crash."""
    op_id = request.get("operation_id")
    if call == "execute":
        operation = request.get("operation")
        op_id = operation.get("id") if isinstance(operation, dict) else None
    try:
        common = parse_common(request)
        # status only reads: it opens the store without creating anything.
        adapter = Adapter(Store(state_dir, create=call != "status"), common, strategy)
        handler = getattr(adapter, call)
        return handler(request)
    except BadRequest as err:
        log(f"{call}: {err}")
        if call == "webhook":
            return {"accepted": False, "operation_id": None}
        return unknown_reply(op_id, f"cannot act on this request: {err}")
    except StoreError as err:
        log(f"{call}: {err}")
        if call == "webhook":
            return {"accepted": False, "operation_id": None}
        return unknown_reply(op_id, f"the durable store failed: {err}", needs_review=True)


def parse_argv(args: list[str]) -> tuple[str, str] | None:
    """``[--strategy NAME] CALL`` (or ``--strategy=NAME``) as (strategy,
    call); ``None`` for anything else. The call comes last because the
    harness appends it to the adapter's command line."""
    strategy = DEFAULT_STRATEGY
    if len(args) == 3 and args[0] == "--strategy":
        strategy, args = args[1], args[2:]
    elif len(args) == 2 and args[0].startswith("--strategy="):
        strategy, args = args[0].split("=", 1)[1], args[1:]
    if len(args) != 1 or args[0] not in (*CALLS, SERVE) or strategy not in STRATEGIES:
        return None
    return strategy, args[0]


def read_request(call: str, raw: bytes, source: str) -> dict[str, Any] | None:
    """One request as the protocol sends it, or ``None`` (logged) for misuse."""
    if len(raw) > MAX_REQUEST_BYTES:
        log(f"{call}: {source} is larger than {MAX_REQUEST_BYTES} bytes")
        return None
    try:
        request = json.loads(raw)
    except ValueError as err:
        log(f"{call}: {source} is not JSON: {err}")
        return None
    if not isinstance(request, dict):
        log(f"{call}: {source} must be one JSON object, got {type(request).__name__}")
        return None
    if request.get("protocol") != PROTOCOL_VERSION:
        log(f"{call}: request protocol is {request.get('protocol')!r}; this adapter speaks {PROTOCOL_VERSION}")
        return None
    return request


def serve(state_dir: str, strategy: str) -> int:
    """The persistent form: one ``{"call", "request"}`` line in, one reply line
    out, until end of file (exit 0). A line that is not such a message is
    protocol misuse, as a bad stdin is per call: a message on stderr and exit
    status 2, after every earlier line was answered."""
    while True:
        line = sys.stdin.buffer.readline(MAX_REQUEST_BYTES + 2)
        if not line:
            return 0
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError as err:
            log(f"{SERVE}: a line is not JSON: {err}")
            return 2
        call = message.get("call") if isinstance(message, dict) else None
        if call not in CALLS or not isinstance(message.get("request"), dict):
            log(f"{SERVE}: each line must be {{\"call\": <{'|'.join(CALLS)}>, \"request\": {{...}}}}, got {line[:200]!r}")
            return 2
        request = message["request"]
        if request.get("protocol") != PROTOCOL_VERSION:
            log(f"{call}: request protocol is {request.get('protocol')!r}; this adapter speaks {PROTOCOL_VERSION}")
            return 2
        reply = handle(call, request, state_dir, strategy)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> int:
    """Protocol plumbing: argv, environment, stdin, stdout, exit status."""
    parsed = parse_argv(argv[1:])
    if parsed is None:
        log(f"usage: {USAGE} (got {argv[1:]!r})")
        return 2
    strategy, call = parsed
    version = os.environ.get("LOSTREPLY_PROTOCOL")
    if version is not None and version != str(PROTOCOL_VERSION):
        log(f"LOSTREPLY_PROTOCOL={version!r}: this adapter speaks protocol {PROTOCOL_VERSION} only")
        return 2
    state_dir = os.environ.get("LOSTREPLY_STATE_DIR")
    if not state_dir:
        log("LOSTREPLY_STATE_DIR is not set: there is nowhere to keep the durable store")
        return 2
    if call == SERVE:
        return serve(state_dir, strategy)
    request = read_request(call, sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1), "stdin")
    if request is None:
        return 2
    reply = handle(call, request, state_dir, strategy)
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
