"""Shared plumbing of the SDK adapters: the adapter protocol (v1), the durable store, the locks.

The adapters in this directory (stripe_adapter.py, openai_adapter.py, anthropic_adapter.py and
their naive twins) each use a provider's official SDK as the transport. What they have in
common lives here, once, so that the files that differ show only what differs: how each SDK
is set up, what its answers and errors mean, and how each provider can be asked afterwards.

* protocol I/O: ``main`` reads the call name from argv and one JSON object from stdin (or, for
  ``serve``, one ``{"call", "request"}`` line at a time) and writes one JSON object per call;
  it exits non-zero only for misuse of the protocol (docs/adapter-protocol.md).
* request parsing: ``parse_common`` reads the fields every call carries, including the
  provider-profile additions (``provider.contract.profile``), leniently where a profile
  leaves a field out (Anthropic's contract has no lookup at all).
* the store: one JSON record per operation under ``$LOSTREPLY_STATE_DIR/ops/``, replaced
  atomically (write, fsync, rename, fsync the directory), and one ``flock`` per operation,
  which the kernel releases when its holder dies, so a crash never leaves an operation locked.
  The Node adapters (../node/lr_common.mjs) use the same files and the same locks.
* ``AdapterBase``: the parts of the five calls that do not depend on the provider: intent
  written before the first send, terminal outcomes that never change, the operator's
  resolution as final, ``status`` that only reads, and escalation when no rung of the ladder
  can give evidence any more.

* planted flaws: ``main`` takes ``--flaw NAME`` before the call name (the harness appends the
  call). An adapter lists the flaws it can plant (``FLAWS``); each one changes exactly one thing,
  in a branch marked ``FLAW <name>``, so that the scenario libraries can be shown to catch real
  mistakes in a correct adapter, not only in a naive one. Two of them live here because the
  lock and the intent record do: ``no-lock`` and ``intent-in-memory``. Without ``--flaw`` no
  branch is taken.

Standard library only: the SDKs are imported by the adapters, not here.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import inspect
import json
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

PROTOCOL_VERSION = 1
CALLS = ("execute", "reconcile", "webhook", "resolve", "status")
SERVE = "serve"
TERMINAL = ("succeeded", "failed")
OUTCOMES = ("unknown", "pending", "succeeded", "failed")

# Operation ids name files in the store: nothing outside this alphabet reaches a path.
OPERATION_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")

MAX_REQUEST_BYTES = 8 * 1024 * 1024
MAX_EVENTS_REMEMBERED = 1000

# A safety net on top of the situation rule (``AdapterBase.dead_end``): after this many
# reconciles in a row without evidence, automation stops and a person is asked.
MAX_INCONCLUSIVE_RECONCILES = 5

# Standard tolerance of signed webhook timestamps, checked against the request's ``now``.
WEBHOOK_TOLERANCE_S = 300

_PROGRAM = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "adapter"

# The planted flaw this process runs with (``--flaw NAME``), or None: the correct adapter.
FLAW: str | None = None


def flawed(name: str) -> bool:
    """Whether this process plants the flaw ``name``."""
    return FLAW == name


def log(message: str) -> None:
    """Diagnostics go to stderr: the harness keeps them next to the step."""
    print(f"{_PROGRAM}: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Requests
# --------------------------------------------------------------------------


class BadRequest(Exception):
    """A request field is missing or malformed: the reply is ``unknown`` saying so."""


class StoreError(Exception):
    """The durable store failed: no claim can be made safely; a person must look."""


@dataclass(frozen=True)
class Contract:
    """``provider.contract``: what the provider documents about itself."""

    profile: str
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
        return self.idempotency_mode != "none"


@dataclass(frozen=True)
class Common:
    """The fields every call carries."""

    now: dt.datetime
    base_url: str
    credential: str
    contract: Contract
    client_timeout_ms: int

    @property
    def timeout_s(self) -> float:
        return self.client_timeout_ms / 1000

    @property
    def now_unix(self) -> int:
        return int(self.now.timestamp())


def field_of(obj: Any, name: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    """``obj[name]`` checked against ``kind`` (a bool is never accepted as an int)."""
    if not isinstance(obj, dict) or name not in obj:
        raise BadRequest(f"request lacks {where}{name}")
    value = obj[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise BadRequest(f"request field {where}{name} has the wrong type")
    return value


def _flag(obj: Any, name: str) -> bool:
    value = obj.get(name, False) if isinstance(obj, dict) else False
    return value is True


def parse_time(text: str) -> dt.datetime:
    """RFC 3339 with ``Z`` or an offset and any number of fraction digits."""
    match = re.fullmatch(
        r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text
    )
    if match is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    date, clock, fraction, offset = match.groups()
    micros = (fraction or ".0")[1:7].ljust(6, "0")
    zone = "+00:00" if offset in ("Z", "z") else offset
    return dt.datetime.fromisoformat(f"{date}T{clock}.{micros}{zone}")


def format_time_exact(moment: dt.datetime) -> str:
    """RFC 3339 in UTC with microseconds: retention is counted from it, so no rounding."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_common(request: dict[str, Any]) -> Common:
    """Reads the common fields; raises ``BadRequest`` naming the first bad one."""
    try:
        now = parse_time(field_of(request, "now", str))
    except ValueError as err:
        raise BadRequest(f"request field now: {err}") from None
    provider = field_of(request, "provider", dict)
    contract = field_of(provider, "contract", dict, "provider.")
    idem = contract.get("idempotency") if isinstance(contract.get("idempotency"), dict) else {}
    lookup = contract.get("lookup") if isinstance(contract.get("lookup"), dict) else {}
    webhooks = contract.get("webhooks")
    if webhooks is not None and not isinstance(webhooks, dict):
        raise BadRequest("request field provider.contract.webhooks must be null or an object")
    secret = field_of(webhooks, "secret", str, "provider.contract.webhooks.") if webhooks else None
    timeout_ms = field_of(request, "client_timeout_ms", int)
    if timeout_ms <= 0:
        raise BadRequest("request field client_timeout_ms must be positive")
    base_url = field_of(provider, "base_url", str, "provider.").rstrip("/")
    if not re.match(r"https?://", base_url):
        raise BadRequest(f"provider.base_url must be http(s), got {base_url!r}")
    mode = idem.get("mode", "none")
    retention = idem.get("retention_s", 0)
    profile = contract.get("profile", "generic")
    return Common(
        now=now,
        base_url=base_url,
        credential=field_of(provider, "credential", str, "provider."),
        contract=Contract(
            profile=profile if isinstance(profile, str) else "generic",
            idempotency_mode=mode if isinstance(mode, str) else "none",
            idempotency_header=idem.get("header") or "Idempotency-Key",
            retention_s=retention if isinstance(retention, int) and not isinstance(retention, bool) else 0,
            retrieve=_flag(lookup, "retrieve"),
            client_reference=_flag(lookup, "client_reference"),
            list_recent=_flag(lookup, "list_recent"),
            asynchronous=_flag(contract, "asynchronous"),
            webhook_secret=secret,
        ),
        client_timeout_ms=timeout_ms,
    )


