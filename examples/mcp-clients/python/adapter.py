"""A lostreply process adapter for paid MCP tool calls, on the real Python SDK (`mcp` 2.x).

One process per call (docs/adapter-protocol.md): `adapter.py [--naive] <call>`, one JSON
object on stdin, one on stdout. The durable store is `$LOSTREPLY_STATE_DIR/ops/<id>.json`,
written atomically under a per-operation lock (`<id>.lock`, flock).

The correct variant follows the reference adapter (reference/src/mcp/calls.rs):
- the intent is durable before the call, and marked "sent" before it leaves: a tool
  without a key is called once, ever;
- any loss (the SDK's read timeout, a closed stream, a transport error) is `unknown`,
  never `failed`, and the tool is not called again;
- a task id means the work runs: wait for it (`tasks/get`);
- an `isError` is decided by its status, never by its words (408, 409, 425 and 5xx:
  ambiguous; any other 4xx: rejected, no effect); a task that ended failed is failed;
- recovery is `get_operation` by id, or `list_recent_operations` and the one new id whose
  arguments (listed with each item) are ours; a keyed tool may replay with its key while
  the key is retained;
- an id another of our operations holds is theirs, not ours; and while another of our
  calls with the same arguments has been sent and may own an effect it has not identified,
  the one new id that matches may be theirs: it is not claimed (a keyed tool's replay may
  still tell);
- `needs_review` once no way to find out is left (every retention passed since the call
  was sent), or after three inconclusive reconciles in a row.

Client windows, as far as this SDK expresses them (docs/mcp-clients.md):
- wall clock -> `read_timeout_seconds` of the call (MCPError -32001 on expiry, with a
  courtesy `notifications/cancelled`); the background cut-off, being a wall-clock limit
  too, takes the smaller of the two;
- idle -> the httpx read timeout, which restarts on every byte (progress notifications
  included: every call asks for progress); an idle window that restarts only on progress
  has no expression here and is applied the more lenient way, on bytes;
- first byte -> no expression of its own (the httpx read timeout also counts the wait for
  the headers): with an idle window it waits as long as the idle window, without one it is
  not applied. Both lenient: a longer wait never makes a reported outcome untrue.

Task-augmented calls (`params.task`) go through the session's dispatcher, raw: mcp 2.3.0
has no tasks API for 2025-11-25 and validates any `tools/call` result as a `CallToolResult`.

`--naive` is the usual agent code: no durable "sent" mark, and when the SDK raises its
timeout error it calls the tool again.
"""

import fcntl
import json
import os
import sys
from contextlib import asynccontextmanager, contextmanager

import anyio
import httpx2
import mcp_types as types
from mcp import ClientSession, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import REQUEST_TIMEOUT
from pydantic import TypeAdapter

MAX_INCONCLUSIVE = 3
MAX_CANDIDATES = 20
TASK_TTL_MS = 3_600_000
# A bound so that a call always ends when the client has no limit of its own (the
# harness's call deadline is the real guard).
NO_LIMIT_S = 25.0
CONNECT_S = 5.0
# A task-augmented call answers a task or, from a server that ran it at once, the result.
TASK_OR_RESULT = TypeAdapter(types.CreateTaskResult | types.CallToolResult)


# ---------------------------------------------------------------- the durable store


def state_dir():
    d = os.path.join(os.environ["LOSTREPLY_STATE_DIR"], "ops")
    os.makedirs(d, exist_ok=True)
    return d


def safe(op_id):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in op_id)


@contextmanager
def locked(op_id):
    with open(os.path.join(state_dir(), safe(op_id) + ".lock"), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def load(op_id):
    try:
        with open(os.path.join(state_dir(), safe(op_id) + ".json")) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


class CorruptRecord(Exception):
    """A record file that does not parse: the store is damaged, and no answer is safe."""


def records():
    """Every operation's record, in no particular order. A temporary file (a save a crash
    interrupted) and a lock file are not records. Each record is replaced only by an atomic
    rename, so each one read is one whole save, though not all from one instant."""
    d = state_dir()
    out = []
    for name in os.listdir(d):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(d, name)) as f:
                out.append(json.load(f))
        except FileNotFoundError:
            continue  # removed since the listing: simply not there any more
        except ValueError as e:
            raise CorruptRecord(f"record {name} does not parse: {e}") from e
    return out


