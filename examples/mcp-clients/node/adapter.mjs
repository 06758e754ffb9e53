// A lostreply process adapter for paid MCP tool calls, on the real TypeScript SDK
// (@modelcontextprotocol/sdk 1.x).
//
// One process per call (docs/adapter-protocol.md): `node adapter.mjs [--naive] <call>`, one
// JSON object on stdin, one on stdout. The durable store is `$LOSTREPLY_STATE_DIR/ops/<id>.json`,
// written atomically under a per-operation lock (`<id>.lock`, created exclusively, holding the
// owner's pid so that the lock of a killed process is taken over).
//
// The correct variant follows the reference adapter (reference/src/mcp/calls.rs), as
// examples/mcp-clients/python/adapter.py does: a durable "sent" mark before the call, never a
// second call after any loss, tasks waited for (a task that ended failed is failed), isError
// decided by its status (408, 409, 425 and 5xx ambiguous; any other 4xx a rejection without
// effect), recovery by get_operation / list_recent_operations matched by the arguments each
// item lists (an id another of our operations holds is not ours, and the one that matches is
// not claimed while another of our calls with the same arguments, sent and not failed, names
// no effect of its own: that call may have made it; a keyed tool's replay may still tell),
// needs_review once no way to find out is left (every retention passed since the call was
// sent) or after three inconclusive reconciles.
//
// Client windows, as far as this SDK expresses them (docs/mcp-clients.md):
// - wall clock -> the request option `timeout` (McpError -32001 and a courtesy
//   notifications/cancelled on expiry); the background cut-off takes the smaller of the two;
// - an idle window that restarts on progress only -> `timeout` with `resetTimeoutOnProgress:
//   true`, the wall clock then going to `maxTotalTimeout`;
// - an idle window that restarts on any byte, and a first-byte window -> a watch on the
//   response bytes through the transport's `fetch` option, which aborts the request through its
//   `signal` option (the SDK then rejects with -32001 and sends its cancel, as on its own timeout);
// - every request gives an `onprogress` callback: without one the SDK sends no progress token,
//   and a server sends progress only to a caller that asked for it.
//
// `--naive` is the usual agent code: no durable "sent" mark, and when the SDK raises its timeout
// error (-32001) it calls the tool again.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

const MAX_INCONCLUSIVE = 3;
const MAX_CANDIDATES = 20;
const TASK_TTL_MS = 3_600_000;
// A bound so that a call always ends when the client has no limit of its own.
const NO_LIMIT_MS = 25_000;
const LOCK_BOUND_MS = 30_000;

// ---------------------------------------------------------------- the durable store

function stateDir() {
  const dir = path.join(process.env.LOSTREPLY_STATE_DIR, 'ops');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

const safe = (id) => id.replace(/[^A-Za-z0-9._-]/g, '_');

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

async function locked(opId, body) {
  const lock = path.join(stateDir(), `${safe(opId)}.lock`);
  const started = Date.now();
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      const owner = Number(fs.readFileSync(lock, 'utf8') || '0');
      if (owner && !alive(owner)) {
        fs.rmSync(lock, { force: true }); // its owner was killed (a crash step)
        continue;
      }
      if (Date.now() - started > LOCK_BOUND_MS) throw new Error(`lock ${lock} held by ${owner}`);
      await new Promise((r) => setTimeout(r, 10)); // waiting for another process's call to end
    }
  }
  try {
    return await body();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

function load(opId) {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir(), `${safe(opId)}.json`), 'utf8'));
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    throw e;
  }
}

// A record file that does not parse: the store is damaged, and no answer is safe.
class CorruptRecord extends Error {}

