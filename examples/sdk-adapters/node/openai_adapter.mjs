// A correct lostreply adapter for the openai profile, on the official SDK (openai-node 7.x).
//
// Usage: `node openai_adapter.mjs <execute|reconcile|webhook|resolve|status|serve>` with the
// adapter protocol's JSON on stdin (docs/adapter-protocol.md); the SDK comes from
// package-lock.json next to this file (`npm ci`).
//
// The Node twin of ../python/openai_adapter.py: OpenAI honours no idempotency key and the SDK
// sends none, so every send is a new, billed generation. Hence:
//
// - `new OpenAI({baseURL: base_url + '/v1', apiKey, maxRetries: 0, timeout: client_timeout_ms})`:
//   the default `maxRetries: 2` turns a lost answer after a commit into a second generation;
// - the create is sent once per operation, ever; a lost answer is `unknown`;
// - the body is `args` plus only what the adapter may add: `metadata.operation_id`, and for
//   chat completions `store: true` unless the args set `store`;
// - reconcile finds a stored chat completion through `client.chat.completions.list({metadata})`
//   and retrieves a response whose id is known; an empty list counts as absence (`failed`,
//   never re-sent) only ABSENCE_SETTLE_S after the send by the request's `now`; where nothing
//   can find the operation a person is asked at once.
import OpenAI from 'openai';
import { AdapterBase, BadRequest, makeHandler, run, verdict } from './lr_common.mjs';

const RESPONSE_OUTCOME = {
  completed: 'succeeded',
  incomplete: 'succeeded',
  failed: 'failed',
  cancelled: 'failed',
  queued: 'pending',
  in_progress: 'pending',
};
const REJECTIONS = [400, 401, 403, 404, 422, 429];
// See the Python twin: the SDK's own default timeout (600 s) bounds how long a lost
// generation is taken to be possibly still running.
const ABSENCE_SETTLE_S = 600;
const LIST_LIMIT = 100;

function classifyObject(resource, obj, source) {
  if (!obj || typeof obj.id !== 'string' || !obj.id) return verdict('unknown', null, `${source}: the answer has no id`);
  if (resource === 'chat_completions') return verdict('succeeded', obj.id, `${source}: chat completion ${obj.id}`);
  const outcome = RESPONSE_OUTCOME[obj.status];
  if (!outcome) return verdict('unknown', null, `${source}: response ${obj.id} has an unrecognised status ${JSON.stringify(obj.status)}`);
  return verdict(outcome, obj.id, `${source}: response ${obj.id} is ${obj.status}`);
}

/** What fetch said underneath (undici nests the socket's error two causes deep). */
function causes(err) {
  const said = [];
  for (let c = err?.cause, n = 0; c && n < 4; c = c.cause, n += 1) said.push(`${c.code ?? c.constructor?.name}: ${c.message}`);
  return said.length ? ` (${said.join(' <- ')})` : '';
}

/** [verdict, ambiguous] for an error thrown by a create. */
function classifyError(err, what) {
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    return [verdict('unknown', null, `${what}: APIConnectionTimeoutError: no answer in time; the generation may have run`), true];
  }
  if (err instanceof OpenAI.APIConnectionError) {
    return [verdict('unknown', null, `${what}: APIConnectionError${causes(err)}; the generation may have run`), true];
  }
  if (err instanceof OpenAI.APIError && Number.isInteger(err.status)) {
    const words = [err.status, err.type, err.code].filter((w) => w).join(' ');
    if (REJECTIONS.includes(err.status)) return [verdict('failed', null, `${what}: rejected before execution: ${words}`), false];
    return [verdict('unknown', null, `${what}: ${words}: the generation may or may not have run`), true];
  }
  return [verdict('unknown', null, `${what}: ${err?.constructor?.name}: ${err?.message}${causes(err)}: the answer could not be read`), true];
}

class OpenAIAdapter extends AdapterBase {
  static PROFILE = 'openai';
  static RESOURCES = ['chat_completions', 'responses'];

