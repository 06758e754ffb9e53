#!/usr/bin/env python3
"""A naive lostreply adapter for the anthropic profile: the SDK's README, wrapped in the protocol.

Usage: ``python anthropic_naive.py <execute|reconcile|webhook|resolve|status|serve>`` (the
adapter protocol, docs/adapter-protocol.md), with the venv of requirements.txt.

``Anthropic(base_url=..., api_key=...)`` with the SDK's default retries (``max_retries=2``: a
lost answer is silently generated again, since no key is sent), ``client.messages.create(
**args)``, "it returned, so it worked", "it raised, so it failed". The outcome is written only
after the SDK returns (lr_common.NaiveBase); reconcile sends nothing. The HTTP client gets
``client_timeout_ms``, as the protocol asks of every adapter.
"""

from __future__ import annotations

import sys
from typing import Any

import lr_common as lr


class AnthropicNaive(lr.NaiveBase):
    def send(self, resource: str, args: dict[str, Any], op_id: str) -> tuple[str, str | None, str]:
        import anthropic  # here, not at the top: status and reconcile never need the SDK

        client = anthropic.Anthropic(
            base_url=self.common.base_url, api_key=self.common.credential, timeout=self.common.timeout_s
        )
        method = client.messages.create
        try:
            message = method(**lr.sdk_call_kwargs(method, args))
        except anthropic.AnthropicError as err:
            return "failed", None, f"the SDK raised {type(err).__name__}: {err}"
        return "succeeded", message.id, f"the SDK returned {message.id}"


if __name__ == "__main__":
    sys.exit(lr.main(sys.argv, lr.make_handler(AnthropicNaive)))
