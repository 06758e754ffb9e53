"""One tool call through the real Python MCP SDK (`mcp` 2.x), for the fact tests.

Reads one JSON object on stdin:
  {"url", "credential", "tool", "arguments",
   "timeout_ms": per-call read_timeout_seconds (null: none),
   "progress": true to pass a progress callback (the SDK then sends a progressToken),
   "http_read_timeout_ms": the httpx read timeout (null: the SDK's default)}
and prints one JSON object on stdout: what the SDK handed back, nothing interpreted:
  {"kind": "result", "is_error", "structured", "text", "progress"}
  {"kind": "error", "type", "code", "message", "progress"}   (code: the MCPError's, if any)
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
    progress = []

    async def on_progress(value, total, message):
        progress.append(value)

    read_s = (config.get("http_read_timeout_ms") or 300_000) / 1000
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {config['credential']}"},
        timeout=httpx2.Timeout(30.0, read=read_s),
    )
    timeout_ms = config.get("timeout_ms")
    async with http:
        transport = streamable_http_client(config["url"], http_client=http)
        async with Client(transport, mode="legacy") as client:
            try:
                result = await client.call_tool(
                    config["tool"],
                    config.get("arguments") or {},
                    read_timeout_seconds=None if timeout_ms is None else timeout_ms / 1000,
                    progress_callback=on_progress if config.get("progress") else None,
                )
            except MCPError as e:
                return {
                    "kind": "error",
                    "type": type(e).__name__,
                    "code": e.code,
                    "message": str(e),
                    "progress": len(progress),
                }
            except Exception as e:  # what else the SDK raises is a fact too
                return {
                    "kind": "error",
                    "type": type(e).__name__,
                    "code": None,
                    "message": str(e),
                    "progress": len(progress),
                }
            text = next((c.text for c in result.content if getattr(c, "text", None)), None)
            return {
                "kind": "result",
                "is_error": bool(result.is_error),
                "structured": result.structured_content,
                "text": text,
                "progress": len(progress),
            }


if __name__ == "__main__":
    print(json.dumps(anyio.run(main)))
