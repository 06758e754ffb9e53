#!/usr/bin/env python3
"""A naive lostreply adapter for the stripe profile: the SDK quick start, wrapped in the protocol.

Usage: ``python stripe_naive.py <execute|reconcile|webhook|resolve|status|serve>`` (the adapter
protocol, docs/adapter-protocol.md), with the venv of requirements.txt.

It is what a payment call usually looks like in agent tool code, so that the scenarios have
something real to catch: ``StripeClient(api_key, base_addresses=...)`` with the SDK's defaults
(no ``max_network_retries``, hence no retry at all, and the SDK's own random idempotency key,
new on every call), ``client.v1.<resource>.create(params=args + metadata)``, "it returned, so
it worked", "it raised, so it failed". The outcome is written only after the SDK returns, so a
crash in between leaves nothing (lr_common.NaiveBase); reconcile sends nothing and repeats what
was written; a webhook overwrites the outcome with the event's status, duplicates and late
events included.

Two concessions to the protocol, neither about lost answers: the HTTP client gets
``client_timeout_ms``; and the SDK's webhook freshness check, which compares the signature's
timestamp with the machine's clock (not the scenario's), is switched off (``tolerance=None``),
so that genuine events are not refused for a reason the scenarios do not test.
"""

from __future__ import annotations

import sys
from typing import Any

import stripe

import lr_common as lr


class StripeNaive(lr.NaiveBase):
    def send(self, resource: str, args: dict[str, Any], op_id: str) -> tuple[str, str | None, str]:
        client = stripe.StripeClient(
            self.common.credential,
            base_addresses={"api": self.common.base_url},
            http_client=stripe.RequestsClient(timeout=self.common.timeout_s),
        )
        params = {**args, "metadata": {**(args.get("metadata") or {}), "operation_id": op_id}}
        try:
            obj = getattr(client.v1, resource).create(params=params)
        except stripe.StripeError as err:
            return "failed", None, f"the SDK raised {type(err).__name__}: {err}"
        return "succeeded", obj.id, f"the SDK returned {obj.id}"

    def webhook(self, request: dict[str, Any]) -> dict[str, Any]:
        headers = lr.lower_headers(request.get("headers"))
        try:
            event = stripe.Webhook.construct_event(
                request.get("body") or "", headers.get("stripe-signature"),
                self.common.contract.webhook_secret or "", tolerance=None,
            )
        except (stripe.SignatureVerificationError, ValueError) as err:
            lr.log(f"webhook rejected: {err}")
            return dict(lr.REJECTED)
        obj = event.to_dict().get("data", {}).get("object", {})
        op_id = (obj.get("metadata") or {}).get("operation_id")
        if not isinstance(op_id, str) or lr.OPERATION_ID_RE.match(op_id) is None:
            return {"accepted": True, "operation_id": None}
        record = self.store.load(op_id)
        if record is None:
            return {"accepted": True, "operation_id": None}
        status = obj.get("status")
        record.outcome = {"canceled": "failed", "processing": "pending"}.get(status, "succeeded")
        record.provider_ref = obj.get("id")
        record.evidence = f"event {event.id} ({event.type})"
        self.store.save(record)
        return {"accepted": True, "operation_id": op_id}


if __name__ == "__main__":
    sys.exit(lr.main(sys.argv, lr.make_handler(StripeNaive)))
