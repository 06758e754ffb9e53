#!/usr/bin/env python3
"""One SDK call with a named setting, for the fact tests: what the SDK returned or raised.

Usage::

    python fact_driver.py <scenario> <base_url> [--timeout-ms N] [--resource R] [--args JSON]

``base_url`` is the simulator's ``http://127.0.0.1:PORT`` (no ``/v1``). The driver makes
exactly one SDK call (the SDK may send several requests: that is the fact under test) and
prints one JSON line on stdout, whatever happened::

    {"sdk": "stripe-python", "version": "16.1.0", "scenario": "...", "settings": {...},
     "kind": "result", "result": {"id": "...", "object": "...", "status": ...}, "elapsed_ms": 512}
    {"sdk": ..., "kind": "error", "error": {"type": "APIConnectionError", "module": "stripe._error",
     "status": null, "code": null, "message": "..."}, "elapsed_ms": 1093}

``elapsed_ms`` covers the SDK call only (not the imports). The exit status is 0 whenever the
line was printed; 2 for a scenario name it does not know. The Rust side (a fact test that
starts the simulator with a fault such as drop-after-commit) runs it, parses the line, and
compares with the simulator's journal and ledger: how many requests, which keys, how many
effects. Nothing here interprets the outcome.

Scenarios (``settings`` in the output says exactly what was set):

* ``stripe-create-default-client``: ``StripeClient(key, base_addresses={"api": base})``,
  nothing else (no retries, 80 s timeout, the SDK's random idempotency key).
* ``stripe-create-retries-2``: the same with ``max_network_retries=2``.
* ``stripe-create-retries-2-key``: and ``options={"idempotency_key": "fact-key-1"}``.
* ``stripe-create-global-default``: the legacy global API (``stripe.api_key``,
  ``stripe.api_base``, ``stripe.Customer.create``), whose module default is 2 retries.
* ``openai-chat-default`` / ``openai-chat-no-retries`` (``max_retries=0``):
  ``client.chat.completions.create``; ``openai-responses-default``: ``client.responses.create``.
* ``anthropic-messages-default`` / ``anthropic-messages-no-retries``: ``client.messages.create``.

``--timeout-ms`` gives the SDK that timeout (default: the SDK's own); ``--resource`` and
``--args`` replace the stripe resource (default ``customers``) and the call's arguments.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
import time
from typing import Any

from lr_common import sdk_call_kwargs

STRIPE_SCENARIOS = (
    "stripe-create-default-client",
    "stripe-create-retries-2",
    "stripe-create-retries-2-key",
    "stripe-create-global-default",
)
OPENAI_SCENARIOS = ("openai-chat-default", "openai-chat-no-retries", "openai-responses-default")
ANTHROPIC_SCENARIOS = ("anthropic-messages-default", "anthropic-messages-no-retries")
SCENARIOS = STRIPE_SCENARIOS + OPENAI_SCENARIOS + ANTHROPIC_SCENARIOS

DEFAULT_ARGS = {
    "stripe": {"email": "fact@example.com"},
    "openai-chat": {"model": "gpt-5", "messages": [{"role": "user", "content": "fact"}]},
    "openai-responses": {"model": "gpt-5", "input": "fact"},
    "anthropic": {"model": "claude-sonnet-4-5", "max_tokens": 16, "messages": [{"role": "user", "content": "fact"}]},
}


def run_stripe(scenario: str, base: str, timeout_s: float | None, resource: str, args: dict[str, Any]) -> tuple[dict, Any]:
    import stripe

    settings: dict[str, Any] = {"resource": resource}
    if scenario == "stripe-create-global-default":
        stripe.api_key = "sk_test_a"
        stripe.api_base = base
        if timeout_s is not None:
            stripe.default_http_client = stripe.RequestsClient(timeout=timeout_s)
            settings["timeout_s"] = timeout_s
        settings["max_network_retries"] = f"module default ({stripe.max_network_retries})"
        cls = {"customers": stripe.Customer, "payment_intents": stripe.PaymentIntent, "refunds": stripe.Refund}[resource]
        return settings, lambda: cls.create(**args)
    kwargs: dict[str, Any] = {"base_addresses": {"api": base}}
    if timeout_s is not None:
        kwargs["http_client"] = stripe.RequestsClient(timeout=timeout_s)
        settings["timeout_s"] = timeout_s
    if scenario != "stripe-create-default-client":
        kwargs["max_network_retries"] = 2
    settings["max_network_retries"] = kwargs.get("max_network_retries", "not set")
    client = stripe.StripeClient("sk_test_a", **kwargs)
    options = {"idempotency_key": "fact-key-1"} if scenario.endswith("-key") else {}
    settings["idempotency_key"] = options.get("idempotency_key", "SDK default")
    service = getattr(client.v1, resource)
    return settings, lambda: service.create(params=args, options=options)


def run_openai(scenario: str, base: str, timeout_s: float | None, args: dict[str, Any]) -> tuple[dict, Any]:
    import openai

    kwargs: dict[str, Any] = {"base_url": base + "/v1", "api_key": "sk_test_a"}
    if timeout_s is not None:
        kwargs["timeout"] = timeout_s
    if scenario.endswith("no-retries"):
        kwargs["max_retries"] = 0
    client = openai.OpenAI(**kwargs)
    settings = {"max_retries": kwargs.get("max_retries", f"SDK default ({client.max_retries})"),
                "timeout_s": kwargs.get("timeout", f"SDK default ({client.timeout})")}
    method = client.responses.create if "responses" in scenario else client.chat.completions.create
    return settings, lambda: method(**sdk_call_kwargs(method, args))


def run_anthropic(scenario: str, base: str, timeout_s: float | None, args: dict[str, Any]) -> tuple[dict, Any]:
    import anthropic

    kwargs: dict[str, Any] = {"base_url": base, "api_key": "sk_test_a"}
    if timeout_s is not None:
        kwargs["timeout"] = timeout_s
    if scenario.endswith("no-retries"):
        kwargs["max_retries"] = 0
    client = anthropic.Anthropic(**kwargs)
    settings = {"max_retries": kwargs.get("max_retries", f"SDK default ({client.max_retries})"),
                "timeout_s": kwargs.get("timeout", f"SDK default ({client.timeout})")}
    method = client.messages.create
    return settings, lambda: method(**sdk_call_kwargs(method, args))


def describe_result(obj: Any) -> dict[str, Any]:
    get = obj.get if isinstance(obj, dict) else (lambda k: getattr(obj, k, None))
    out = {"id": get("id"), "object": get("object") or get("type"), "status": get("status")}
    return {k: v if isinstance(v, (str, int, float, bool)) or v is None else str(v) for k, v in out.items()}


def describe_error(err: BaseException) -> dict[str, Any]:
    status = getattr(err, "http_status", None)
    if status is None:
        status = getattr(err, "status_code", None)
    code = getattr(err, "code", None)
    return {
        "type": type(err).__name__,
        "module": type(err).__module__,
        "status": status if isinstance(status, int) else None,
        "code": code if isinstance(code, str) else None,
        "message": str(err)[:500],
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="one SDK call, one JSON line")
    parser.add_argument("scenario")
    parser.add_argument("base_url")
    parser.add_argument("--timeout-ms", type=int, default=None)
    parser.add_argument("--resource", default="customers")
    parser.add_argument("--args", default=None)
    opts = parser.parse_args(argv[1:])
    if opts.scenario not in SCENARIOS:
        print(f"fact_driver.py: unknown scenario {opts.scenario!r}; one of {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    base = opts.base_url.rstrip("/")
    timeout_s = opts.timeout_ms / 1000 if opts.timeout_ms is not None else None
    if opts.scenario in STRIPE_SCENARIOS:
        sdk, package = "stripe-python", "stripe"
        args = json.loads(opts.args) if opts.args else DEFAULT_ARGS["stripe"]
        settings, call = run_stripe(opts.scenario, base, timeout_s, opts.resource, args)
    elif opts.scenario in OPENAI_SCENARIOS:
        sdk, package = "openai-python", "openai"
        key = "openai-responses" if "responses" in opts.scenario else "openai-chat"
        args = json.loads(opts.args) if opts.args else DEFAULT_ARGS[key]
        settings, call = run_openai(opts.scenario, base, timeout_s, args)
    else:
        sdk, package = "anthropic-python", "anthropic"
        args = json.loads(opts.args) if opts.args else DEFAULT_ARGS["anthropic"]
        settings, call = run_anthropic(opts.scenario, base, timeout_s, args)
    out: dict[str, Any] = {
        "sdk": sdk,
        "version": importlib.metadata.version(package),
        "scenario": opts.scenario,
        "settings": settings,
    }
    started = time.monotonic()
    try:
        result = call()
    except Exception as err:  # what the SDK raises is the fact
        out["kind"] = "error"
        out["error"] = describe_error(err)
    else:
        out["kind"] = "result"
        out["result"] = describe_result(result)
    out["elapsed_ms"] = int((time.monotonic() - started) * 1000)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