def check_operation_id(value: Any) -> str:
    if not isinstance(value, str) or OPERATION_ID_RE.match(value) is None:
        raise BadRequest(
            f"operation id {value!r} is not a valid id ([A-Za-z0-9_.-], 1 to 64 characters); nothing was done"
        )
    return value


def lower_headers(headers: Any) -> dict[str, str]:
    if not isinstance(headers, dict):
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


def sdk_call_kwargs(method: Callable[..., Any], body: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments that make a Stainless SDK method (openai, anthropic) send exactly
    ``body``: fields the method names go as keywords, the others in ``extra_body``, which the
    SDK merges into the JSON body unchanged. A field an SDK version does not know yet is then
    still sent, rather than refused with a TypeError before anything went out."""
    names = {
        p.name
        for p in inspect.signature(method).parameters.values()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    } - {"extra_headers", "extra_query", "extra_body", "timeout"}
    kwargs = {k: v for k, v in body.items() if k in names}
    extra = {k: v for k, v in body.items() if k not in names}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


# --------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------


@dataclass
class Record:
    """What the adapter knows about one operation, as stored on disk.

    ``in_flight`` is set (and saved) before every create is handed to the SDK and cleared
    after its answer is classified; a record found with it set belonged to a process that died
    while a create was on the wire, so that create counts as ambiguous. ``ambiguous`` is true
    once any create of this operation may have committed without our seeing the answer: from
    then on a rejection is no proof that nothing happened.
    """

    op_id: str
    resource: str
    args: dict[str, Any]
    key: str | None
    first_sent_at: str
    outcome: str = "unknown"
    provider_ref: str | None = None
    needs_review: bool = False
    evidence: str = "create about to be sent"
    inconclusive: int = 0
    events_seen: list[str] = field(default_factory=list)
    in_flight: bool = False
    ambiguous: bool = False
    sends: int = 0

    @property
    def terminal(self) -> bool:
        return self.outcome in TERMINAL

    def reply(self, evidence: str | None = None) -> dict[str, Any]:
        return {
            "operation_id": self.op_id,
            "outcome": self.outcome,
            "provider_ref": self.provider_ref,
            "needs_review": self.needs_review,
            "evidence": self.evidence if evidence is None else evidence,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": {"id": self.op_id, "resource": self.resource, "args": self.args},
            "key": self.key,
            "first_sent_at": self.first_sent_at,
            "outcome": self.outcome,
            "provider_ref": self.provider_ref,
            "needs_review": self.needs_review,
            "evidence": self.evidence,
            "inconclusive": self.inconclusive,
            "events_seen": self.events_seen,
            "in_flight": self.in_flight,
            "ambiguous": self.ambiguous,
            "sends": self.sends,
        }

    @classmethod
    def from_json(cls, data: Any) -> "Record":
        try:
            operation = data["operation"]
            if not isinstance(operation.get("args"), dict):
                raise TypeError("operation.args is not an object")
            record = cls(
                op_id=str(operation["id"]),
                resource=str(operation["resource"]),
                args=operation["args"],
                key=data.get("key"),
                first_sent_at=str(data["first_sent_at"]),
                outcome=str(data["outcome"]),
                provider_ref=data.get("provider_ref"),
                needs_review=bool(data.get("needs_review", False)),
                evidence=str(data.get("evidence", "")),
                inconclusive=int(data.get("inconclusive", 0)),
                events_seen=[str(e) for e in data.get("events_seen", [])],
                in_flight=bool(data.get("in_flight", False)),
                ambiguous=bool(data.get("ambiguous", False)),
                sends=int(data.get("sends", 0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise StoreError(f"stored record is malformed: {err}") from None
        if record.outcome not in OUTCOMES:
            raise StoreError(f"stored record has an unknown outcome {record.outcome!r}")
        return record


class Store:
    """``<state dir>/ops/<id>.json`` replaced atomically, ``<id>.lock`` taken with ``flock``."""

    def __init__(self, state_dir: str, create: bool = True) -> None:
        self.ops_dir = os.path.join(state_dir, "ops")
        if create:
            try:
                os.makedirs(self.ops_dir, exist_ok=True)
            except OSError as err:
                raise StoreError(f"cannot create the store in {self.ops_dir}: {err}") from None

    def _path(self, op_id: str, suffix: str) -> str:
        if OPERATION_ID_RE.match(op_id) is None:
            raise StoreError(f"refusing a store path for operation id {op_id!r}")
        return os.path.join(self.ops_dir, op_id + suffix)

    @contextlib.contextmanager
    def lock(self, op_id: str) -> Iterator[None]:
        """Exclusive lock on one operation; blocks until the holder's call ends (or it dies)."""
        try:
            fd = os.open(self._path(op_id, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as err:
            raise StoreError(f"cannot open the lock for {op_id}: {err}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def load(self, op_id: str) -> Record | None:
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
        final = self._path(record.op_id, ".json")
        # The temporary file is this process's own: the lock is what serialises writers, and a
        # shared name would turn a missing lock into a store error instead of the lost update
        # that it is.
        tmp = f"{final}.{os.getpid()}.tmp"
        payload = json.dumps(record.to_json(), sort_keys=True, indent=2).encode()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view):]
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
# Claims
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """A claim and what it rests on. ``inconclusive``: unknown and nobody asked yet."""

    outcome: str
    provider_ref: str | None
    evidence: str
    needs_review: bool = False

    @property
    def inconclusive(self) -> bool:
        return self.outcome == "unknown" and not self.needs_review

    def prefixed(self, prefix: str) -> "Verdict":
        return Verdict(self.outcome, self.provider_ref, f"{prefix}: {self.evidence}", self.needs_review)


def unknown_reply(op_id: Any, evidence: str, needs_review: bool = False) -> dict[str, Any]:
    return {
        "operation_id": op_id if isinstance(op_id, str) else "",
        "outcome": "unknown",
        "provider_ref": None,
        "needs_review": needs_review,
        "evidence": evidence,
    }


REJECTED = {"accepted": False, "operation_id": None}


class AdapterBase:
    """The provider-independent half of the five calls. A subclass supplies:

    * ``PROFILE``: the ``provider.contract.profile`` it speaks; RESOURCES: the resources;
    * ``send_first(record)``: execute's sending, after the intent is saved;
    * ``reconcile_locked(record)``: what reconcile learns about a non-terminal record;
    * ``dead_end(record)``: why no rung of the ladder can give evidence any more, or None;
    * ``webhook(request)``.
    """

    PROFILE = "generic"
    RESOURCES: tuple[str, ...] = ()

    def __init__(self, store: Store, common: Common) -> None:
        self.store = store
        self.common = common
        self.contract = common.contract

    # -- hooks -------------------------------------------------------------

    def key_for(self, op_id: str) -> str | None:
        return None

    def validate_args(self, resource: str, args: dict[str, Any]) -> None:
        """Raises ``BadRequest`` for arguments this adapter cannot send (before any intent)."""

    def send_first(self, record: Record) -> Verdict:
        raise NotImplementedError

    def reconcile_locked(self, record: Record) -> Verdict:
        raise NotImplementedError

    def dead_end(self, record: Record) -> str | None:
        raise NotImplementedError

    def webhook(self, request: dict[str, Any]) -> dict[str, Any]:
        log("webhook rejected: this adapter takes no webhooks for this profile")
        return dict(REJECTED)

    # -- helpers -----------------------------------------------------------

    def check_profile(self) -> None:
        if self.contract.profile != self.PROFILE:
            raise BadRequest(
                f"this adapter speaks the {self.PROFILE} profile, the provider's contract says "
                f"{self.contract.profile!r}; nothing was sent"
            )

    def age_s(self, record: Record) -> float:
        """Seconds since the first send, by the simulator clock (``now``)."""
        return (self.common.now - parse_time(record.first_sent_at)).total_seconds()

    def key_retained(self, record: Record) -> bool:
        return record.key is not None and self.contract.has_keys and self.age_s(record) < self.contract.retention_s

    def lock(self, op_id: str) -> contextlib.AbstractContextManager[None]:
        """The operation's lock: one process at a time decides, sends and writes for it."""
        if flawed("no-lock"):
            # FLAW no-lock: nothing is serialised. Two reconcilers both look, both find
            # nothing, both create.
            return contextlib.nullcontext()
        return self.store.lock(op_id)

    def save_before_send(self, record: Record) -> None:
        """Makes the record durable before the SDK sends anything: a process that dies with a
        create on the wire leaves its key and its intent behind."""
        if flawed("intent-in-memory") and record.sends <= 1:
            # FLAW intent-in-memory: the first create goes out before anything is written; the
            # record is first saved with the answer, so a crash in between leaves nothing.
            return
        self.store.save(record)

    @contextlib.contextmanager
    def locked_record(self, op_id: str) -> Iterator[Record | None]:
        """The record under its lock, or None (no lock file for ids the store never knew)."""
        if self.store.load(op_id) is None:
            yield None
            return
        with self.lock(op_id):
            record = self.store.load(op_id)
            if record is not None and record.in_flight:
                # Its process died with a create on the wire: that create may have committed.
                record.in_flight = False
                record.ambiguous = True
            yield record

    def begin_send(self, record: Record) -> None:
        """Durably marks a create as on the wire before the SDK gets it."""
        record.in_flight = True
        record.sends += 1
        self.save_before_send(record)

    def end_send(self, record: Record, ambiguous: bool) -> None:
        record.in_flight = False
        record.ambiguous = record.ambiguous or ambiguous

    def apply(self, record: Record, verdict: Verdict, reconciling: bool) -> None:
        """Folds a verdict into the record without ever regressing, then escalates when the
        situation (or the safety net) says so. Terminal outcomes never change; a known object
        is never forgotten; a request for review is taken back only by evidence."""
        if record.terminal:
            return
        if verdict.inconclusive:
            if reconciling:
                record.inconclusive += 1
            if record.needs_review:
                log(f"{record.op_id}: still awaiting review; no new evidence: {verdict.evidence}")
            elif record.outcome == "pending":
                record.evidence = f"still pending as last seen; {verdict.evidence}"
            else:
                record.evidence = verdict.evidence
        elif verdict.outcome == "unknown" and record.outcome == "pending":
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
            record.needs_review = False
            return
        reason = self.dead_end(record)
        if reason is not None and not record.needs_review:
            record.needs_review = True
            record.evidence += f"; {reason}"
        if record.inconclusive >= MAX_INCONCLUSIVE_RECONCILES and not record.needs_review:
            record.needs_review = True
            record.evidence += (
                f" ({record.inconclusive} reconciles in a row without evidence: automation stopped, "
                "a person must check)"
            )

    # -- the calls -----------------------------------------------------------

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        operation = field_of(request, "operation", dict)
        op_id = check_operation_id(operation.get("id"))
        action = operation.get("action", "create")
        if action != "create":
            raise BadRequest(f"operation.action {action!r} is not create; nothing was sent")
        resource = field_of(operation, "resource", str, "operation.")
        if resource not in self.RESOURCES:
            raise BadRequest(
                f"operation.resource {resource!r} is not one of {', '.join(self.RESOURCES)}; nothing was sent"
            )
        args = field_of(operation, "args", dict, "operation.")
        self.check_profile()
        self.validate_args(resource, args)
        with self.lock(op_id):
            record = self.store.load(op_id)
            if record is not None:
                if record.in_flight:
                    record.in_flight = False
                    record.ambiguous = True
                # Never execute twice: a terminal record is the answer; otherwise find out,
                # exactly as reconcile would.
                if not record.terminal:
                    self.apply(record, self.reconcile_locked(record), reconciling=True)
                    self.store.save(record)
                return record.reply()
            record = Record(
                op_id=op_id,
                resource=resource,
                args=args,
                key=self.key_for(op_id),
                first_sent_at=format_time_exact(self.common.now),
            )
            # Intent is durable before the SDK sends anything.
            self.save_before_send(record)
            self.apply(record, self.send_first(record), reconciling=False)
            self.store.save(record)
            return record.reply()

    def reconcile(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        with self.locked_record(op_id) as record:
            if record is None:
                return unknown_reply(op_id, "no record of this operation in the store")
            if not record.terminal:
                self.apply(record, self.reconcile_locked(record), reconciling=True)
                self.store.save(record)
            return record.reply()

    def resolve(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        resolution = field_of(request, "resolution", dict)
        outcome = field_of(resolution, "outcome", str, "resolution.")
        if outcome not in TERMINAL:
            raise BadRequest(f"resolution.outcome must be succeeded or failed, got {outcome!r}; nothing was changed")
        provider_ref = resolution.get("provider_ref")
        if provider_ref is not None and not isinstance(provider_ref, str):
            raise BadRequest("resolution.provider_ref must be a string or null; nothing was changed")
        said = resolution.get("evidence") if isinstance(resolution.get("evidence"), str) else ""
        with self.locked_record(op_id) as record:
            if record is None:
                return unknown_reply(op_id, "no record of this operation in the store; resolution not applied")
            if record.terminal:
                return record.reply(f"resolution ignored: the outcome was already final ({record.evidence})")
            record.outcome = outcome
            record.provider_ref = provider_ref
            record.needs_review = False
            record.evidence = f"operator: {said}"
            self.store.save(record)
            return record.reply()

    def status(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        # No lock and no network: records are replaced atomically; status changes nothing.
        record = self.store.load(op_id)
        if record is None:
            return unknown_reply(op_id, "no record of this operation in the store")
        return record.reply()

    def apply_event(self, op_id: str, event_id: str, verdict: Verdict | None) -> dict[str, Any]:
        """The locked half of a webhook: dedupe by event id, then apply without regressing.
        ``verdict`` is None for an event that proves nothing about the operation."""
        with self.locked_record(op_id) as record:
            if record is None:
                return {"accepted": True, "operation_id": None}
            if event_id in record.events_seen:
                return {"accepted": True, "operation_id": op_id}
            record.events_seen = (record.events_seen + [event_id])[-MAX_EVENTS_REMEMBERED:]
            if (
                verdict is not None
                and verdict.outcome != "unknown"
                and verdict.provider_ref is not None
                and record.provider_ref in (None, verdict.provider_ref)
            ):
                self.apply(record, verdict, reconciling=False)
            self.store.save(record)
            return {"accepted": True, "operation_id": op_id}


class NaiveBase:
    """What the naive adapters share: the outcome is written only after the SDK returned (no
    intent before the send, no lock), reconcile sends nothing and repeats what was written, and
    an operator's resolution simply overwrites. A subclass supplies ``send(resource, args,
    op_id) -> (outcome, provider_ref, evidence)`` and, if it takes webhooks, ``webhook``."""

    def __init__(self, store: Store, common: Common) -> None:
        self.store = store
        self.common = common

    def send(self, resource: str, args: dict[str, Any], op_id: str) -> tuple[str, str | None, str]:
        raise NotImplementedError

    def execute(self, request: dict[str, Any]) -> dict[str, Any]:
        operation = field_of(request, "operation", dict)
        op_id = check_operation_id(operation.get("id"))
        resource = field_of(operation, "resource", str, "operation.")
        args = field_of(operation, "args", dict, "operation.")
        outcome, ref, said = self.send(resource, args, op_id)
        record = Record(
            op_id=op_id, resource=resource, args=args, key=None,
            first_sent_at=format_time_exact(self.common.now),
            outcome=outcome, provider_ref=ref, evidence=said,
        )
        self.store.save(record)
        return record.reply()

    def status(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        record = self.store.load(op_id)
        if record is None:
            return unknown_reply(op_id, "no record of this operation in the store")
        return record.reply()

    def reconcile(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.status(request)

    def resolve(self, request: dict[str, Any]) -> dict[str, Any]:
        op_id = check_operation_id(request.get("operation_id"))
        resolution = field_of(request, "resolution", dict)
        record = self.store.load(op_id)
        if record is None:
            return unknown_reply(op_id, "no record of this operation in the store")
        outcome = resolution.get("outcome")
        record.outcome = outcome if outcome in TERMINAL else record.outcome
        record.provider_ref = resolution.get("provider_ref")
        record.evidence = f"operator: {resolution.get('evidence')}"
        self.store.save(record)
        return record.reply()

    def webhook(self, request: dict[str, Any]) -> dict[str, Any]:
        log("webhook rejected: this adapter takes no webhooks")
        return dict(REJECTED)


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------

Handler = Callable[[str, dict[str, Any], str], dict[str, Any]]


def make_handler(factory: Callable[[Store, Common], Any]) -> Handler:
    """A handler running one call on an adapter made by ``factory``: every request it cannot
    act on becomes an honest reply (``unknown`` with evidence, or a refused webhook)."""

    def handle(call: str, request: dict[str, Any], state_dir: str) -> dict[str, Any]:
        op_id = request.get("operation_id")
        if call == "execute":
            operation = request.get("operation")
            op_id = operation.get("id") if isinstance(operation, dict) else None
        try:
            common = parse_common(request)
            adapter = factory(Store(state_dir, create=call != "status"), common)
            return getattr(adapter, call)(request)
        except BadRequest as err:
            log(f"{call}: {err}")
            return dict(REJECTED) if call == "webhook" else unknown_reply(op_id, f"cannot act on this request: {err}")
        except StoreError as err:
            log(f"{call}: {err}")
            if call == "webhook":
                return dict(REJECTED)
            return unknown_reply(op_id, f"the durable store failed: {err}", needs_review=True)
        except Exception as err:  # a bug of ours or of an SDK: say so, never guess
            log(f"{call}: unexpected {type(err).__name__}: {err}\n{traceback.format_exc()}")
            if call == "webhook":
                return dict(REJECTED)
            return unknown_reply(
                op_id, f"the adapter failed unexpectedly ({type(err).__name__}: {err}); a person must check",
                needs_review=True,
            )

    return handle


def _read_request(call: str, raw: bytes, source: str) -> dict[str, Any] | None:
    if len(raw) > MAX_REQUEST_BYTES:
        log(f"{call}: {source} is larger than {MAX_REQUEST_BYTES} bytes")
        return None
    try:
        request = json.loads(raw)
    except ValueError as err:
        log(f"{call}: {source} is not JSON: {err}")
        return None
    if not isinstance(request, dict):
        log(f"{call}: {source} must be one JSON object")
        return None
    if request.get("protocol") != PROTOCOL_VERSION:
        log(f"{call}: request protocol is {request.get('protocol')!r}; this adapter speaks {PROTOCOL_VERSION}")
        return None
    return request


def _serve(handle: Handler, state_dir: str) -> int:
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
            log(f"{SERVE}: each line must be {{\"call\": <{'|'.join(CALLS)}>, \"request\": {{...}}}}")
            return 2
        if message["request"].get("protocol") != PROTOCOL_VERSION:
            log(f"{call}: request protocol is {message['request'].get('protocol')!r}; this adapter speaks {PROTOCOL_VERSION}")
            return 2
        sys.stdout.write(json.dumps(handle(call, message["request"], state_dir)) + "\n")
        sys.stdout.flush()


def take_flaw(args: list[str], flaws: tuple[str, ...]) -> tuple[str | None, list[str]] | None:
    """``[--flaw NAME] CALL`` (or ``--flaw=NAME``) as (flaw, the rest); None when NAME is not one
    of ``flaws``. The call comes last because the harness appends it to the command line."""
    if len(args) >= 2 and args[0] == "--flaw":
        name, rest = args[1], args[2:]
    elif args and args[0].startswith("--flaw="):
        name, rest = args[0].split("=", 1)[1], args[1:]
    else:
        return None, args
    return (name, rest) if name in flaws else None


def main(argv: list[str], handle: Handler, flaws: tuple[str, ...] = ()) -> int:
    """Protocol plumbing: argv (with ``--flaw NAME`` where the adapter plants ``flaws``),
    environment, stdin, stdout, exit status."""
    global FLAW
    flaw_option = "[--flaw " + "|".join(flaws) + "] " if flaws else ""
    usage = f"usage: {_PROGRAM} {flaw_option}<{'|'.join((*CALLS, SERVE))}>"
    taken = take_flaw(argv[1:], flaws)
    if taken is None:
        log(f"{usage} (got {argv[1:]!r}: no such flaw)")
        return 2
    FLAW, args = taken
    if len(args) != 1 or args[0] not in (*CALLS, SERVE):
        log(f"{usage} (got {argv[1:]!r})")
        return 2
    call = args[0]
    version = os.environ.get("LOSTREPLY_PROTOCOL")
    if version is not None and version != str(PROTOCOL_VERSION):
        log(f"LOSTREPLY_PROTOCOL={version!r}: this adapter speaks protocol {PROTOCOL_VERSION} only")
        return 2
    state_dir = os.environ.get("LOSTREPLY_STATE_DIR")
    if not state_dir:
        log("LOSTREPLY_STATE_DIR is not set: there is nowhere to keep the durable store")
        return 2
    if call == SERVE:
        return _serve(handle, state_dir)
    request = _read_request(call, sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1), "stdin")
    if request is None:
        return 2
    sys.stdout.write(json.dumps(handle(call, request, state_dir)) + "\n")
    sys.stdout.flush()
    return 0
