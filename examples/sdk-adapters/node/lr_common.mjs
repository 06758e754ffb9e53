// Shared plumbing of the Node SDK adapters: the adapter protocol (v1), the durable store, the locks.
//
// The Node adapters in this directory (stripe_adapter.mjs, openai_adapter.mjs, openai_naive.mjs)
// each use a provider's official SDK as the transport; what they have in common lives here, once,
// and mirrors ../python/lr_common.py record for record:
//
// - protocol I/O: `main` reads the call name from argv and one JSON object from stdin (or, for
//   `serve`, one `{"call", "request"}` line at a time) and writes one JSON object per call; it
//   exits non-zero only for misuse of the protocol (docs/adapter-protocol.md).
// - the store: `$LOSTREPLY_STATE_DIR/ops/<id>.json`, replaced atomically (write, fsync, rename,
//   fsync the directory), in the same format as the Python adapters'.
// - the lock: an exclusive `flock` on `ops/<id>.lock`, the same lock the Python adapters take.
//   Node has no flock of its own, so a `flock(1)` child process takes it and holds it until its
//   stdin closes: when this process ends, or is killed (the harness kills the whole process
//   group, the child with it), the kernel releases the lock. No polling, no stale lock files.
// - `AdapterBase`: the provider-independent half of the calls: intent written before the first
//   send, terminal outcomes that never change, the operator's resolution as final, `status`
//   that only reads, escalation when no rung of the ladder can give evidence any more.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

export const PROTOCOL_VERSION = 1;
export const CALLS = ['execute', 'reconcile', 'webhook', 'resolve', 'status'];
export const TERMINAL = ['succeeded', 'failed'];
const OUTCOMES = ['unknown', 'pending', 'succeeded', 'failed'];
export const OPERATION_ID_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
const MAX_EVENTS_REMEMBERED = 1000;
// The safety net on top of the situation rule (AdapterBase.deadEnd).
export const MAX_INCONCLUSIVE_RECONCILES = 5;
// Freshness of signed webhook timestamps, checked against the request's `now`.
export const WEBHOOK_TOLERANCE_S = 300;
export const REJECTED = Object.freeze({ accepted: false, operation_id: null });

const PROGRAM = path.basename(process.argv[1] ?? 'adapter');

export function log(message) {
  process.stderr.write(`${PROGRAM}: ${message}\n`);
}

export class BadRequest extends Error {}
export class StoreError extends Error {}

// ---------------------------------------------------------------- requests

function fieldOf(obj, name, kind, where = '') {
  if (obj === null || typeof obj !== 'object' || !(name in obj)) throw new BadRequest(`request lacks ${where}${name}`);
  const value = obj[name];
  const ok = kind === 'object' ? value !== null && typeof value === 'object' && !Array.isArray(value)
    : kind === 'int' ? Number.isInteger(value)
    : typeof value === kind;
  if (!ok) throw new BadRequest(`request field ${where}${name} has the wrong type`);
  return value;
}
export { fieldOf };

/** RFC 3339 (`Z` or an offset, any number of fraction digits) as seconds since the epoch, a float. */
export function parseTime(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (!m) throw new Error(`not an RFC 3339 time: ${JSON.stringify(text)}`);
  const base = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) / 1000;
  const fraction = m[7] ? Number(`0${m[7]}`) : 0;
  const offset = m[9] ? (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 3600 + Number(m[11]) * 60) : 0;
  return base + fraction - offset;
}

/** RFC 3339 in UTC with microseconds, as the Python adapters write it. */
export function formatTimeExact(seconds) {
  const whole = Math.floor(seconds);
  const micros = Math.round((seconds - whole) * 1e6);
  return `${new Date(whole * 1000).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}Z`;
}

