#!/usr/bin/env python3
"""A correct lostreply adapter for the anthropic profile, on the official SDK (anthropic-python 2.x).

Usage: ``python anthropic_adapter.py <execute|reconcile|webhook|resolve|status|serve>`` (the
adapter protocol, docs/adapter-protocol.md), with the venv of requirements.txt.

The Messages API honours no idempotency key and offers no way to find a message whose answer
was lost (no list, no search, no metadata to search by; ``metadata`` takes only ``user_id``).
So the only honest design is the smallest one:

* ``Anthropic(base_url=base_url, api_key=credential, max_retries=0,
  timeout=client_timeout_ms / 1000)``: with the SDK's default ``max_retries=2`` a lost answer
  after a commit is silently generated (and billed) again (docs/sdks.md);
* the create (``client.messages.create``) carries exactly ``args`` (``max_tokens``
  included, as the harness sends it) and is sent once per operation, ever;
* an answer is ``succeeded`` (a message with an id), a definite rejection (400, 401, 403, 404,
  413, 422, 429) is ``failed``, and anything else (timeout, reset, closed, 5xx, 529, 409, an
  unreadable body) is ``unknown`` with ``needs_review`` at once: nothing the contract offers
  can ever tell, so automation stops and a person decides (``resolve``).

``--flaw NAME`` (before the call name) plants one mistake, in a branch marked ``FLAW <name>``,
so that the anthropic scenario can be shown to catch it (examples/tests/it/sdk_verdicts.rs):
``sdk-default-retries``, ``lost-answer-is-failure``.
"""

from __future__ import annotations

import sys
from typing import Any

import lr_common as lr
from lr_common import BadRequest, Record, Verdict

REJECTIONS = (400, 401, 403, 404, 413, 422, 429)

FLAWS = ("sdk-default-retries", "lost-answer-is-failure")


def sdk() -> Any:
    """The SDK, imported on first use: only execute sends anything, and importing anthropic
    costs about 2.4 s of every call that does."""
    import anthropic

    return anthropic


def no_answer(err: Exception, what: str) -> Verdict:
    """A create that got no answer (a timeout is an APIConnectionError too)."""
    if lr.flawed("lost-answer-is-failure"):
        # FLAW lost-answer-is-failure: no answer is taken as a refusal.
        return Verdict("failed", None, f"{what}: {type(err).__name__}: taken as a failure")
    if isinstance(err, sdk().APITimeoutError):
        return Verdict("unknown", None, f"{what}: APITimeoutError: no answer in time; the message may have been generated")
    return Verdict("unknown", None, f"{what}: APIConnectionError ({err}); the message may have been generated")


class AnthropicAdapter(lr.AdapterBase):
    PROFILE = "anthropic"
    RESOURCES = ("messages",)


    def validate_args(self, resource: str, args: dict[str, Any]) -> None:
        if args.get("stream") is True:
            raise BadRequest("args ask for a stream; this adapter sends non-streaming creates only; nothing was sent")

    def send_first(self, record: Record) -> Verdict:
        anthropic = sdk()
        retries: dict[str, Any] = {"max_retries": 0}
        if lr.flawed("sdk-default-retries"):
            # FLAW sdk-default-retries: the SDK keeps its 2 retries, each a new message.
            retries = {}
        client = anthropic.Anthropic(
            base_url=self.common.base_url,
            api_key=self.common.credential,
            timeout=self.common.timeout_s,
            **retries,
        )
        method = client.messages.create
        what = "POST /v1/messages"
        self.begin_send(record)
        ambiguous = True
        try:
            message = method(**lr.sdk_call_kwargs(method, dict(record.args)))
        except anthropic.APIConnectionError as err:
            verdict = no_answer(err, what)
        except anthropic.APIStatusError as err:
            body = err.body if isinstance(err.body, dict) else {}
            inner = body.get("error") if isinstance(body.get("error"), dict) else {}
            words = " ".join(str(w) for w in (err.status_code, inner.get("type")) if w)
            if err.status_code in REJECTIONS:
                verdict, ambiguous = Verdict("failed", None, f"{what}: rejected before execution: {words}"), False
            else:
                verdict = Verdict("unknown", None, f"{what}: {words}: the message may or may not have been generated")
        except anthropic.AnthropicError as err:
            verdict = Verdict("unknown", None, f"{what}: {type(err).__name__}: the answer could not be read")
        else:
            mid = getattr(message, "id", None)
            if isinstance(mid, str) and mid:
                verdict, ambiguous = Verdict("succeeded", mid, f"{what} answered message {mid}"), False
            else:
                verdict = Verdict("unknown", None, f"{what} answered without a message id")
        self.end_send(record, ambiguous)
        return verdict

    def dead_end(self, record: Record) -> str | None:
        return (
            "no idempotency keys and no lookup in the Messages API: cannot tell whether the message "
            "was generated; a person must check"
        )

    def reconcile_locked(self, record: Record) -> Verdict:
        return Verdict("unknown", None, self.dead_end(record) or "", needs_review=True)


def make(store: lr.Store, common: lr.Common) -> AnthropicAdapter:
    return AnthropicAdapter(store, common)


if __name__ == "__main__":
    sys.exit(lr.main(sys.argv, lr.make_handler(make), FLAWS))