def save(record):
    path = os.path.join(state_dir(), safe(record["operation"]["id"]) + ".json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def reply(record):
    return {
        "operation_id": record["operation"]["id"],
        "outcome": record["outcome"],
        "provider_ref": record.get("provider_ref"),
        "needs_review": record.get("needs_review", False),
        "evidence": record.get("evidence", ""),
    }


def verdict(outcome, provider_ref, evidence, needs_review=False):
    return {"outcome": outcome, "provider_ref": provider_ref, "evidence": evidence, "needs_review": needs_review}


def absorb(record, v):
    record["outcome"] = v["outcome"]
    if v.get("provider_ref"):
        record["provider_ref"] = v["provider_ref"]
    record["needs_review"] = v.get("needs_review", False)
    record["evidence"] = v["evidence"]
    record["inconclusive"] = 0


# ---------------------------------------------------------------- what an answer means (pure)


def ambiguous_status(status):
    """408, 409, 425 and every 5xx: the work may have run; any other 4xx (429 too) refused it."""
    return not (400 <= status < 500) or status in (408, 409, 425)


def payload_id(payload):
    if not isinstance(payload, dict):
        return None
    value = payload.get("operation_id") or payload.get("id")
    return value if isinstance(value, str) else None


def payload(result):
    if result.get("structuredContent") is not None:
        return result["structuredContent"]
    for c in result.get("content") or []:
        if isinstance(c.get("text"), str):
            try:
                return json.loads(c["text"])
            except ValueError:
                return None
    return None


def error_status(result):
    status = (result.get("structuredContent") or {}).get("status")
    if isinstance(status, int):
        return status
    for c in result.get("content") or []:
        text = c.get("text")
        if isinstance(text, str) and text.lstrip().startswith("HTTP "):
            try:
                return int(text.lstrip()[5:8])
            except ValueError:
                return None
    return None


def tool_result_verdict(result, source):
    """A CallToolResult (as a dict): decided by its status, never by its words."""
    if result.get("isError") is True:
        status = error_status(result)
        if status is not None and not ambiguous_status(status):
            return verdict("failed", None, f"{source} was rejected with status {status}: no effect")
        if status is not None:
            return verdict("unknown", None, f"{source} answered an error with status {status}: it may have run")
        return verdict("unknown", None, f"{source} answered an error without a status: its words decide nothing")
    body = payload(result)
    if body is None:
        return verdict("unknown", None, f"{source} answered a result without a readable payload")
    found = payload_id(body)
    if found:
        return verdict("succeeded", found, f"{source} returned operation {found}")
    return verdict("unknown", None, f"{source} succeeded without an operation id")


def retrieved(result, op_id):
    """`get_operation`'s answer: ("found", verdict) | ("not_found", None) | ("failed", why)."""
    if result is None:
        return ("failed", f"get_operation {op_id}: no answer")
    if result.get("isError") is True:
        return ("not_found", None) if error_status(result) == 404 else ("failed", f"get_operation {op_id} answered an error")
    body = payload(result)
    if not isinstance(body, dict):
        return ("failed", f"get_operation {op_id}: unreadable answer")
    if body.get("found") is False:
        return ("not_found", None)
    status = body.get("status") or ""
    source = f"get_operation {op_id}"
    if status in ("working", "processing", "pending", "input_required"):
        return ("found", verdict("pending", op_id, f"{source}: still {status}"))
    if status in ("failed", "cancelled"):
        return ("found", verdict("failed", None, f"{source}: {status}, no effect"))
    original = body.get("result") if isinstance(body.get("result"), dict) else body
    named = payload_id(original) or payload_id(body)
    if named:
        return ("found", verdict("succeeded", named, f"{source}: completed as operation {named}"))
    return ("failed", f"{source}: a completed answer without an id")


def recent_operations(result):
    """`list_recent_operations`' items as (id, arguments or None), newest first; None when unreadable."""
    if result is None or result.get("isError") is True:
        return None
    body = payload(result)
    if not isinstance(body, dict):
        return None
    items = body.get("operations", body.get("ids"))
    if not isinstance(items, list):
        return None
    out = []
    for i in items:
        if isinstance(i, str):
            out.append((i, None))
        elif payload_id(i):
            args = i.get("arguments")
            out.append((payload_id(i), args if isinstance(args, dict) else None))
    return out


def recent_ids(result):
    listed = recent_operations(result)
    return None if listed is None else [op_id for op_id, _ in listed]


def retrieved_arguments(result):
    body = payload(result) if result else None
    if not isinstance(body, dict):
        return None
    original = body.get("result") if isinstance(body.get("result"), dict) else body
    args = original.get("arguments")
    return args if isinstance(args, dict) else None


# ---------------------------------------------------------------- the SDK


class Session:
    """One MCP session on the SDK's `ClientSession`, with the contract's windows; `open()` enters it.

    The session runs over a `JSONRPCDispatcher` the adapter builds itself (the SDK's own
    construction in `Client`, done by hand) so that a task-augmented `tools/call` can go
    through the dispatcher's raw channel: mcp 2.3.0 leaves tasks out of its 2025-11-25
    surface, and its typed `send_request` validates every `tools/call` result as a
    `CallToolResult`, which a `CreateTaskResult` is not.
    """

    def __init__(self, common):
        self.common = common
        self.mcp = common["provider"]["contract"]["mcp"]
        windows = self.mcp["client"]
        # Wall clock: the call's read timeout (progress never restarts it). The background
        # cut-off ends the wait too: the smaller of the two.
        ms = [w for w in (windows.get("wall_clock_ms"), windows.get("background_after_ms")) if w is not None]
        self.read_timeout_s = min(ms) / 1000 if ms else NO_LIMIT_S
        # Idle: the httpx read timeout, which counts every silence between bytes (progress
        # notifications and keep-alive comments are bytes) and also the wait for the
        # headers. A first-byte window has no expression of its own: with an idle window
        # it gets the idle window's length (more lenient); without one it is not applied
        # (the wall clock bounds the call). Neither can make a reported outcome untrue:
        # waiting longer only lets an answer arrive that a stricter client would have lost.
        idle = windows.get("idle_ms")
        self.http_read_s = idle / 1000 if idle is not None else NO_LIMIT_S
        self.session = None
        self.dispatcher = None

    @asynccontextmanager
    async def open(self):
        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {self.common['provider']['credential']}"},
            timeout=httpx2.Timeout(CONNECT_S, read=self.http_read_s),
        )
        async with http:
            transport = streamable_http_client(self.mcp["url"], http_client=http)
            async with transport as (read_stream, write_stream):
                self.dispatcher = JSONRPCDispatcher(read_stream, write_stream)
                session = ClientSession(dispatcher=self.dispatcher, read_timeout_seconds=self.read_timeout_s)
                async with session:
                    await session.initialize()
                    self.session = session
                    yield self

    async def call(self, name, arguments, task=False):
        """A `tools/call` through the SDK; the result as a dict, or raises what the SDK raised.

        A progress callback is given so that the SDK sends a progress token (the request id):
        a server reports progress only to a caller that asked for it.
        """
        if task:
            params = types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=TASK_TTL_MS))
            raw = await self.dispatcher.send_raw_request(
                "tools/call",
                params.model_dump(by_alias=True, mode="json", exclude_none=True),
                {
                    "timeout": self.read_timeout_s,
                    "on_progress": ignore_progress,
                    # what the session stamps on every request after the handshake
                    "headers": {MCP_PROTOCOL_VERSION_HEADER: self.session.protocol_version},
                },
            )
            result = TASK_OR_RESULT.validate_python(raw, by_name=False)
        else:
            result = await self.session.call_tool(
                name, arguments, read_timeout_seconds=self.read_timeout_s, progress_callback=ignore_progress
            )
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def rpc(self, method, params):
        """`tasks/get` or `tasks/result`, as a dict; raises what the SDK raised.

        Absent from the SDK's version surface, these are not validated by it: the answer
        is read as a dict and checked by the caller.
        """
        request = {"tasks/get": types.GetTaskRequest, "tasks/result": types.GetTaskPayloadRequest}[method]
        model = request.model_validate({"method": method, "params": params})
        return await self.session.send_request(model, TypeAdapter(dict), request_read_timeout_seconds=self.read_timeout_s)

    async def retrieval(self, name, arguments):
        """A retrieval tool's result as a dict, or None when it could not be had."""
        try:
            return await self.call(name, arguments)
        except Exception:
            return None