  constructor(store, common) {
    super(store, common);
    this.client = new OpenAI({ baseURL: `${common.baseUrl}/v1`, apiKey: common.credential, maxRetries: 0, timeout: common.timeoutMs });
  }

  validateArgs(resource, args) {
    if (args.stream === true) throw new BadRequest('args ask for a stream; this adapter sends non-streaming creates only; nothing was sent');
    if (args.background === true && !this.contract.retrieve) {
      throw new BadRequest('args ask for a background response but the contract offers no retrieve; nothing was sent');
    }
  }

  // Whether the provider keeps the object where a lookup can find it: a chat completion only
  // with `store: true` (added when the args leave `store` out; null is the API's default, not
  // stored), a response unless `store: false`.
  stored(record) {
    const { resource, args } = record.operation;
    if (resource === 'responses') return args.store !== false;
    return !('store' in args) || args.store === true;
  }

  body(record) {
    const body = { ...record.operation.args };
    const metadata = body.metadata && typeof body.metadata === 'object' ? body.metadata : {};
    body.metadata = { ...metadata, operation_id: record.operation.id };
    if (record.operation.resource === 'chat_completions' && !('store' in body)) body.store = true;
    return body;
  }

  async sendFirst(record) {
    const chat = record.operation.resource === 'chat_completions';
    const what = `POST /v1/${chat ? 'chat/completions' : 'responses'}`;
    this.beginSend(record);
    let v;
    let ambiguous = false;
    try {
      const obj = chat ? await this.client.chat.completions.create(this.body(record)) : await this.client.responses.create(this.body(record));
      v = classifyObject(record.operation.resource, obj, `${what} answered`);
    } catch (err) {
      [v, ambiguous] = classifyError(err, what);
    }
    this.endSend(record, ambiguous);
    return v;
  }

  deadEnd(record) {
    if (record.operation.resource === 'responses') {
      if (record.provider_ref != null && this.contract.retrieve) return null;
      return 'a response can be looked up only by the id its lost answer carried; no idempotency keys: cannot tell whether the generation ran; a person must check';
    }
    if (this.contract.clientReference && this.stored(record)) return null;
    const why = this.stored(record) ? 'the contract offers no stored-completions lookup' : 'the args do not let the completion be stored';
    return `no idempotency keys and ${why}: cannot tell whether the generation ran; a person must check`;
  }

  async reconcileLocked(record) {
    const reason = this.deadEnd(record);
    if (reason !== null) return verdict('unknown', null, reason, true);
    if (record.operation.resource === 'responses') {
      const ref = record.provider_ref;
      try {
        return classifyObject('responses', await this.client.responses.retrieve(ref), `retrieve ${ref}`);
      } catch (err) {
        return verdict('unknown', null, `retrieve of ${ref} proved nothing: ${err?.constructor?.name}`);
      }
    }
    const opId = record.operation.id;
    const how = `stored chat completions with metadata[operation_id]=${opId}`;
    let page;
    try {
      page = await this.client.chat.completions.list({ metadata: { operation_id: opId }, limit: LIST_LIMIT });
    } catch (err) {
      return verdict('unknown', null, `${how} proved nothing: ${err?.constructor?.name}: ${err?.message}`);
    }
    const ours = (page.data ?? []).filter((c) => c?.metadata?.operation_id === opId);
    if (ours.length) {
      const more = ours.length > 1 ? ` (${ours.length} found: the first is taken, a person may want to look)` : '';
      return verdict('succeeded', ours[0].id, `${how}: found chat completion ${ours[0].id}${more}`);
    }
    if (page.has_more) return verdict('unknown', null, `${how} proved nothing: more than one page and ours is not on it`);
    const age = Math.floor(this.ageS(record));
    if (age >= ABSENCE_SETTLE_S) {
      return verdict('failed', null, `${how}: none, ${age} s after the only send: the create never committed; not re-sent (no idempotency keys)`);
    }
    return verdict('unknown', null, `${how}: none yet, ${age} s after the send; a lost generation can still be running (absence counts after ${ABSENCE_SETTLE_S} s)`);
  }
}

run(makeHandler((store, common) => new OpenAIAdapter(store, common)));
