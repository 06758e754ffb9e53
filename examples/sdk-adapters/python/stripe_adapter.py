#!/usr/bin/env python3
"""A correct lostreply adapter for the stripe profile, on the official SDK (stripe-python 16.x).

Usage: ``python stripe_adapter.py <execute|reconcile|webhook|resolve|status|serve>`` with the
adapter protocol's JSON on stdin (docs/adapter-protocol.md); run it with the interpreter of the
venv that holds the pinned SDK (requirements.txt next to this file).

It shows that the SDK, used the way Stripe's documentation recommends, is a sound transport
for an at-most-once payment, provided the adapter around it does what the SDK cannot:

* The SDK is set up as Stripe documents for a client object: ``StripeClient(api_key,
  base_addresses={"api": base_url}, max_network_retries=2, http_client=RequestsClient(timeout))``.
  ``StripeClient`` retries nothing unless told (docs/sdks.md), so the retries are asked for
  explicitly, and only while the contract says keys are honoured: without keys every SDK
  retry would be a second payment, so the retries drop to 0.
* One idempotency key per operation, ``lr-<op id>``, stored in the intent record before the
  first send and passed as ``options={"idempotency_key": ...}`` on every create of that
  operation (the SDK's own key is random per call, so a later process could not reuse it).
* The create carries ``args`` exactly (wire form, every scalar a string) plus
  ``metadata[operation_id]``: the harness traces requests by it, and Stripe search finds it.
* Classification (what an answer proves): an object is classified by its status
  (payment_intents: ``processing``/``requires_*`` -> pending, ``succeeded`` -> succeeded,
  ``canceled`` -> failed; customers: an answered create is succeeded; refunds: by status when
  the object has one). A connection error, a 5xx, a 409 or an unreadable 2xx body after the
  SDK's retries is ``unknown``. A definite rejection (400 other than an idempotency error,
  401, 402, 403, 404, 429) is ``failed`` only when no earlier attempt of the operation was
  ambiguous: a rejection answering a retry of a lost attempt can be caused by that attempt
  (a refund that already went through answers 400), so it proves nothing. The SDK hides its
  own retries, so the HTTP client records every attempt (``RecordingRequestsClient``) to tell.
* reconcile climbs the ladder: retrieve an object it knows; replay the create with the same
  key while Stripe retains it (24 h by the request's ``now``); otherwise search by metadata
  (only where Stripe has search, and an empty search is absence only once Stripe's documented
  search lag has passed) and list recent objects; re-create only when a lookup proved absence;
  ask a person (``needs_review``) when nothing can give evidence any more.
* webhooks: ``stripe.Webhook.construct_event`` checks the ``Stripe-Signature`` (HMAC-SHA256
  keyed by the whole ``whsec_...`` string over ``"{t}.{body}"``). Its freshness check uses the
  machine's clock, which is not the scenario's, so it is switched off (``tolerance=None``) and
  the timestamp is checked here against the request's ``now`` instead. Events are correlated
  by ``data.object.metadata.operation_id``, deduplicated by event id, and never regress a
  terminal record.

``--flaw NAME`` (before the call name) plants one mistake, each in a branch marked ``FLAW
<name>``, so that the stripe scenarios can be shown to catch it (examples/tests/it/sdk_verdicts.rs):
``new-key-per-attempt``, ``intent-in-memory``, ``no-lock`` (these two in lr_common.py),
``replay-expired-key``, ``processing-is-done``, ``lost-answer-is-failure``,
``unverified-webhooks``, ``webhook-regresses``, ``args-change-on-retry``.
"""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import dataclass
from typing import Any

import stripe

import lr_common as lr
from lr_common import Record, Verdict

# Stripe's statuses as outcomes. processing is "the provider has it and is still working";
# requires_* is an intent that exists and waits for something outside this operation.
PAYMENT_INTENT_OUTCOME = {
    "succeeded": "succeeded",
    "processing": "pending",
    "canceled": "failed",
    "requires_payment_method": "pending",
    "requires_confirmation": "pending",
    "requires_action": "pending",
    "requires_capture": "pending",
}
REFUND_OUTCOME = {
    "succeeded": "succeeded",
    "pending": "pending",
    "requires_action": "pending",
    "failed": "failed",
    "canceled": "failed",
}
# The Stripe object type of each resource of the profile (events name it, lists hold it).
OBJECT_TYPE = {"customers": "customer", "payment_intents": "payment_intent", "refunds": "refund"}
# Resources Stripe's Search API covers (of this profile's three; refunds have no search).
SEARCHABLE = ("customers", "payment_intents")