// Every operation's record, in no particular order. A temporary file (a save a crash
// interrupted) and a lock file are not records. Each record is replaced only by an atomic
// rename, so each one read is one whole save, though not all from one instant.
function records() {
  const dir = stateDir();
  const out = [];
  for (const name of fs.readdirSync(dir)) {
    if (!name.endsWith('.json')) continue;
    let text;
    try {
      text = fs.readFileSync(path.join(dir, name), 'utf8');
    } catch (e) {
      if (e.code === 'ENOENT') continue; // removed since the listing: simply not there any more
      throw e;
    }
    try {
      out.push(JSON.parse(text));
    } catch (e) {
      throw new CorruptRecord(`record ${name} does not parse: ${e.message}`);
    }
  }
  return out;
}

function save(record) {
  const file = path.join(stateDir(), `${safe(record.operation.id)}.json`);
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  fs.writeSync(fd, JSON.stringify(record));
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

const reply = (r) => ({
  operation_id: r.operation.id,
  outcome: r.outcome,
  provider_ref: r.provider_ref ?? null,
  needs_review: r.needs_review ?? false,
  evidence: r.evidence ?? '',
});

const verdict = (outcome, provider_ref, evidence, needs_review = false) => ({ outcome, provider_ref, evidence, needs_review });

function absorb(record, v) {
  record.outcome = v.outcome;
  if (v.provider_ref) record.provider_ref = v.provider_ref;
  record.needs_review = v.needs_review ?? false;
  record.evidence = v.evidence;
  record.inconclusive = 0;
}

// ---------------------------------------------------------------- what an answer means (pure)

// 408, 409, 425 and every 5xx: the work may have run; any other 4xx (429 too) refused it.
const ambiguousStatus = (s) => !(s >= 400 && s < 500) || [408, 409, 425].includes(s);

function payloadId(p) {
  if (!p || typeof p !== 'object') return null;
  const v = p.operation_id ?? p.id;
  return typeof v === 'string' ? v : null;
}

function payload(result) {
  if (result.structuredContent != null) return result.structuredContent;
  const text = (result.content ?? []).find((c) => typeof c.text === 'string')?.text;
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorStatus(result) {
  const s = result.structuredContent?.status;
  if (Number.isInteger(s)) return s;
  const text = (result.content ?? []).find((c) => typeof c.text === 'string')?.text?.trimStart();
  if (text?.startsWith('HTTP ')) {
    const n = Number(text.slice(5, 8));
    return Number.isInteger(n) ? n : null;
  }
  return null;
}

function toolResultVerdict(result, source) {
  if (result.isError === true) {
    const status = errorStatus(result);
    if (status != null && !ambiguousStatus(status)) return verdict('failed', null, `${source} was rejected with status ${status}: no effect`);
    if (status != null) return verdict('unknown', null, `${source} answered an error with status ${status}: it may have run`);
    return verdict('unknown', null, `${source} answered an error without a status: its words decide nothing`);
  }
  const body = payload(result);
  if (body == null) return verdict('unknown', null, `${source} answered a result without a readable payload`);
  const id = payloadId(body);
  return id ? verdict('succeeded', id, `${source} returned operation ${id}`) : verdict('unknown', null, `${source} succeeded without an operation id`);
}

function retrieved(result, id) {
  if (result == null) return ['failed', `get_operation ${id}: no answer`];
  if (result.isError === true) return errorStatus(result) === 404 ? ['not_found'] : ['failed', `get_operation ${id} answered an error`];
  const body = payload(result);
  if (!body || typeof body !== 'object') return ['failed', `get_operation ${id}: unreadable answer`];
  if (body.found === false) return ['not_found'];
  const status = body.status ?? '';
  const source = `get_operation ${id}`;
  if (['working', 'processing', 'pending', 'input_required'].includes(status)) return ['found', verdict('pending', id, `${source}: still ${status}`)];
  if (['failed', 'cancelled'].includes(status)) return ['found', verdict('failed', null, `${source}: ${status}, no effect`)];
  const original = body.result && typeof body.result === 'object' ? body.result : body;
  const named = payloadId(original) ?? payloadId(body);
  return named ? ['found', verdict('succeeded', named, `${source}: completed as operation ${named}`)] : ['failed', `${source}: a completed answer without an id`];
}

// `list_recent_operations`' items as {id, args (or null)}, newest first; null when unreadable.
function recentOperations(result) {
  if (result == null || result.isError === true) return null;
  const body = payload(result);
  const items = body?.operations ?? body?.ids;
  if (!Array.isArray(items)) return null;
  return items
    .map((i) =>
      typeof i === 'string'
        ? { id: i, args: null }
        : { id: payloadId(i), args: i && typeof i.arguments === 'object' && !Array.isArray(i.arguments) ? i.arguments : null },
    )
    .filter((i) => i.id);
}

function recentIds(result) {
  return recentOperations(result)?.map((i) => i.id) ?? null;
}

function retrievedArguments(result) {
  const body = result ? payload(result) : null;
  if (!body || typeof body !== 'object') return null;
  const original = body.result && typeof body.result === 'object' ? body.result : body;
  return original.arguments && typeof original.arguments === 'object' ? original.arguments : null;
}

// ---------------------------------------------------------------- the SDK

// The SDK's own timer: the wall clock, or, for an idle window that restarts on progress only,
// `timeout` with `resetTimeoutOnProgress` (the wall clock then in `maxTotalTimeout`). An
// `onprogress` callback is always given: without one the SDK sends no progress token, and a
// server reports progress only to a caller that asked for it.
function callOptions(windows) {
  const walls = [windows.wall_clock_ms, windows.background_after_ms].filter((w) => w != null);
  const wall = walls.length ? Math.min(...walls) : null;
  const onprogress = () => {};
  if (windows.idle_ms != null && windows.idle_resets_on === 'progress') {
    return { timeout: windows.idle_ms, resetTimeoutOnProgress: true, maxTotalTimeout: wall ?? NO_LIMIT_MS, onprogress };
  }
  return { timeout: wall ?? NO_LIMIT_MS, onprogress };
}

// A client window ran out before the answer came.
class WindowExpired extends Error {
  name = 'WindowExpired';
}

// The windows counted in bytes, which the SDK's timer cannot see: an idle window that restarts
// on any byte, and a first-byte window. Applied through two SDK options: the transport's `fetch`
// (which sees every byte of a request's response) and the request's `signal` (aborting it rejects
// the call and sends the SDK's courtesy notifications/cancelled, as its own timeout does). One
// watch per request; the adapter sends one request at a time.
function byteWatch(windows) {
  const idleMs = windows.idle_ms != null && windows.idle_resets_on !== 'progress' ? windows.idle_ms : null;
  const firstByteMs = windows.first_byte_ms ?? null;
  let current = null;
  return {
    // `fetch` for the transport: a request's response feeds the watch of the request in flight.
    fetch: async (url, init) => {
      const watch = current;
      const response = await fetch(url, init);
      if (watch == null || init?.method !== 'POST' || !isRequestBody(init.body)) return response;
      watch.byte(); // the status line and headers are the first bytes
      if (!response.ok || response.body == null) return response;
      const body = response.body.pipeThrough(
        new TransformStream({
          transform(chunk, controller) {
            watch.byte();
            controller.enqueue(chunk);
          },
        }),
      );
      return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    },
    // Runs `send(signal)` under a fresh watch; the windows run from the request.
    async around(send) {
      if (idleMs == null && firstByteMs == null) return send(undefined);
      const abort = new AbortController();
      const timers = {};
      const expire = (why) => abort.abort(new WindowExpired(why));
      const watch = {
        byte() {
          clearTimeout(timers.first);
          if (idleMs != null) {
            clearTimeout(timers.idle);
            timers.idle = setTimeout(() => expire(`no byte for the idle window (${idleMs} ms)`), idleMs);
          }
        },
      };
      if (firstByteMs != null) timers.first = setTimeout(() => expire(`no byte within the first-byte window (${firstByteMs} ms)`), firstByteMs);
      if (idleMs != null) timers.idle = setTimeout(() => expire(`no byte for the idle window (${idleMs} ms)`), idleMs);
      current = watch;
      try {
        return await send(abort.signal);
      } finally {
        current = null;
        clearTimeout(timers.first);
        clearTimeout(timers.idle);
      }
    },
  };
}

function isRequestBody(body) {
  if (typeof body !== 'string') return false;
  try {
    const message = JSON.parse(body);
    return message?.method !== undefined && message?.id !== undefined;
  } catch {
    return false;
  }
}

async function openSession(common) {
  const mcp = common.provider.contract.mcp;
  const watch = byteWatch(mcp.client);
  const transport = new StreamableHTTPClientTransport(new URL(mcp.url), {
    requestInit: { headers: { Authorization: `Bearer ${common.provider.credential}` } },
    fetch: watch.fetch,
  });
  // The SDK sends its courtesy cancel without awaiting it, and close() aborts every fetch in
  // flight: notifications are let out before the session closes.
  const notifications = new Set();
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const sent = send(message, options);
    if (message.id === undefined) {
      notifications.add(sent);
      sent.catch(() => {}).finally(() => notifications.delete(sent));
    }
    return sent;
  };
  const client = new Client({ name: 'lostreply-example-node', version: '0' });
  const options = callOptions(mcp.client);
  await client.connect(transport, { timeout: options.maxTotalTimeout ?? options.timeout });
  const withSignal = (signal) => (signal ? { ...options, signal } : options);
  const request = (method, params, schema) => watch.around((signal) => client.request({ method, params }, schema, withSignal(signal)));
  const callTool = (params) => watch.around((signal) => client.callTool(params, CallToolResultSchema, withSignal(signal)));
  return {
    async call(name, args, { task = false } = {}) {
      const params = { name, arguments: args };
      if (task) {
        params.task = { ttl: TASK_TTL_MS };
        return request('tools/call', params, CallToolResultSchema.or(CreateTaskResultSchema));
      }
      return callTool(params);
    },
    async retrieval(name, args) {
      try {
        return await callTool({ name, arguments: args });
      } catch {
        return null;
      }
    },
    async rpc(method, params) {
      return request(method, params, method === 'tasks/get' ? GetTaskResultSchema : GetTaskPayloadResultSchema);
    },
    async close() {
      await Promise.allSettled([...notifications]);
      try {
        await client.close();
      } catch {
        /* closing after the answer was recorded: nothing to add */
      }
    },
  };
}

const describe = (e) => (e instanceof McpError ? `McpError ${e.code}: ${e.message}` : `${e?.constructor?.name ?? 'Error'}: ${e?.message ?? e}`);

// ---------------------------------------------------------------- the calls

const toolOf = (mcp, operation) => mcp.tools.find((t) => t.name === operation.tool) ?? null;

function argumentsOf(record, tool) {
  const args = { ...record.operation.args };
  if (tool.key_argument) args[tool.key_argument] = record.key;
  return args;
}

function comparable(args, tool) {
  const out = { ...args };
  if (tool.key_argument) delete out[tool.key_argument];
  return JSON.stringify(Object.keys(out).sort().map((k) => [k, out[k]]));
}

function callVerdict(result, source = 'the call') {
  const taskId = result?.task?.taskId;
  if (typeof taskId === 'string') return ['task', taskId];
  return ['settled', toolResultVerdict(result, source)];
}

const seconds = (rfc3339) => Date.parse(rfc3339) / 1000;

async function send(record, common, naive) {
  const mcp = common.provider.contract.mcp;
  const tool = toolOf(mcp, record.operation);
  let session;
  try {
    session = await openSession(common);
  } catch (e) {
    record.evidence = `could not open an MCP session: ${describe(e)}; the tool call was not sent`;
    if (!naive) save(record);
    return;
  }
  try {
    if (mcp.retrieval && !naive) record.baseline = recentIds(await session.retrieval(mcp.retrieval.list_recent, {}));
    record.sent = true;
    record.evidence = 'tool call sent; no answer recorded yet';
    if (!naive) save(record);
    const attempts = naive ? 2 : 1;
    for (let attempt = 0; attempt < attempts; attempt++) {
      let result;
      try {
        result = await session.call(tool.name, argumentsOf(record, tool), {
          task: Boolean(mcp.tasks) && !naive,
        });
      } catch (e) {
        if (naive && e instanceof McpError && e.code === ErrorCode.RequestTimeout && attempt + 1 < attempts) {
          continue; // the usual reaction: "it timed out, try again"
        }
        absorb(record, verdict('unknown', null, `${describe(e)}: the call may have run; not calling again, retrieval will tell`));
        break;
      }
      const [kind, value] = callVerdict(result);
      if (kind === 'task') {
        record.task_id = value;
        absorb(record, verdict('pending', null, `the call became background task ${value}; waiting for it, not calling again`));
      } else {
        absorb(record, value);
      }
      break;
    }
  } finally {
    await session.close();
  }
  save(record);
}

async function followTask(session, taskId) {
  let task;
  try {
    task = await session.rpc('tasks/get', { taskId });
  } catch {
    return null; // unknown or expired task: retrieval decides
  }
  const status = task.status ?? task.task?.status ?? '';
  const source = `task ${taskId}`;
  if (['working', 'input_required'].includes(status)) return ['evidence', verdict('pending', null, `${source} is still ${status}`)];
  if (['failed', 'cancelled'].includes(status)) return ['evidence', verdict('failed', null, `${source} ended ${status}: no effect`)];
  if (status === 'completed') {
    try {
      const result = await session.rpc('tasks/result', { taskId });
      // A terminal task's error is the task's end, not a lost answer: no effect.
      if (result?.isError === true) return ['evidence', verdict('failed', null, `${source} ended with an error: the task failed, no effect`)];
      return ['evidence', toolResultVerdict(result, source)];
    } catch (e) {
      return ['inconclusive', `${source} completed, but its result could not be read: ${describe(e)}`];
    }
  }
  return null;
}

async function replay(session, record, tool, mcp, nowS) {
  if (!tool.key_argument) return null;
  // Past the key's retention a replay would be new work: a second effect.
  const retentionS = tool.key_retention_s ?? 0;
  if (nowS - record.first_sent_s >= retentionS) return null;
  let result;
  try {
    result = await session.call(tool.name, argumentsOf(record, tool));
  } catch (e) {
    return ['inconclusive', `replay with the same key: ${describe(e)}`];
  }
  const [kind, value] = callVerdict(result, 'the replay with the same key');
  if (kind === 'task') return ['evidence', verdict('pending', null, `replay with the same key: background task ${value} runs`)];
  // A rejection answers this replay only, not the first attempt.
  if (['unknown', 'failed'].includes(value.outcome)) return ['inconclusive', `replay with the same key: ${value.evidence}`];
  return ['evidence', value];
}

// True once neither retrieval nor a same-key replay can tell any more: each is past its
// retention counted from the first send (the operation was created at or after it, so an id
// the list no longer shows has expired or never existed).
function noRungLeft(mcp, record, nowS) {
  const ageS = nowS - record.first_sent_s;
  const retrievalLive = Boolean(mcp.retrieval) && ageS < (mcp.retrieval.retention_s ?? 0);
  const tool = toolOf(mcp, record.operation) ?? {};
  const keyLive = Boolean(tool.key_argument) && ageS < (tool.key_retention_s ?? 0);
  return !retrievalLive && !keyLive;
}

// The one new id whose arguments are ours, unless another of our operations holds it or may
// own it: two of our calls with the same arguments are told apart only by what each already
// knows. ['evidence', verdict] or ['inconclusive', why].
async function findInRecent(session, record, tool, retrieval) {
  const listed = recentOperations(await session.retrieval(retrieval.list_recent, {}));
  if (listed == null) return ['inconclusive', 'list_recent_operations could not be read'];
  const { matches: found, unreadable } = await newWithOurArguments(session, record, tool, retrieval, listed);
  if (found.length === 0) {
    if (unreadable) return ['inconclusive', `${unreadable} recent operations could not be read`];
    return ['inconclusive', `none of the ${listed.length} recent operations is ours (yet)`];
  }
  // Read after the list: an operation whose record does not yet say its call was sent had not
  // sent it when the list was taken, so no listed id can be its effect.
  const others = records().filter((o) => o.operation.id !== record.operation.id);
  const matches = found.filter(([id]) => !others.some((o) => o.provider_ref === id));
  if (matches.length === 0) {
    return ['inconclusive', "each new operation with our arguments is already another of our operations' effect"];
  }
  if (matches.length > 1) {
    return ['evidence', verdict('unknown', null, `${matches.length} recent operations carry our arguments: which one is ours cannot be told; a person must check`, true)];
  }
  const [id, [kind, value]] = matches[0];
  const other = mayOwn(others, comparable(record.operation.args, tool), tool, id);
  if (other) {
    return ['inconclusive', `${id} carries our arguments, but so does the call of ${other.operation.id}, sent and not yet matched to an effect: ${id} may be its effect, so it is not claimed`];
  }
  if (kind === 'found') return ['evidence', value];
  return ['inconclusive', value ?? `${id} was listed but does not retrieve`];
}

// The new ids (not in the baseline) whose retrieved arguments are ours, each with what
// get_operation answered, and how many candidates could not be read.
async function newWithOurArguments(session, record, tool, retrieval, listed) {
  const baseline = record.baseline ?? [];
  const ours = comparable(record.operation.args, tool);
  // A listed item's arguments rule it out without a retrieval; a candidate is still retrieved,
  // for its state.
  const candidates = listed
    .filter((i) => !baseline.includes(i.id) && (i.args == null || comparable(i.args, tool) === ours))
    .map((i) => i.id);
  const matches = [];
  let unreadable = 0;
  for (const id of candidates.slice(0, MAX_CANDIDATES)) {
    const answer = await session.retrieval(retrieval.get, { id });
    const args = retrievedArguments(answer);
    if (args == null) unreadable += 1;
    else if (comparable(args, tool) === ours) matches.push([id, retrieved(answer, id)]);
  }
  return { matches, unreadable };
}

// Another of our operations that may own the effect `id`: it carries the same arguments, has
// been sent, has not failed, names no effect of its own, and did not see `id` listed before its
// call. Its call made at most one effect, but whether `id` is that one or ours cannot be told.
function mayOwn(others, ours, tool, id) {
  return others.find(
    (o) =>
      o.sent &&
      o.outcome !== 'failed' &&
      !o.provider_ref &&
      !(o.baseline ?? []).includes(id) &&
      comparable(o.operation.args, tool) === ours,
  );
}

async function find(session, record, mcp, nowS) {
  if (record.task_id) {
    const found = await followTask(session, record.task_id);
    if (found) return found;
  }
  const retrieval = mcp.retrieval;
  const tool = toolOf(mcp, record.operation);
  if (record.provider_ref && retrieval) {
    const id = record.provider_ref;
    const [kind, value] = retrieved(await session.retrieval(retrieval.get, { id }), id);
    if (kind === 'found') return ['evidence', value];
    if (kind === 'not_found') return ['inconclusive', `get_operation ${id}: not found (expired, or the server forgot it)`];
    return ['inconclusive', value];
  }
  if (retrieval) {
    const found = await findInRecent(session, record, tool, retrieval);
    if (found[0] === 'evidence') return found;
    return (await replay(session, record, tool, mcp, nowS)) ?? found;
  }
  const replayed = await replay(session, record, tool, mcp, nowS);
  if (replayed) return replayed;
  return ['evidence', verdict('unknown', null, "the server offers no retrieval and no replay with the key is left (the tool takes no key, or the key's retention has passed): cannot tell whether the call ran; a person must check", true)];
}

async function reconcile(record, common) {
  if (['succeeded', 'failed'].includes(record.outcome)) return;
  if (!record.sent) {
    await send(record, common, false); // provably never left: send it now
    return;
  }
  const mcp = common.provider.contract.mcp;
  let found;
  let session = null;
  try {
    session = await openSession(common);
    found = await find(session, record, mcp, seconds(common.now));
  } catch (e) {
    if (e instanceof CorruptRecord) throw e; // a damaged store is the adapter's failure, not an inconclusive reconcile
    found = ['inconclusive', `could not open an MCP session: ${describe(e)}`];
  } finally {
    if (session) await session.close();
  }
  const [kind, value] = found;
  if (kind === 'evidence') {
    absorb(record, value);
  } else {
    record.inconclusive = (record.inconclusive ?? 0) + 1;
    if (record.outcome === 'unknown' && noRungLeft(mcp, record, seconds(common.now))) {
      record.needs_review = true;
      record.evidence = `${value}; the retention of every way to find out has passed since the call was sent: nothing can tell any more, a person must check`;
    } else if (record.outcome === 'unknown' && record.inconclusive >= MAX_INCONCLUSIVE) {
      record.needs_review = true;
      record.evidence = `${value}; ${record.inconclusive} reconciles in a row found no evidence: automation stopped, a person must check`;
    } else {
      record.evidence = value;
    }
  }
  save(record);
}

const unknownReply = (id, why) => ({ operation_id: id, outcome: 'unknown', provider_ref: null, needs_review: false, evidence: why });

async function handle(call, request, naive) {
  if (call === 'webhook') return { accepted: false, operation_id: null }; // an MCP server sends none
  if (call === 'execute') {
    const operation = request.operation;
    const mcp = request.provider.contract.mcp;
    if (operation.action !== 'call_tool' || !mcp || !toolOf(mcp, operation)) {
      return unknownReply(operation.id, 'this adapter performs paid MCP tool calls only (action call_tool on a tool the contract lists)');
    }
    return locked(operation.id, async () => {
      let record = load(operation.id);
      if (record == null || naive) {
        record = {
          operation,
          key: `lr-${operation.id}`,
          first_sent_s: seconds(request.now),
          outcome: 'unknown',
          provider_ref: null,
          needs_review: false,
          evidence: 'tool call about to be sent',
          inconclusive: 0,
          sent: false,
          baseline: null,
          task_id: null,
        };
        if (!naive) save(record);
        await send(record, request, naive);
      } else {
        await reconcile(record, request);
      }
      return reply(record);
    });
  }
  const id = request.operation_id;
  return locked(id, async () => {
    const record = load(id);
    if (record == null) return unknownReply(id, 'no record of this operation');
    if (call === 'reconcile' && !naive) await reconcile(record, request);
    if (call === 'resolve') {
      const r = request.resolution;
      record.outcome = r.outcome;
      record.provider_ref = r.provider_ref ?? null;
      record.needs_review = false;
      record.evidence = `resolved by ${r.by ?? 'operator'}: ${r.evidence ?? ''}`;
      save(record);
    }
    return reply(record);
  });
}

async function main() {
  const argv = process.argv.slice(2);
  const naive = argv.includes('--naive');
  const calls = argv.filter((a) => !a.startsWith('--'));
  if (calls.length !== 1 || !['execute', 'reconcile', 'webhook', 'resolve', 'status'].includes(calls[0])) {
    process.stderr.write(`usage: adapter.mjs [--naive] execute|reconcile|webhook|resolve|status (got ${argv.join(' ')})\n`);
    return 2;
  }
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  let request;
  try {
    request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (e) {
    process.stderr.write(`stdin is not JSON: ${e.message}\n`);
    return 2;
  }
  if (request === null || typeof request !== 'object' || request.protocol !== 1) {
    process.stderr.write('stdin is not a protocol-1 request object\n');
    return 2;
  }
  const out = await handle(calls[0], request, naive);
  process.stdout.write(JSON.stringify(out) + '\n');
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`adapter: ${e?.stack ?? e}\n`);
    process.exit(1);
  },
);
