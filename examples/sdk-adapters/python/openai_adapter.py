#!/usr/bin/env python3
"""A correct lostreply adapter for the openai profile, on the official SDK (openai-python 3.x).

Usage: ``python openai_adapter.py <execute|reconcile|webhook|resolve|status|serve>`` (the
adapter protocol, docs/adapter-protocol.md), with the venv of requirements.txt.

OpenAI honours no idempotency key (the profile's contract says ``idempotency.mode: none``, and
the SDK sends none: docs/sdks.md), so every send of a create is a new, billed generation. The
adapter therefore:

* sets the SDK up as its README shows, but with the retries off and the protocol's timeout:
  ``OpenAI(base_url=base_url + "/v1", api_key=credential, max_retries=0,
  timeout=client_timeout_ms / 1000)``. With the default ``max_retries=2`` a lost answer after
  a commit becomes a second (and a third) generation, silently.
* sends the create once per operation, ever: a lost answer (timeout, reset, closed, 5xx, 409,
  unreadable body) is ``unknown``; nothing re-sends it, not even after a lookup shows nothing.
* makes the lost answer findable, where the API allows it. The harness compares ``args``, so
  the adapter may only add fields: for ``chat_completions`` it adds ``store: true`` (unless the
  args already set ``store``; with ``store`` false or null nothing can be found later) and
  ``metadata.operation_id`` (merged into the args' own metadata); for ``responses`` it adds
  ``metadata.operation_id`` (responses are stored by default).
* reconciles from what the contract offers: a stored chat completion is found through the
  stored-completions list filtered by metadata (``client.chat.completions.list(metadata=...)``,
  GET /v1/chat/completions?metadata[operation_id]=...); a response whose id is known is
  retrieved (GET /v1/responses/{id}). An empty list is taken as proof that the create never
  committed (``failed``, never re-sent) only once ``ABSENCE_SETTLE_S`` has passed since the
  send by the request's ``now``: a generation whose answer was lost may still be running.
  Where no lookup can find the operation (a response whose id never arrived, no
  ``client_reference`` lookup, ``store: false``) a person is asked at once (``needs_review``).

``--flaw NAME`` (before the call name) plants one mistake, each in a branch marked ``FLAW
<name>``, so that the openai scenarios can be shown to catch it (examples/tests/it/sdk_verdicts.rs):
``sdk-default-retries``, ``lost-answer-is-failure``, ``no-lock`` and ``intent-in-memory``
(these two in lr_common.py).
"""

from __future__ import annotations

import sys
from typing import Any

import lr_common as lr
from lr_common import BadRequest, Record, Verdict

# A response's status as an outcome. incomplete is a finished (and billed) generation cut
# short by a limit: the effect happened.
RESPONSE_OUTCOME = {
    "completed": "succeeded",
    "incomplete": "succeeded",
    "failed": "failed",
    "cancelled": "failed",
    "queued": "pending",
    "in_progress": "pending",
}
# Definite rejections: refused before any generation ran.
REJECTIONS = (400, 401, 403, 404, 422, 429)
# How long after the send an empty stored-completions list counts as absence. A lost
# generation can still be running server-side; OpenAI documents no bound, so the bound is the
# SDK's own default timeout (600 s, openai/_constants.py): how long OpenAI's client waits for
# one answer.
ABSENCE_SETTLE_S = 600
LIST_LIMIT = 100

FLAWS = ("sdk-default-retries", "no-lock", "lost-answer-is-failure", "intent-in-memory")


def sdk() -> Any:
    """The SDK, imported on first use: status and resolve never need it, and importing openai
    costs about 0.9 s of every call that does."""
    import openai

    return openai


def classify_object(resource: str, obj: Any, source: str) -> Verdict:
    oid = getattr(obj, "id", None)
    if not isinstance(oid, str) or not oid:
        return Verdict("unknown", None, f"{source}: the answer has no id")
    if resource == "chat_completions":
        return Verdict("succeeded", oid, f"{source}: chat completion {oid}")
    status = getattr(obj, "status", None)
    outcome = RESPONSE_OUTCOME.get(status) if isinstance(status, str) else None
    if outcome is None:
        return Verdict("unknown", None, f"{source}: response {oid} has an unrecognised status {status!r}")
    return Verdict(outcome, oid, f"{source}: response {oid} is {status}")


def classify_error(err: Exception, what: str) -> tuple[Verdict, bool]:
    """(verdict, ambiguous) for an SDK error raised by a create."""
    openai = sdk()
    if isinstance(err, openai.APIConnectionError) and lr.flawed("lost-answer-is-failure"):
        # FLAW lost-answer-is-failure: no answer (a timeout is an APIConnectionError too) is
        # taken as a refusal.
        return Verdict("failed", None, f"{what}: {type(err).__name__}: taken as a failure"), True
    if isinstance(err, openai.APITimeoutError):
        return Verdict("unknown", None, f"{what}: APITimeoutError: no answer in time; the generation may have run"), True
    if isinstance(err, openai.APIConnectionError):
        cause = err.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        return Verdict("unknown", None, f"{what}: APIConnectionError{detail}; the generation may have run"), True
    if isinstance(err, openai.APIStatusError):
        status = err.status_code
        body = err.body if isinstance(err.body, dict) else {}
        words = " ".join(str(w) for w in (status, body.get("type"), body.get("code")) if w)
        if status in REJECTIONS:
            return Verdict("failed", None, f"{what}: rejected before execution: {words}"), False
        return Verdict("unknown", None, f"{what}: {words}: the generation may or may not have run"), True
    if isinstance(err, openai.APIResponseValidationError):
        return Verdict("unknown", None, f"{what}: the answer could not be read: the generation may have run"), True
    return Verdict("unknown", None, f"{what}: {type(err).__name__}: {err}"), True