# The SDK's retries (same key, 0.5-1 s apart), asked for only while keys are honoured.
NETWORK_RETRIES = 2
# Stripe documents search as lagging writes: "under normal operating conditions, data is
# searchable in less than a minute ... can be up to an hour behind during outages"
# (stripe/_payment_intent_service.py, search). Only after that long is an empty search absence.
SEARCH_LAG_S = 3600
# list_recent looks a little before the first send.
LIST_WINDOW_BEFORE_S = 60
LIST_LIMIT = 100
# Definite rejections: the request was refused before anything ran.
REJECTIONS = (400, 401, 402, 403, 404, 429)

FLAWS = (
    "new-key-per-attempt",
    "intent-in-memory",
    "no-lock",
    "replay-expired-key",
    "processing-is-done",
    "lost-answer-is-failure",
    "unverified-webhooks",
    "webhook-regresses",
    "args-change-on-retry",
)


@dataclass(frozen=True)
class Attempt:
    """What one HTTP attempt inside the SDK saw. ``ambiguous``: it may have committed."""

    said: str
    ambiguous: bool


def _cause_chain(err: BaseException) -> list[BaseException]:
    """``err`` and every exception it wraps (causes, contexts, exception arguments and
    urllib3's ``reason``), breadth first: requests wraps urllib3 wraps http.client."""
    found: list[BaseException] = []
    queue: list[BaseException] = [err]
    while queue and len(found) < 20:
        current = queue.pop(0)
        if any(current is f for f in found):
            continue
        found.append(current)
        inner = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        queue.extend(e for e in inner if isinstance(e, BaseException))
    return found