export function parseCommon(request) {
  let now;
  try {
    now = parseTime(fieldOf(request, 'now', 'string'));
  } catch (e) {
    if (e instanceof BadRequest) throw e;
    throw new BadRequest(`request field now: ${e.message}`);
  }
  const provider = fieldOf(request, 'provider', 'object');
  const contract = fieldOf(provider, 'contract', 'object', 'provider.');
  const idem = contract.idempotency && typeof contract.idempotency === 'object' ? contract.idempotency : {};
  const lookup = contract.lookup && typeof contract.lookup === 'object' ? contract.lookup : {};
  const webhooks = contract.webhooks ?? null;
  if (webhooks !== null && typeof webhooks !== 'object') throw new BadRequest('request field provider.contract.webhooks must be null or an object');
  const secret = webhooks ? fieldOf(webhooks, 'secret', 'string', 'provider.contract.webhooks.') : null;
  const timeoutMs = fieldOf(request, 'client_timeout_ms', 'int');
  if (timeoutMs <= 0) throw new BadRequest('request field client_timeout_ms must be positive');
  const baseUrl = fieldOf(provider, 'base_url', 'string', 'provider.').replace(/\/+$/, '');
  if (!/^https?:\/\//.test(baseUrl)) throw new BadRequest(`provider.base_url must be http(s), got ${JSON.stringify(baseUrl)}`);
  const mode = typeof idem.mode === 'string' ? idem.mode : 'none';
  return {
    now,
    baseUrl,
    credential: fieldOf(provider, 'credential', 'string', 'provider.'),
    timeoutMs,
    contract: {
      profile: typeof contract.profile === 'string' ? contract.profile : 'generic',
      idempotencyMode: mode,
      hasKeys: mode !== 'none',
      retentionS: Number.isInteger(idem.retention_s) ? idem.retention_s : 0,
      retrieve: lookup.retrieve === true,
      clientReference: lookup.client_reference === true,
      listRecent: lookup.list_recent === true,
      asynchronous: contract.asynchronous === true,
      webhookSecret: secret,
    },
  };
}

export function checkOperationId(value) {
  if (typeof value !== 'string' || !OPERATION_ID_RE.test(value)) {
    throw new BadRequest(`operation id ${JSON.stringify(value)} is not a valid id ([A-Za-z0-9_.-], 1 to 64 characters); nothing was done`);
  }
  return value;
}

export function lowerHeaders(headers) {
  const out = {};
  if (headers && typeof headers === 'object') for (const [k, v] of Object.entries(headers)) out[String(k).toLowerCase()] = String(v);
  return out;
}

// ---------------------------------------------------------------- the store

export function newRecord(opId, resource, args, key, firstSentAt) {
  return {
    operation: { id: opId, resource, args },
    key,
    first_sent_at: firstSentAt,
    outcome: 'unknown',
    provider_ref: null,
    needs_review: false,
    evidence: 'create about to be sent',
    inconclusive: 0,
    events_seen: [],
    in_flight: false,
    ambiguous: false,
    sends: 0,
  };
}

export const isTerminal = (record) => TERMINAL.includes(record.outcome);

export function reply(record, evidence = null) {
  return {
    operation_id: record.operation.id,
    outcome: record.outcome,
    provider_ref: record.provider_ref ?? null,
    needs_review: record.needs_review === true,
    evidence: evidence ?? record.evidence ?? '',
  };
}

export function unknownReply(opId, evidence, needsReview = false) {
  return { operation_id: typeof opId === 'string' ? opId : '', outcome: 'unknown', provider_ref: null, needs_review: needsReview, evidence };
}

export class Store {
  constructor(stateDir, create = true) {
    this.opsDir = path.join(stateDir, 'ops');
    if (create) {
      try {
        fs.mkdirSync(this.opsDir, { recursive: true });
      } catch (e) {
        throw new StoreError(`cannot create the store in ${this.opsDir}: ${e.message}`);
      }
    }
  }

  path(opId, suffix) {
    if (!OPERATION_ID_RE.test(opId)) throw new StoreError(`refusing a store path for operation id ${JSON.stringify(opId)}`);
    return path.join(this.opsDir, opId + suffix);
  }

  load(opId) {
    let raw;
    try {
      raw = fs.readFileSync(this.path(opId, '.json'), 'utf8');
    } catch (e) {
      if (e.code === 'ENOENT') return null;
      throw new StoreError(`cannot read the record of ${opId}: ${e.message}`);
    }
    let record;
    try {
      record = JSON.parse(raw);
    } catch (e) {
      throw new StoreError(`the record of ${opId} is not JSON: ${e.message}`);
    }
    if (!record || typeof record.operation !== 'object' || !OUTCOMES.includes(record.outcome)) {
      throw new StoreError(`stored record of ${opId} is malformed`);
    }
    record.events_seen ??= [];
    return record;
  }

  save(record) {
    const file = this.path(record.operation.id, '.json');
    const tmp = `${file}.tmp`;
    try {
      const fd = fs.openSync(tmp, 'w', 0o644);
      try {
        fs.writeSync(fd, JSON.stringify(record, null, 2));
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
      const dir = fs.openSync(this.opsDir, 'r');
      try {
        fs.fsyncSync(dir);
      } finally {
        fs.closeSync(dir);
      }
    } catch (e) {
      throw new StoreError(`cannot save the record of ${record.operation.id}: ${e.message}`);
    }
  }

  /** Runs `body` holding the exclusive flock of the operation (see the header comment). */
  async withLock(opId, body) {
    const lockFile = this.path(opId, '.lock');
    const holder = spawn('flock', ['--exclusive', lockFile, '-c', 'echo locked; exec cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise((resolve) => holder.once('close', resolve));
    await new Promise((resolve, reject) => {
      let said = '';
      holder.stdout.on('data', (chunk) => {
        said += chunk;
        if (said.includes('locked')) resolve();
      });
      holder.once('error', (e) => reject(new StoreError(`cannot run flock(1) for ${opId}: ${e.message}`)));
      holder.once('close', (code) => reject(new StoreError(`flock(1) for ${opId} ended (${code}) before taking the lock`)));
    });
    try {
      return await body();
    } finally {
      holder.stdin.end();
      await exited;
    }
  }
}

// ---------------------------------------------------------------- claims

export const verdict = (outcome, providerRef, evidence, needsReview = false) => ({
  outcome,
  provider_ref: providerRef ?? null,
  evidence,
  needs_review: needsReview,
});
export const inconclusive = (v) => v.outcome === 'unknown' && !v.needs_review;
export const prefixed = (v, prefix) => ({ ...v, evidence: `${prefix}: ${v.evidence}` });

export class AdapterBase {
  // A subclass sets PROFILE and RESOURCES and supplies sendFirst, reconcileLocked, deadEnd and,
  // if it takes them, webhook.
  static PROFILE = 'generic';
  static RESOURCES = [];

  constructor(store, common) {
    this.store = store;
    this.common = common;
    this.contract = common.contract;
  }

  keyFor() {
    return null;
  }

  validateArgs() {}

  async webhook() {
    log('webhook rejected: this adapter takes no webhooks for this profile');
    return { ...REJECTED };
  }

  ageS(record) {
    return this.common.now - parseTime(record.first_sent_at);
  }

  keyRetained(record) {
    return record.key != null && this.contract.hasKeys && this.ageS(record) < this.contract.retentionS;
  }

  /** The record under its lock (null when the store never saw the id: no lock file then). */
  async withRecord(opId, body) {
    if (this.store.load(opId) === null) return body(null);
    return this.store.withLock(opId, async () => {
      const record = this.store.load(opId);
      if (record && record.in_flight) {
        // Its process died with a create on the wire: that create may have committed.
        record.in_flight = false;
        record.ambiguous = true;
      }
      return body(record);
    });
  }

  beginSend(record) {
    record.in_flight = true;
    record.sends = (record.sends ?? 0) + 1;
    this.store.save(record);
  }

  endSend(record, ambiguous) {
    record.in_flight = false;
    record.ambiguous = record.ambiguous || ambiguous;
  }

  apply(record, v, reconciling) {
    if (isTerminal(record)) return;
    if (inconclusive(v)) {
      if (reconciling) record.inconclusive = (record.inconclusive ?? 0) + 1;
      if (record.needs_review) log(`${record.operation.id}: still awaiting review; no new evidence: ${v.evidence}`);
      else if (record.outcome === 'pending') record.evidence = `still pending as last seen; ${v.evidence}`;
      else record.evidence = v.evidence;
    } else if (v.outcome === 'unknown' && record.outcome === 'pending') {
      record.inconclusive = 0;
      record.needs_review = true;
      record.evidence = `still pending as last seen; ${v.evidence}`;
    } else {
      record.inconclusive = 0;
      record.outcome = v.outcome;
      if (v.provider_ref != null) record.provider_ref = v.provider_ref;
      record.needs_review = v.needs_review;
      record.evidence = v.evidence;
    }
    if (isTerminal(record)) {
      record.needs_review = false;
      return;
    }
    const reason = this.deadEnd(record);
    if (reason !== null && !record.needs_review) {
      record.needs_review = true;
      record.evidence += `; ${reason}`;
    }
    if (record.inconclusive >= MAX_INCONCLUSIVE_RECONCILES && !record.needs_review) {
      record.needs_review = true;
      record.evidence += ` (${record.inconclusive} reconciles in a row without evidence: automation stopped, a person must check)`;
    }
  }

  async execute(request) {
    const operation = fieldOf(request, 'operation', 'object');
    const opId = checkOperationId(operation.id);
    if ((operation.action ?? 'create') !== 'create') throw new BadRequest(`operation.action ${JSON.stringify(operation.action)} is not create; nothing was sent`);
    const resource = fieldOf(operation, 'resource', 'string', 'operation.');
    const { RESOURCES, PROFILE } = this.constructor;
    if (!RESOURCES.includes(resource)) throw new BadRequest(`operation.resource ${JSON.stringify(resource)} is not one of ${RESOURCES.join(', ')}; nothing was sent`);
    const args = fieldOf(operation, 'args', 'object', 'operation.');
    if (this.contract.profile !== PROFILE) {
      throw new BadRequest(`this adapter speaks the ${PROFILE} profile, the provider's contract says ${JSON.stringify(this.contract.profile)}; nothing was sent`);
    }
    this.validateArgs(resource, args);
    return this.store.withLock(opId, async () => {
      let record = this.store.load(opId);
      if (record !== null) {
        if (record.in_flight) {
          record.in_flight = false;
          record.ambiguous = true;
        }
        // Never execute twice: a terminal record is the answer; otherwise find out, as reconcile would.
        if (!isTerminal(record)) {
          this.apply(record, await this.reconcileLocked(record), true);
          this.store.save(record);
        }
        return reply(record);
      }
      record = newRecord(opId, resource, args, this.keyFor(opId), formatTimeExact(this.common.now));
      // Intent is durable before the SDK sends anything.
      this.store.save(record);
      this.apply(record, await this.sendFirst(record), false);
      this.store.save(record);
      return reply(record);
    });
  }

  async reconcile(request) {
    const opId = checkOperationId(request.operation_id);
    return this.withRecord(opId, async (record) => {
      if (record === null) return unknownReply(opId, 'no record of this operation in the store');
      if (!isTerminal(record)) {
        this.apply(record, await this.reconcileLocked(record), true);
        this.store.save(record);
      }
      return reply(record);
    });
  }

  async resolve(request) {
    const opId = checkOperationId(request.operation_id);
    const resolution = fieldOf(request, 'resolution', 'object');
    const outcome = fieldOf(resolution, 'outcome', 'string', 'resolution.');
    if (!TERMINAL.includes(outcome)) throw new BadRequest(`resolution.outcome must be succeeded or failed, got ${JSON.stringify(outcome)}; nothing was changed`);
    const ref = resolution.provider_ref ?? null;
    if (ref !== null && typeof ref !== 'string') throw new BadRequest('resolution.provider_ref must be a string or null; nothing was changed');
    const said = typeof resolution.evidence === 'string' ? resolution.evidence : '';
    return this.withRecord(opId, async (record) => {
      if (record === null) return unknownReply(opId, 'no record of this operation in the store; resolution not applied');
      if (isTerminal(record)) return reply(record, `resolution ignored: the outcome was already final (${record.evidence})`);
      record.outcome = outcome;
      record.provider_ref = ref;
      record.needs_review = false;
      record.evidence = `operator: ${said}`;
      this.store.save(record);
      return reply(record);
    });
  }

  async status(request) {
    const opId = checkOperationId(request.operation_id);
    // No lock and no network: records are replaced atomically; status changes nothing.
    const record = this.store.load(opId);
    return record === null ? unknownReply(opId, 'no record of this operation in the store') : reply(record);
  }

  /** The locked half of a webhook: dedupe by event id, apply without regressing. */
  async applyEvent(opId, eventId, v) {
    return this.withRecord(opId, async (record) => {
      if (record === null) return { accepted: true, operation_id: null };
      if (record.events_seen.includes(eventId)) return { accepted: true, operation_id: opId };
      record.events_seen = [...record.events_seen, eventId].slice(-MAX_EVENTS_REMEMBERED);
      if (v && v.outcome !== 'unknown' && v.provider_ref != null && (record.provider_ref == null || record.provider_ref === v.provider_ref)) {
        this.apply(record, v, false);
      }
      this.store.save(record);
      return { accepted: true, operation_id: opId };
    });
  }
}

// ---------------------------------------------------------------- entry point

/** A handler running one call on an adapter made by `factory`; nothing it cannot act on crashes it. */
export function makeHandler(factory) {
  return async (call, request, stateDir) => {
    let opId = request.operation_id;
    if (call === 'execute') opId = request.operation?.id;
    try {
      const common = parseCommon(request);
      const adapter = factory(new Store(stateDir, call !== 'status'), common);
      return await adapter[call](request);
    } catch (e) {
      if (e instanceof BadRequest) {
        log(`${call}: ${e.message}`);
        return call === 'webhook' ? { ...REJECTED } : unknownReply(opId, `cannot act on this request: ${e.message}`);
      }
      if (e instanceof StoreError) {
        log(`${call}: ${e.message}`);
        return call === 'webhook' ? { ...REJECTED } : unknownReply(opId, `the durable store failed: ${e.message}`, true);
      }
      log(`${call}: unexpected ${e?.constructor?.name}: ${e?.stack ?? e}`);
      return call === 'webhook'
        ? { ...REJECTED }
        : unknownReply(opId, `the adapter failed unexpectedly (${e?.constructor?.name}: ${e?.message}); a person must check`, true);
    }
  };
}

function checkProtocol(call, request) {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    log(`${call}: the request must be one JSON object`);
    return false;
  }
  if (request.protocol !== PROTOCOL_VERSION) {
    log(`${call}: request protocol is ${JSON.stringify(request.protocol)}; this adapter speaks ${PROTOCOL_VERSION}`);
    return false;
  }
  return true;
}

async function readStdin() {
  const chunks = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function serve(handle, stateDir) {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let message;
    try {
      message = JSON.parse(line);
    } catch (e) {
      log(`serve: a line is not JSON: ${e.message}`);
      return 2;
    }
    if (!message || !CALLS.includes(message.call) || typeof message.request !== 'object') {
      log(`serve: each line must be {"call": <${CALLS.join('|')}>, "request": {...}}`);
      return 2;
    }
    if (!checkProtocol(message.call, message.request)) return 2;
    process.stdout.write(`${JSON.stringify(await handle(message.call, message.request, stateDir))}\n`);
  }
  return 0;
}

/** Protocol plumbing: argv, environment, stdin, stdout, exit status. */
export async function main(handle) {
  const args = process.argv.slice(2);
  const call = args[0];
  if (args.length !== 1 || ![...CALLS, 'serve'].includes(call)) {
    log(`usage: ${PROGRAM} <${[...CALLS, 'serve'].join('|')}> (got ${JSON.stringify(args)})`);
    return 2;
  }
  const version = process.env.LOSTREPLY_PROTOCOL;
  if (version !== undefined && version !== String(PROTOCOL_VERSION)) {
    log(`LOSTREPLY_PROTOCOL=${JSON.stringify(version)}: this adapter speaks protocol ${PROTOCOL_VERSION} only`);
    return 2;
  }
  const stateDir = process.env.LOSTREPLY_STATE_DIR;
  if (!stateDir) {
    log('LOSTREPLY_STATE_DIR is not set: there is nowhere to keep the durable store');
    return 2;
  }
  if (call === 'serve') return serve(handle, stateDir);
  const raw = await readStdin();
  if (raw === null) {
    log(`${call}: stdin is larger than ${MAX_REQUEST_BYTES} bytes`);
    return 2;
  }
  let request;
  try {
    request = JSON.parse(raw);
  } catch (e) {
    log(`${call}: stdin is not JSON: ${e.message}`);
    return 2;
  }
  if (!checkProtocol(call, request)) return 2;
  const out = await handle(call, request, stateDir);
  await new Promise((resolve) => process.stdout.write(`${JSON.stringify(out)}\n`, resolve));
  return 0;
}

/** Runs `main` and exits with its status once stdout is flushed (SDK keep-alive sockets would hold the process). */
export function run(handle) {
  main(handle).then(
    (code) => process.exit(code),
    (e) => {
      log(`fatal: ${e?.stack ?? e}`);
      process.exit(1);
    },
  );
}
