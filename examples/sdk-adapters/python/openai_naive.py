#!/usr/bin/env python3
"""A naive lostreply adapter for the openai profile: the SDK's README, wrapped in the protocol.

Usage: ``python openai_naive.py <execute|reconcile|webhook|resolve|status|serve>`` (the adapter
protocol, docs/adapter-protocol.md), with the venv of requirements.txt.

``OpenAI(base_url=..., api_key=...)`` with the SDK's default retries (``max_retries=2``: a lost
answer is silently generated again, and billed again, since no key is sent),
``client.<resource>.create(**args)``, "it returned, so it worked", "it raised, so it failed".
The outcome is written only after the SDK returns (lr_common.NaiveBase); reconcile sends
nothing. The HTTP client gets ``client_timeout_ms``, as the protocol asks of every adapter.
"""

from __future__ import annotations

import sys
from typing import Any

import lr_common as lr


class OpenAINaive(lr.NaiveBase):
    def send(self, resource: str, args: dict[str, Any], op_id: str) -> tuple[str, str | None, str]:
        import openai  # here, not at the top: status and reconcile never need the SDK

        client = openai.OpenAI(
            base_url=self.common.base_url + "/v1", api_key=self.common.credential, timeout=self.common.timeout_s
        )
        method = client.chat.completions.create if resource == "chat_completions" else client.responses.create
        try:
            obj = method(**lr.sdk_call_kwargs(method, args))
        except openai.OpenAIError as err:
            return "failed", None, f"the SDK raised {type(err).__name__}: {err}"
        return "succeeded", obj.id, f"the SDK returned {obj.id}"


if __name__ == "__main__":
    sys.exit(lr.main(sys.argv, lr.make_handler(OpenAINaive)))