class RecordingRequestsClient(stripe.RequestsClient):
    """The SDK's default HTTP client (requests), given ``client_timeout_ms``, that notes what
    each attempt saw. The SDK's retry loop calls ``request`` once per attempt
    (stripe/_http_client.py, ``_request_with_retries_internal``), so this is the only place
    that can tell "the first attempt was lost, the retry was refused" from "refused"."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(timeout=timeout_s)
        self.attempts: list[Attempt] = []

    def request(self, method, url, headers, post_data=None):  # type: ignore[override]
        path = url.split("://", 1)[-1]
        path = path[path.find("/"):] if "/" in path else path
        path = path.split("?", 1)[0]
        try:
            content, status, rheaders = super().request(method, url, headers, post_data)
        except stripe.APIConnectionError as err:
            chain = _cause_chain(err)
            names = {type(e).__name__ for e in chain}
            # Nothing reached the provider when the connection itself was refused or timed out.
            not_sent = bool(names & {"NewConnectionError", "ConnectTimeout", "ConnectTimeoutError", "ConnectionRefusedError"})
            deepest = chain[-1] if len(chain) > 1 else err
            detail = f"{type(deepest).__name__}: {deepest}"
            self.attempts.append(
                Attempt(f"{method.upper()} {path}: no answer ({detail[:200]})", ambiguous=not not_sent)
            )
            raise
        ambiguous = status == 409 or status >= 500
        if 200 <= status < 300:
            try:
                json.loads(content)
            except (ValueError, UnicodeDecodeError):
                ambiguous = True
        replayed = " (Idempotent-Replayed)" if rheaders.get("Idempotent-Replayed") == "true" else ""
        self.attempts.append(Attempt(f"{method.upper()} {path}: {status}{replayed}", ambiguous))
        return content, status, rheaders


def error_words(status: int | None, etype: str, code: str) -> str:
    """``400 invalid_request_error parameter_missing``, leaving out what Stripe did not say."""
    return " ".join(str(w) for w in (status, etype, code) if w)


def error_parts(err: stripe.StripeError) -> tuple[int | None, str, str]:
    """(status, error.type, error.code) of an SDK error, from the body Stripe sent."""
    body = err.json_body if isinstance(err.json_body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else {}
    return err.http_status, str(inner.get("type") or ""), str(inner.get("code") or err.code or "")


def classify_object(resource: str, obj: Any, source: str) -> Verdict:
    """What a Stripe object proves about the operation that created it."""
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"]:
        return Verdict("unknown", None, f"{source}: the answer is not an object with an id")
    oid = obj["id"]
    status = obj.get("status")
    if resource == "payment_intents":
        outcome = PAYMENT_INTENT_OUTCOME.get(status)  # type: ignore[arg-type]
        if lr.flawed("processing-is-done") and status == "processing":
            # FLAW processing-is-done: Stripe has the payment, so it is taken as made; it may
            # still settle canceled.
            outcome = "succeeded"
    elif resource == "refunds":
        outcome = "succeeded" if status is None else REFUND_OUTCOME.get(status)
    else:
        outcome = "succeeded"
    if outcome is None:
        return Verdict("unknown", None, f"{source}: object {oid} has an unrecognised status {status!r}")
    shown = f" is {status}" if status is not None else " exists"
    return Verdict(outcome, oid, f"{source}: object {oid}{shown}")


class StripeAdapter(lr.AdapterBase):
    PROFILE = "stripe"
    RESOURCES = ("customers", "payment_intents", "refunds")

    def __init__(self, store: lr.Store, common: lr.Common) -> None:
        super().__init__(store, common)
        self.http = RecordingRequestsClient(common.timeout_s)
        # Set by classify_error: the last create was refused, but after a lost attempt.
        self.rejected_after_loss = False
        self.client = stripe.StripeClient(
            common.credential,
            base_addresses={"api": common.base_url},
            max_network_retries=NETWORK_RETRIES if self.contract.has_keys else 0,
            http_client=self.http,
        )

    def key_for(self, op_id: str) -> str | None:
        if lr.flawed("intent-in-memory"):
            # FLAW intent-in-memory: a random key, as the SDK makes its own; with the record
            # unwritten until the answer (lr_common.py), a crash takes the key along.
            return f"lr-{uuid.uuid4().hex}"
        return f"lr-{op_id}"

    def key_retained(self, record: Record) -> bool:
        if lr.flawed("replay-expired-key"):
            # FLAW replay-expired-key: a stored key is replayed whatever its age; past Stripe's
            # 24 h the replay is a new payment.
            return record.key is not None and self.contract.has_keys
        return super().key_retained(record)

    def service(self, resource: str) -> Any:
        return getattr(self.client.v1, resource)

    # -- the create --------------------------------------------------------

    def create_params(self, record: Record) -> dict[str, Any]:
        """``args`` exactly, plus ``metadata[operation_id]`` (merged into args' own metadata)."""
        params = dict(record.args)
        metadata = params.get("metadata") if isinstance(params.get("metadata"), dict) else {}
        params["metadata"] = {**metadata, "operation_id": record.op_id}
        if lr.flawed("args-change-on-retry") and record.sends > 1:
            # FLAW args-change-on-retry: a retry says so in its description, so Stripe sees
            # other parameters under the same key.
            params["description"] = f"retry {record.sends - 1} of {record.op_id}"
        return params

    def send_create(self, record: Record) -> Verdict:
        """One SDK create (with the SDK's own same-key retries), classified."""
        ambiguous_before = record.ambiguous
        self.begin_send(record)
        self.http.attempts = []
        self.rejected_after_loss = False
        options: dict[str, Any] = {}
        if self.contract.has_keys and record.key is not None:
            options["idempotency_key"] = record.key
            if lr.flawed("new-key-per-attempt"):
                # FLAW new-key-per-attempt: every create call makes up its own key (the SDK
                # repeats it only on its own retries inside the call).
                options["idempotency_key"] = f"lr-{uuid.uuid4().hex}"
        try:
            obj = self.service(record.resource).create(params=self.create_params(record), options=options)
        except stripe.StripeError as err:
            verdict = self.classify_error(err, ambiguous_before)
        else:
            verdict = classify_object(record.resource, obj.to_dict(), f"create answered [{self.attempts_said()}]")
        self.end_send(record, any(a.ambiguous for a in self.http.attempts))
        return verdict

    def attempts_said(self) -> str:
        return "; ".join(a.said for a in self.http.attempts) or "no attempt reached the HTTP client"

    def classify_error(self, err: stripe.StripeError, ambiguous_before: bool) -> Verdict:
        status, etype, code = error_parts(err)
        seen = f"[{self.attempts_said()}]"
        if isinstance(err, stripe.APIConnectionError) and lr.flawed("lost-answer-is-failure"):
            # FLAW lost-answer-is-failure: no answer is taken as a refusal.
            return Verdict("failed", None, f"{seen}: {type(err).__name__}: taken as a failure")
        if isinstance(err, stripe.APIConnectionError) or status is None:
            return Verdict("unknown", None, f"{seen}: {type(err).__name__}: the create may or may not have committed")
        if 200 <= status < 300:
            return Verdict("unknown", None, f"{seen}: the {status} body could not be read: may have committed")
        if status == 409:
            what = "the first request with our key is still in flight" if etype == "idempotency_error" else "a conflict"
            return Verdict("unknown", None, f"{seen}: {error_words(status, etype, code)}: {what}; not a failure")
        if status >= 500:
            return Verdict("unknown", None, f"{seen}: {error_words(status, etype, code)}: the provider may or may not have committed")
        if status == 400 and etype == "idempotency_error":
            return Verdict(
                "unknown", None,
                f"{seen}: {error_words(status, etype, code)}: our key was used with other arguments; "
                "never a success, never retried under another key; a person must check",
                needs_review=True,
            )
        if status in REJECTIONS:
            earlier = ambiguous_before or any(a.ambiguous for a in self.http.attempts[:-1])
            if earlier:
                self.rejected_after_loss = True
                return Verdict(
                    "unknown", None,
                    f"{seen}: {error_words(status, etype, code)} answers a retry of a create whose answer was lost: "
                    "no proof that nothing happened",
                )
            ref = None
            body = err.json_body if isinstance(err.json_body, dict) else {}
            inner = body.get("error") if isinstance(body.get("error"), dict) else {}
            if isinstance(inner.get("payment_intent"), dict) and isinstance(inner["payment_intent"].get("id"), str):
                ref = inner["payment_intent"]["id"]
            return Verdict("failed", ref, f"{seen}: rejected before execution: {error_words(status, etype, code)}")
        return Verdict("unknown", None, f"{seen}: unexpected {error_words(status, etype, code)}: cannot tell whether it committed")

    def send_first(self, record: Record) -> Verdict:
        # The SDK's own retries are the immediate same-key replays; what is still unknown
        # after them is left to reconcile.
        return self.send_create(record)

    # -- lookups -----------------------------------------------------------

    def retrieve(self, record: Record, ref: str | None = None) -> Verdict:
        ref = str(ref or record.provider_ref)
        self.http.attempts = []
        try:
            obj = self.service(record.resource).retrieve(ref)
        except stripe.StripeError as err:
            status, etype, _ = error_parts(err)
            if status == 404 and self.contract.retrieve:
                return Verdict(
                    "unknown", None,
                    f"retrieve of {ref} answered 404 although Stripe named it for this operation; "
                    "not re-created, a person must check",
                    needs_review=True,
                )
            return Verdict(
                "unknown", None,
                f"retrieve of {ref} proved nothing: [{self.attempts_said()}] {type(err).__name__} {error_words(status, etype, '')}",
            )
        verdict = classify_object(record.resource, obj.to_dict(), f"retrieve {ref}")
        if verdict.provider_ref not in (None, ref):
            return Verdict("unknown", None, f"retrieve of {ref} answered another object")
        return verdict

    def _ours(self, record: Record, obj: Any) -> bool:
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        return (
            isinstance(metadata, dict)
            and metadata.get("operation_id") == record.op_id
            and obj.get("object") in (None, OBJECT_TYPE[record.resource])
        )

    def _page(self, record: Record, how: str, call: Any) -> tuple[list[dict[str, Any]], bool, str | None]:
        """(our objects on the page, complete, problem) of one search or list."""
        self.http.attempts = []
        try:
            page = call().to_dict()
        except stripe.StripeError as err:
            status, etype, _ = error_parts(err)
            return [], False, f"{how} proved nothing: [{self.attempts_said()}] {type(err).__name__} {error_words(status, etype, '')}"
        data = page.get("data")
        if not isinstance(data, list):
            return [], False, f"{how} proved nothing: the answer has no data list"
        ours = [o for o in data if self._ours(record, o)]
        return ours, page.get("has_more") is not True, None

    def look_up(self, record: Record) -> tuple[dict[str, Any] | None, bool, str]:
        """(our object, absence proven, evidence) from the id-less lookups the contract offers."""
        problems: list[str] = []
        service = self.service(record.resource)
        if self.contract.client_reference and record.resource in SEARCHABLE:
            query = f"metadata['operation_id']:'{record.op_id}'"
            how = f"search {query}"
            ours, complete, problem = self._page(record, how, lambda: service.search(params={"query": query}))
            if ours:
                return ours[0], False, f"{how} found ours"
            if problem is not None:
                problems.append(problem)
            elif not complete:
                problems.append(f"{how} proved nothing: more than one page")
            elif self.age_s(record) >= SEARCH_LAG_S:
                return None, True, f"{how} found none, {int(self.age_s(record))} s after the first send"
            else:
                problems.append(f"{how} found none, but Stripe search may lag writes by up to {SEARCH_LAG_S} s")
        if self.contract.list_recent:
            since = int(lr.parse_time(record.first_sent_at).timestamp()) - LIST_WINDOW_BEFORE_S
            how = f"list of {record.resource} created since {since}"
            params = {"created": {"gte": str(since)}, "limit": str(LIST_LIMIT)}
            ours, complete, problem = self._page(record, how, lambda: service.list(params=params))
            before = "".join(f"{p}; then " for p in problems)
            if ours:
                return ours[0], False, f"{before}{how} found ours"
            if problem is not None:
                problems.append(problem)
            elif complete:
                return None, True, f"{before}{how} found none of ours"
            else:
                problems.append(f"{how} proved nothing: more than {LIST_LIMIT} objects and ours is not on the page")
        return None, False, "; ".join(problems) or "the contract offers no lookup without an id"

    def has_idless_lookup(self, record: Record) -> bool:
        return self.contract.list_recent or (self.contract.client_reference and record.resource in SEARCHABLE)

    def dead_end(self, record: Record) -> str | None:
        if self.has_idless_lookup(record):
            return None
        if record.provider_ref is not None:
            if self.contract.retrieve:
                return None
            return f"object {record.provider_ref} is known but the contract offers no lookup to follow it; a person must check"
        if self.key_retained(record):
            return None
        keys = "our idempotency key is past its retention" if self.contract.has_keys else "no idempotency keys"
        return f"{keys} and no lookup without an id: cannot tell whether the create committed; a person must check"

    def follow(self, record: Record, verdict: Verdict) -> Verdict:
        """A replay answers from the past (a payment intent replays ``processing`` forever):
        when it names a pending object and retrieve is offered, ask for its status now."""
        if verdict.outcome == "pending" and verdict.provider_ref is not None and self.contract.retrieve:
            now = self.retrieve(record, verdict.provider_ref)
            if now.outcome != "unknown":
                return Verdict(now.outcome, now.provider_ref, f"{verdict.evidence}; then {now.evidence}")
        return verdict

    def find_or_recreate(self, record: Record) -> Verdict:
        obj, absent, said = self.look_up(record)
        if obj is not None:
            return classify_object(record.resource, obj, said)
        if not absent:
            return Verdict("unknown", None, said)
        # Absence is proven: nothing of ours committed, so a create now is the first to count.
        record.ambiguous = False
        keyed = f" with key {record.key}" if self.contract.has_keys else ""
        return self.send_create(record).prefixed(f"{said}, so the create never committed; re-created{keyed}")

    def reconcile_locked(self, record: Record) -> Verdict:
        reason = self.dead_end(record)
        if reason is not None:
            return Verdict("unknown", None, reason, needs_review=True)
        if record.provider_ref is not None:
            if self.contract.retrieve:
                return self.retrieve(record)
            obj, _, said = self.look_up(record)
            if obj is not None and obj.get("id") == record.provider_ref:
                return classify_object(record.resource, obj, said)
            return Verdict("unknown", None, said)
        if self.key_retained(record):
            verdict = self.send_create(record).prefixed(f"replayed the create with key {record.key}")
            if self.rejected_after_loss:
                # A rejection of the replay after a lost attempt proves nothing: look instead.
                looked = self.find_or_recreate(record)
                return looked.prefixed(verdict.evidence) if looked.outcome != "unknown" else Verdict(
                    "unknown", None, f"{verdict.evidence}; {looked.evidence}", looked.needs_review
                )
            return self.follow(record, verdict)
        return self.find_or_recreate(record)

    # -- webhooks ----------------------------------------------------------

    def webhook(self, request: dict[str, Any]) -> dict[str, Any]:
        headers = lr.lower_headers(request.get("headers"))
        body = request.get("body")
        secret = self.contract.webhook_secret
        if not isinstance(body, str) or secret is None:
            lr.log("webhook rejected: no body, or the contract has no webhooks")
            return dict(lr.REJECTED)
        signature = headers.get("stripe-signature")
        try:
            event = _verified_event(body, signature, secret)
        except (stripe.SignatureVerificationError, ValueError) as err:
            lr.log(f"webhook rejected: {type(err).__name__}: {err}")
            return dict(lr.REJECTED)
        stamp = _signature_timestamp(signature or "")
        if stamp is None or abs(self.common.now_unix - stamp) > lr.WEBHOOK_TOLERANCE_S:
            lr.log(f"webhook rejected: timestamp {stamp} is more than {lr.WEBHOOK_TOLERANCE_S} s from now")
            return dict(lr.REJECTED)
        data = event.to_dict()
        event_id = data.get("id")
        obj = (data.get("data") or {}).get("object") if isinstance(data.get("data"), dict) else None
        if not isinstance(event_id, str) or not isinstance(obj, dict) or not isinstance(data.get("type"), str):
            lr.log("webhook rejected: event lacks id, type or data.object")
            return dict(lr.REJECTED)
        metadata = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        op_id = metadata.get("operation_id")
        if not isinstance(op_id, str) or lr.OPERATION_ID_RE.match(op_id) is None or self.store.load(op_id) is None:
            return {"accepted": True, "operation_id": None}
        record = self.store.load(op_id)
        verdict = None
        if record is not None and obj.get("object") == OBJECT_TYPE.get(record.resource):
            verdict = classify_object(record.resource, obj, f"event {event_id} ({data['type']})")
        return self.apply_event(op_id, event_id, verdict)

    def apply_event(self, op_id: str, event_id: str, verdict: Verdict | None) -> dict[str, Any]:
        if lr.flawed("webhook-regresses") and verdict is not None and verdict.outcome != "unknown":
            # FLAW webhook-regresses: the latest event's status is the record's, final or not.
            return self.overwrite_with_event(op_id, event_id, verdict)
        return super().apply_event(op_id, event_id, verdict)

    def overwrite_with_event(self, op_id: str, event_id: str, verdict: Verdict) -> dict[str, Any]:
        """``apply_event`` without the guard that keeps a terminal outcome final."""
        with self.locked_record(op_id) as record:
            if record is None:
                return {"accepted": True, "operation_id": None}
            if event_id not in record.events_seen and record.provider_ref in (None, verdict.provider_ref):
                record.events_seen = (record.events_seen + [event_id])[-lr.MAX_EVENTS_REMEMBERED:]
                record.outcome, record.provider_ref = verdict.outcome, verdict.provider_ref
                record.needs_review, record.evidence = False, verdict.evidence
                self.store.save(record)
            return {"accepted": True, "operation_id": op_id}


def _verified_event(body: str, signature: str | None, secret: str) -> Any:
    """The event, once ``Stripe-Signature`` proves Stripe sent it. tolerance=None: the SDK would
    compare the timestamp with the machine's clock (stripe/_webhook.py, verify_header); the
    scenario's clock is the request's ``now``, checked by the caller."""
    if lr.flawed("unverified-webhooks"):
        # FLAW unverified-webhooks: the body is trusted as it came; any signature will do.
        return stripe.Event.construct_from(json.loads(body), None)
    return stripe.Webhook.construct_event(body, signature, secret, tolerance=None)


def _signature_timestamp(header: str) -> int | None:
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def make(store: lr.Store, common: lr.Common) -> StripeAdapter:
    return StripeAdapter(store, common)


if __name__ == "__main__":
    sys.exit(lr.main(sys.argv, lr.make_handler(make), FLAWS))