async def ignore_progress(progress, total, message):
    """Progress is not reported anywhere; asking for it makes the server send it."""


SENT = "tool call sent; no answer recorded yet"


def first_failure(e):
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]  # what a task group raised: its first failure
    return e


def describe(e):
    e = first_failure(e)
    if isinstance(e, MCPError):
        return f"MCPError {e.code}: {e.message}"
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


# ---------------------------------------------------------------- the calls


def tool_of(mcp, operation):
    for t in mcp["tools"]:
        if t["name"] == operation.get("tool"):
            return t
    return None


def arguments(record, tool):
    args = dict(record["operation"]["args"])
    if tool.get("key_argument"):
        args[tool["key_argument"]] = record["key"]
    return args


def comparable(args, tool):
    args = dict(args)
    if tool.get("key_argument"):
        args.pop(tool["key_argument"], None)
    return args


def call_verdict(result, source="the call"):
    task = result.get("task")
    if isinstance(task, dict) and isinstance(task.get("taskId"), str):
        return ("task", task["taskId"])
    return ("settled", tool_result_verdict(result, source))


async def send(record, common, naive):
    mcp = common["provider"]["contract"]["mcp"]
    tool = tool_of(mcp, record["operation"])
    opened = False
    try:
        async with Session(common).open() as session:
            opened = True
            await send_in(session, record, mcp, tool, naive)
    except Exception as e:
        if not opened:
            record["evidence"] = f"could not open an MCP session: {describe(e)}; the tool call was not sent"
        elif record.get("sent") and record["evidence"] == SENT:
            # The session broke under the call (the transport failed and took the call with it).
            absorb(record, verdict("unknown", None, f"{describe(e)}: the call may have run; not calling again, retrieval will tell"))
        # else: closing the session failed after the answer was recorded; nothing to add
    if not naive or record.get("sent"):
        save(record)