class OpenAIAdapter(lr.AdapterBase):
    PROFILE = "openai"
    RESOURCES = ("chat_completions", "responses")

    @property
    def client(self) -> Any:
        if getattr(self, "_client", None) is None:
            retries: dict[str, Any] = {"max_retries": 0}
            if lr.flawed("sdk-default-retries"):
                # FLAW sdk-default-retries: the SDK keeps its 2 retries, each a new generation.
                retries = {}
            self._client = sdk().OpenAI(
                base_url=self.common.base_url + "/v1",
                api_key=self.common.credential,
                timeout=self.common.timeout_s,
                **retries,
            )
        return self._client

    def validate_args(self, resource: str, args: dict[str, Any]) -> None:
        if args.get("stream") is True:
            raise BadRequest("args ask for a stream; this adapter sends non-streaming creates only; nothing was sent")
        if args.get("background") is True and not self.contract.retrieve:
            raise BadRequest("args ask for a background response but the contract offers no retrieve; nothing was sent")

    def stored(self, record: Record) -> bool:
        """Whether the provider keeps the object where a lookup can find it. A chat completion
        is stored only with ``store: true`` (the adapter adds it when the args leave ``store``
        out; ``null`` means the API's default, not stored); a response is stored unless
        ``store: false``."""
        if record.resource == "responses":
            return record.args.get("store") is not False
        return "store" not in record.args or record.args["store"] is True

    def body(self, record: Record) -> dict[str, Any]:
        """``args`` plus only what the adapter may add: ``metadata.operation_id`` and, for chat
        completions, ``store: true`` when the args leave ``store`` out."""
        body = dict(record.args)
        metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        body["metadata"] = {**metadata, "operation_id": record.op_id}
        if record.resource == "chat_completions" and "store" not in body:
            body["store"] = True
        return body

    def create_method(self, resource: str) -> Any:
        return self.client.chat.completions.create if resource == "chat_completions" else self.client.responses.create

    def send_first(self, record: Record) -> Verdict:
        method = self.create_method(record.resource)
        what = f"POST /v1/{'chat/completions' if record.resource == 'chat_completions' else 'responses'}"
        self.begin_send(record)
        try:
            obj = method(**lr.sdk_call_kwargs(method, self.body(record)))
        except sdk().OpenAIError as err:
            verdict, ambiguous = classify_error(err, what)
        else:
            verdict, ambiguous = classify_object(record.resource, obj, f"{what} answered"), False
        self.end_send(record, ambiguous)
        return verdict

    def dead_end(self, record: Record) -> str | None:
        if record.resource == "responses":
            if record.provider_ref is not None and self.contract.retrieve:
                return None
            return (
                "a response can be looked up only by the id its lost answer carried; no idempotency keys: "
                "cannot tell whether the generation ran; a person must check"
            )
        if self.contract.client_reference and self.stored(record):
            return None
        why = (
            "the args do not let the completion be stored"
            if not self.stored(record)
            else "the contract offers no stored-completions lookup"
        )
        return f"no idempotency keys and {why}: cannot tell whether the generation ran; a person must check"

    def reconcile_locked(self, record: Record) -> Verdict:
        reason = self.dead_end(record)
        if reason is not None:
            return Verdict("unknown", None, reason, needs_review=True)
        if record.resource == "responses":
            ref = str(record.provider_ref)
            try:
                obj = self.client.responses.retrieve(ref)
            except sdk().OpenAIError as err:
                return Verdict("unknown", None, f"retrieve of {ref} proved nothing: {type(err).__name__}")
            return classify_object("responses", obj, f"retrieve {ref}")
        how = f"stored chat completions with metadata[operation_id]={record.op_id}"
        try:
            page = self.client.chat.completions.list(metadata={"operation_id": record.op_id}, limit=LIST_LIMIT)
        except sdk().OpenAIError as err:
            return Verdict("unknown", None, f"{how} proved nothing: {type(err).__name__}: {err}")
        ours = [c for c in page.data if (getattr(c, "metadata", None) or {}).get("operation_id") == record.op_id]
        if ours:
            more = f" ({len(ours)} found: the first is taken, a person may want to look)" if len(ours) > 1 else ""
            return Verdict("succeeded", ours[0].id, f"{how}: found chat completion {ours[0].id}{more}")
        if page.has_more:
            return Verdict("unknown", None, f"{how} proved nothing: more than one page and ours is not on it")
        age = self.age_s(record)
        if age >= ABSENCE_SETTLE_S:
            return Verdict(
                "failed", None,
                f"{how}: none, {int(age)} s after the only send: the create never committed; not re-sent (no idempotency keys)",
            )
        return Verdict(
            "unknown", None,
            f"{how}: none yet, {int(age)} s after the send; a lost generation can still be running "
            f"(absence counts after {ABSENCE_SETTLE_S} s)",
        )


def make(store: lr.Store, common: lr.Common) -> OpenAIAdapter:
    return OpenAIAdapter(store, common)


if __name__ == "__main__":
    sys.exit(lr.main(sys.argv, lr.make_handler(make), FLAWS))
