"""One tool call through the real Python MCP SDK (`mcp` 2.x), for the fact tests.

Reads one JSON object on stdin:
  {"url", "credential", "tool", "arguments",
   "timeout_ms": per-call read_timeout_seconds (null: none),
   "progress": true to pass a progress callback (the SDK then sends a progressToken),
   "http_read_timeout_ms": the httpx read timeout (null: the SDK's default),
   "repeat": N to make the call N times, one after the other, each with an
             HTTP client and a session of its own, as N fresh callers would
             (absent: once)}
and prints one JSON object on stdout: what the SDK handed back, nothing interpreted:
  {"kind": "result", "is_error", "structured", "text", "progress"}
  {"kind": "error", "type", "code", "message", "progress"}   (code: the MCPError's, if any)
  {"kind": "repeated", "calls": [one of the above per call]}  (with "repeat")
with "exit_error" added when closing the client raised after the call
(its task group's exceptions, "Type: message; ...").
The tests (examples/tests/it/mcp_client_facts.rs) assert on it and on the server's journal and ledger.
"""

import json
import sys

import anyio
import httpx2
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client


async def main() -> dict:
    config = json.load(sys.stdin)
    repeat = config.get("repeat")
    if repeat is None:
        return await one_call(config)
    # One interpreter for all the calls: starting Python and importing the SDK
    # costs a second, the calls themselves a fraction of it.
    return {"kind": "repeated", "calls": [await one_call(config) for _ in range(repeat)]}


async def one_call(config: dict) -> dict:
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    read_s = (config.get("http_read_timeout_ms") or 300_000) / 1000
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {config['credential']}"},
        timeout=httpx2.Timeout(30.0, read=read_s),
    )
    timeout_ms = config.get("timeout_ms")
    outcome = None
    try:
        async with http:
            transport = streamable_http_client(config["url"], http_client=http)
            async with Client(transport, mode="legacy") as client:
                outcome = await call(client, config, timeout_ms, on_progress, progress)
    except Exception as e:  # raised as the client closes, after the call: a fact too
        if outcome is None:
            outcome = describe(e, progress)
        outcome["exit_error"] = "; ".join(leaves(e))
    return outcome


async def call(client, config, timeout_ms, on_progress, progress) -> dict:
    try:
        result = await client.call_tool(
            config["tool"],
            config.get("arguments") or {},
            read_timeout_seconds=None if timeout_ms is None else timeout_ms / 1000,
            progress_callback=on_progress if config.get("progress") else None,
        )
    except Exception as e:  # MCPError, or whatever else the SDK raises: a fact too
        return describe(e, progress)
    text = next((c.text for c in result.content if getattr(c, "text", None)), None)
    return {
        "kind": "result",
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": text,
        "progress": len(progress),
    }


def describe(e: Exception, progress: list) -> dict:
    return {
        "kind": "error",
        "type": type(e).__name__,
        "code": e.code if isinstance(e, MCPError) else None,
        "message": str(e),
        "progress": len(progress),
    }


def leaves(e: BaseException) -> list:
    """The exceptions inside a task group's exception group, as "Type: message"."""
    if isinstance(e, BaseExceptionGroup):
        return [leaf for inner in e.exceptions for leaf in leaves(inner)]
    return [f"{type(e).__name__}: {e}"]


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)))