async def send_in(session, record, mcp, tool, naive):
    if mcp.get("retrieval") and not naive:
        record["baseline"] = recent_ids(await session.retrieval(mcp["retrieval"]["list_recent"], {}))
    record["sent"] = True
    record["evidence"] = SENT
    if not naive:
        save(record)
    attempts = 2 if naive else 1
    for attempt in range(attempts):
        try:
            result = await session.call(
                tool["name"],
                arguments(record, tool),
                task=bool(mcp.get("tasks")) and not naive,
            )
        except MCPError as e:
            if naive and e.code == REQUEST_TIMEOUT and attempt + 1 < attempts:
                continue  # the usual reaction: "it timed out, try again"
            absorb(record, verdict("unknown", None, f"{describe(e)}: the call may have run; not calling again, retrieval will tell"))
            return
        except Exception as e:
            absorb(record, verdict("unknown", None, f"{describe(e)}: the call may have run; not calling again, retrieval will tell"))
            return
        kind, value = call_verdict(result)
        if kind == "task":
            record["task_id"] = value
            absorb(record, verdict("pending", None, f"the call became background task {value}; waiting for it, not calling again"))
        else:
            absorb(record, value)
        return


async def follow_task(session, task_id):
    try:
        task = await session.rpc("tasks/get", {"taskId": task_id})
    except Exception:
        return None  # unknown or expired task: retrieval decides
    status = task.get("status") or (task.get("task") or {}).get("status") or ""
    source = f"task {task_id}"
    if status in ("working", "input_required"):
        return ("evidence", verdict("pending", None, f"{source} is still {status}"))
    if status in ("failed", "cancelled"):
        return ("evidence", verdict("failed", None, f"{source} ended {status}: no effect"))
    if status == "completed":
        try:
            result = await session.rpc("tasks/result", {"taskId": task_id})
        except Exception as e:
            return ("inconclusive", f"{source} completed, but its result could not be read: {describe(e)}")
        if result.get("isError") is True:
            # A terminal task's error is the task's end, not a lost answer: no effect.
            return ("evidence", verdict("failed", None, f"{source} ended with an error: the task failed, no effect"))
        return ("evidence", tool_result_verdict(result, source))
    return None


async def find(session, record, mcp, now_s):
    if record.get("task_id"):
        found = await follow_task(session, record["task_id"])
        if found:
            return found
    retrieval = mcp.get("retrieval")
    tool = tool_of(mcp, record["operation"])
    if record.get("provider_ref") and retrieval:
        op_id = record["provider_ref"]
        kind, value = retrieved(await session.retrieval(retrieval["get"], {"id": op_id}), op_id)
        if kind == "found":
            return ("evidence", value)
        if kind == "not_found":
            return ("inconclusive", f"get_operation {op_id}: not found (expired, or the server forgot it)")
        return ("inconclusive", value)
    if retrieval:
        found = await find_in_recent(session, record, tool, retrieval)
        if found[0] == "evidence":
            return found
        replayed = await replay(session, record, tool, mcp, now_s)
        return replayed or found
    replayed = await replay(session, record, tool, mcp, now_s)
    if replayed:
        return replayed
    return ("evidence", verdict("unknown", None, "the server offers no retrieval and no replay with the key is left (the tool takes no key, or the key's retention has passed): cannot tell whether the call ran; a person must check", True))


async def find_in_recent(session, record, tool, retrieval):
    """The one new id whose arguments are ours, unless another of our operations holds it or
    may own it: two of our calls with the same arguments are told apart only by what each
    already knows. ("evidence", verdict) or ("inconclusive", why)."""
    listed = recent_operations(await session.retrieval(retrieval["list_recent"], {}))
    if listed is None:
        return ("inconclusive", "list_recent_operations could not be read")
    matches, unreadable = await new_with_our_arguments(session, record, tool, retrieval, listed)
    if not matches:
        if unreadable:
            return ("inconclusive", f"{unreadable} recent operations could not be read")
        return ("inconclusive", f"none of the {len(listed)} recent operations is ours (yet)")
    # Read after the list: an operation whose record does not yet say its call was sent had
    # not sent it when the list was taken, so no listed id can be its effect.
    others = [o for o in records() if o["operation"]["id"] != record["operation"]["id"]]
    matches = [(op_id, r) for op_id, r in matches if not any(o.get("provider_ref") == op_id for o in others)]
    if not matches:
        return ("inconclusive", "each new operation with our arguments is already another of our operations' effect")
    if len(matches) > 1:
        return ("evidence", verdict("unknown", None, f"{len(matches)} recent operations carry our arguments: which one is ours cannot be told; a person must check", True))
    op_id, (kind, value) = matches[0]
    other = may_own(others, comparable(record["operation"]["args"], tool), tool, op_id)
    if other is not None:
        return ("inconclusive", f"{op_id} carries our arguments, but so does the call of {other['operation']['id']}, sent and not yet matched to an effect: {op_id} may be its effect, so it is not claimed")
    if kind == "found":
        return ("evidence", value)
    return ("inconclusive", value or f"{op_id} was listed but does not retrieve")


async def new_with_our_arguments(session, record, tool, retrieval, listed):
    """The new ids (not in the baseline) whose retrieved arguments are ours, each with what
    `get_operation` answered, and how many candidates could not be read."""
    baseline = record.get("baseline") or []
    ours = comparable(record["operation"]["args"], tool)
    # A listed item's arguments rule it out without a retrieval; a candidate is still
    # retrieved, for its state.
    candidates = [
        op_id for op_id, args in listed if op_id not in baseline and (args is None or comparable(args, tool) == ours)
    ]
    matches, unreadable = [], 0
    for op_id in candidates[:MAX_CANDIDATES]:
        answer = await session.retrieval(retrieval["get"], {"id": op_id})
        args = retrieved_arguments(answer)
        if args is None:
            unreadable += 1
        elif comparable(args, tool) == ours:
            matches.append((op_id, retrieved(answer, op_id)))
    return matches, unreadable


def may_own(others, ours, tool, op_id):
    """Another of our operations that may own the effect `op_id`: it carries the same
    arguments, has been sent, has not failed, names no effect of its own, and did not see
    `op_id` listed before its call. Its call made at most one effect, but whether `op_id` is
    that one or ours cannot be told."""
    for other in others:
        if (
            other.get("sent")
            and other.get("outcome") != "failed"
            and not other.get("provider_ref")
            and op_id not in (other.get("baseline") or [])
            and comparable(other["operation"]["args"], tool) == ours
        ):
            return other
    return None


async def replay(session, record, tool, mcp, now_s):
    """A same-key replay of a keyed tool while the key is retained; None when not possible."""
    if not tool.get("key_argument"):
        return None
    # Past the key's retention a replay would be new work: a second effect.
    retention_s = tool.get("key_retention_s") or 0
    if now_s - record["first_sent_s"] >= retention_s:
        return None
    try:
        result = await session.call(tool["name"], arguments(record, tool))
    except Exception as e:
        return ("inconclusive", f"replay with the same key: {describe(e)}")
    kind, value = call_verdict(result, "the replay with the same key")
    if kind == "task":
        return ("evidence", verdict("pending", None, f"replay with the same key: background task {value} runs"))
    if value["outcome"] in ("unknown", "failed"):
        # A rejection answers this replay only, not the first attempt.
        return ("inconclusive", f"replay with the same key: {value['evidence']}")
    return ("evidence", value)


def no_rung_left(mcp, record, now_s):
    """True once neither retrieval nor a same-key replay can tell any more: each is past its
    retention counted from the first send (the operation was created at or after it, so an id
    the list no longer shows has expired or never existed)."""
    age_s = now_s - record["first_sent_s"]
    retrieval = mcp.get("retrieval")
    retrieval_live = bool(retrieval) and age_s < (retrieval.get("retention_s") or 0)
    tool = tool_of(mcp, record["operation"]) or {}
    key_live = bool(tool.get("key_argument")) and age_s < (tool.get("key_retention_s") or 0)
    return not retrieval_live and not key_live


def seconds(rfc3339):
    from datetime import datetime

    return datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


async def reconcile(record, common):
    if record["outcome"] in ("succeeded", "failed"):
        return
    if not record.get("sent"):
        await send(record, common, naive=False)  # provably never left: send it now
        return
    mcp = common["provider"]["contract"]["mcp"]
    found = None
    try:
        async with Session(common).open() as session:
            found = await find(session, record, mcp, seconds(common["now"]))
    except Exception as e:
        if isinstance(first_failure(e), CorruptRecord):
            # A damaged store is the adapter's failure, not an inconclusive reconcile.
            raise first_failure(e) from e
        if found is None:
            found = ("inconclusive", f"could not open an MCP session: {describe(e)}")
    kind, value = found
    if kind == "evidence":
        absorb(record, value)
    else:
        record["inconclusive"] = record.get("inconclusive", 0) + 1
        if record["outcome"] == "unknown" and no_rung_left(mcp, record, seconds(common["now"])):
            record["needs_review"] = True
            record["evidence"] = f"{value}; the retention of every way to find out has passed since the call was sent: nothing can tell any more, a person must check"
        elif record["outcome"] == "unknown" and record["inconclusive"] >= MAX_INCONCLUSIVE:
            record["needs_review"] = True
            record["evidence"] = f"{value}; {record['inconclusive']} reconciles in a row found no evidence: automation stopped, a person must check"
        else:
            record["evidence"] = value
    save(record)


def unknown_reply(op_id, why):
    return {"operation_id": op_id, "outcome": "unknown", "provider_ref": None, "needs_review": False, "evidence": why}


async def handle(call, request, naive):
    if call == "webhook":
        return {"accepted": False, "operation_id": None}  # an MCP server sends none
    if call == "execute":
        operation = request["operation"]
        op_id = operation["id"]
        mcp = request["provider"]["contract"].get("mcp")
        if operation.get("action") != "call_tool" or not mcp or not tool_of(mcp, operation):
            return unknown_reply(op_id, "this adapter performs paid MCP tool calls only (action call_tool on a tool the contract lists)")
        with locked(op_id):
            record = load(op_id)
            if record is None or naive:
                record = {
                    "operation": operation,
                    "key": f"lr-{op_id}",
                    "first_sent_s": seconds(request["now"]),
                    "outcome": "unknown",
                    "provider_ref": None,
                    "needs_review": False,
                    "evidence": "tool call about to be sent",
                    "inconclusive": 0,
                    "sent": False,
                    "baseline": None,
                    "task_id": None,
                }
                if not naive:
                    save(record)
                await send(record, request, naive)
            elif not naive:
                await reconcile(record, request)
            return reply(record)
    op_id = request["operation_id"]
    with locked(op_id):
        record = load(op_id)
        if record is None:
            return unknown_reply(op_id, "no record of this operation")
        if call == "reconcile":
            if naive:
                return reply(record)  # the naive caller never looks back
            await reconcile(record, request)
        elif call == "resolve":
            resolution = request["resolution"]
            record["outcome"] = resolution["outcome"]
            record["provider_ref"] = resolution.get("provider_ref")
            record["needs_review"] = False
            record["evidence"] = f"resolved by {resolution.get('by', 'operator')}: {resolution.get('evidence', '')}"
            save(record)
        return reply(record)


def main(argv):
    naive = "--naive" in argv
    calls = [a for a in argv if not a.startswith("--")]
    if len(calls) != 1 or calls[0] not in ("execute", "reconcile", "webhook", "resolve", "status"):
        print(f"usage: adapter.py [--naive] execute|reconcile|webhook|resolve|status (got {argv})", file=sys.stderr)
        return 2
    try:
        request = json.load(sys.stdin)
    except ValueError as e:
        print(f"stdin is not JSON: {e}", file=sys.stderr)
        return 2
    if not isinstance(request, dict) or request.get("protocol") != 1:
        print("stdin is not a protocol-1 request object", file=sys.stderr)
        return 2
    out = anyio.run(handle, calls[0], request, naive)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
