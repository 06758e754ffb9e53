// A correct lostreply adapter for the stripe profile, on the official SDK (stripe-node 23.x).
//
// Usage: `node stripe_adapter.mjs <execute|reconcile|webhook|resolve|status|serve>` with the
// adapter protocol's JSON on stdin (docs/adapter-protocol.md); the SDK comes from
// package-lock.json next to this file (`npm ci`).
//
// The Node twin of ../python/stripe_adapter.py: the same store, the same locks, the same ladder,
// the same evidence. What differs is how stripe-node is set up and what it says:
//
// - `new Stripe(key, {host, port, protocol: 'http', maxNetworkRetries, timeout})`, the SDK's own
//   way to point at another host. stripe-node retries 2 times by default (docs/sdks.md), same
//   key each time; the adapter asks for 2 explicitly while the contract honours keys and for 0
//   otherwise. stripe-node also retries a closed connection (ECONNRESET, EPIPE) once even with
//   0 retries: without keys that retry would be a second payment, so the recording HTTP client
//   below hides those codes from the SDK's retry rule when the contract has no keys.
// - One key per operation, `lr-<op id>`, stored with the intent before the first send and passed
//   as `{idempotencyKey}` on every create; `metadata[operation_id]` on every create.
// - The HTTP client is the SDK's own (`Stripe.createNodeHttpClient()`) wrapped to note what each
//   attempt saw: the SDK hides its retries, and a rejection answering a retry of a lost attempt
//   proves nothing (a refund that already went through answers 400).
// - Webhooks: `stripe.webhooks.constructEvent(body, header, secret, 300, undefined, receivedAt)`
//   with `receivedAt` the request's `now`: the SDK checks the signature and the age against the
//   scenario's clock, not the machine's. A timestamp from the future is refused here.
import Stripe from 'stripe';
import {
  AdapterBase, REJECTED, WEBHOOK_TOLERANCE_S, OPERATION_ID_RE,
  log, lowerHeaders, makeHandler, parseTime, prefixed, run, verdict,
} from './lr_common.mjs';

const PAYMENT_INTENT_OUTCOME = {
  succeeded: 'succeeded',
  processing: 'pending',
  canceled: 'failed',
  requires_payment_method: 'pending',
  requires_confirmation: 'pending',
  requires_action: 'pending',
  requires_capture: 'pending',
};
const REFUND_OUTCOME = { succeeded: 'succeeded', pending: 'pending', requires_action: 'pending', failed: 'failed', canceled: 'failed' };
const OBJECT_TYPE = { customers: 'customer', payment_intents: 'payment_intent', refunds: 'refund' };
const SERVICE = { customers: 'customers', payment_intents: 'paymentIntents', refunds: 'refunds' };
const SEARCHABLE = ['customers', 'payment_intents'];
const NETWORK_RETRIES = 2;
// Stripe documents search as lagging writes by up to an hour during outages (see the Python twin).
const SEARCH_LAG_S = 3600;
const LIST_WINDOW_BEFORE_S = 60;
const LIST_LIMIT = 100;
const REJECTIONS = [400, 401, 402, 403, 404, 429];
const CLOSED_CODES = ['ECONNRESET', 'EPIPE'];

/** The SDK's Node HTTP client, noting each attempt; see the header comment. */
class RecordingHttpClient extends Stripe.HttpClient {
  constructor(hideClosedCodes) {
    super();
    this.inner = Stripe.createNodeHttpClient();
    this.hideClosedCodes = hideClosedCodes;
    this.attempts = [];
  }

  getClientName() {
    return this.inner.getClientName();
  }

  makeRequest(host, port, path, method, headers, body, protocol, timeout) {
    const where = `${method} ${path.split('?')[0]}`;
    return this.inner.makeRequest(host, port, path, method, headers, body, protocol, timeout).then(
      (res) => {
        const status = res.getStatusCode();
        const replayed = res.getHeaders()['idempotent-replayed'] === 'true' ? ' (Idempotent-Replayed)' : '';
        this.attempts.push({ said: `${where}: ${status}${replayed}`, ambiguous: status === 409 || status >= 500 });
        return res;
      },
      (err) => {
        const notSent = err?.code === 'ECONNREFUSED';
        this.attempts.push({ said: `${where}: no answer (${err?.code ?? ''} ${err?.message ?? err})`.trim(), ambiguous: !notSent });
        if (this.hideClosedCodes && CLOSED_CODES.includes(err?.code)) err.code = `${err.code}_NOT_RETRIED`;
        throw err;
      },
    );
  }
}

const errorWords = (...words) => words.filter((w) => w !== undefined && w !== null && w !== '').join(' ');

function classifyObject(resource, obj, source) {
  if (!obj || typeof obj.id !== 'string' || !obj.id) return verdict('unknown', null, `${source}: the answer is not an object with an id`);
  const { status } = obj;
  let outcome;
  if (resource === 'payment_intents') outcome = PAYMENT_INTENT_OUTCOME[status];
  else if (resource === 'refunds') outcome = status === undefined || status === null ? 'succeeded' : REFUND_OUTCOME[status];
  else outcome = 'succeeded';
  if (!outcome) return verdict('unknown', null, `${source}: object ${obj.id} has an unrecognised status ${JSON.stringify(status)}`);
  return verdict(outcome, obj.id, `${source}: object ${obj.id}${status != null ? ` is ${status}` : ' exists'}`);
}

class StripeAdapter extends AdapterBase {
  static PROFILE = 'stripe';
  static RESOURCES = ['customers', 'payment_intents', 'refunds'];

  constructor(store, common) {
    super(store, common);
    const url = new URL(common.baseUrl);
    this.http = new RecordingHttpClient(!this.contract.hasKeys);
    // Set by classifyError: the last create was refused, but after a lost attempt.
    this.rejectedAfterLoss = false;
    this.stripe = new Stripe(common.credential, {
      host: url.hostname,
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      protocol: url.protocol.replace(':', ''),
      maxNetworkRetries: this.contract.hasKeys ? NETWORK_RETRIES : 0,
      timeout: common.timeoutMs,
      httpClient: this.http,
    });
  }

  keyFor(opId) {
    return `lr-${opId}`;
  }

  service(resource) {
    return this.stripe[SERVICE[resource]];
  }

  attemptsSaid() {
    return this.http.attempts.map((a) => a.said).join('; ') || 'no attempt reached the HTTP client';
  }

  createParams(record) {
    const params = { ...record.operation.args };
    const metadata = params.metadata && typeof params.metadata === 'object' ? params.metadata : {};
    params.metadata = { ...metadata, operation_id: record.operation.id };
    return params;
  }

  async sendCreate(record) {
    const ambiguousBefore = record.ambiguous;
    this.beginSend(record);
    this.http.attempts = [];
    this.rejectedAfterLoss = false;
    const options = this.contract.hasKeys && record.key ? { idempotencyKey: record.key } : {};
    let v;
    let bodyLost = false;
    try {
      const obj = await this.service(record.operation.resource).create(this.createParams(record), options);
      v = classifyObject(record.operation.resource, obj, `create answered [${this.attemptsSaid()}]`);
    } catch (err) {
      bodyLost = err instanceof Stripe.errors.StripeConnectionError || !err?.statusCode;
      v = this.classifyError(err, ambiguousBefore);
    }
    this.endSend(record, bodyLost || this.http.attempts.some((a) => a.ambiguous));
    return v;
  }

  classifyError(err, ambiguousBefore) {
    const seen = `[${this.attemptsSaid()}]`;
    const status = err?.statusCode;
    const etype = err?.rawType ?? '';
    const code = err?.code ?? '';
    if (err instanceof Stripe.errors.StripeConnectionError || !Number.isInteger(status)) {
      return verdict('unknown', null, `${seen}: ${err?.type ?? err?.constructor?.name}: the create may or may not have committed`);
    }
    if (status === 409) {
      const what = etype === 'idempotency_error' ? 'the first request with our key is still in flight' : 'a conflict';
      return verdict('unknown', null, `${seen}: ${errorWords(status, etype, code)}: ${what}; not a failure`);
    }
    if (status >= 500) return verdict('unknown', null, `${seen}: ${errorWords(status, etype, code)}: the provider may or may not have committed`);
    if (status === 400 && etype === 'idempotency_error') {
      return verdict('unknown', null, `${seen}: ${errorWords(status, etype, code)}: our key was used with other arguments; never a success, never retried under another key; a person must check`, true);
    }
    if (REJECTIONS.includes(status)) {
      if (ambiguousBefore || this.http.attempts.slice(0, -1).some((a) => a.ambiguous)) {
        this.rejectedAfterLoss = true;
        return verdict('unknown', null, `${seen}: ${errorWords(status, etype, code)} answers a retry of a create whose answer was lost: no proof that nothing happened`);
      }
      return verdict('failed', err.payment_intent?.id ?? null, `${seen}: rejected before execution: ${errorWords(status, etype, code)}`);
    }
    return verdict('unknown', null, `${seen}: unexpected ${errorWords(status, etype, code)}: cannot tell whether it committed`);
  }

  async sendFirst(record) {
    return this.sendCreate(record);
  }

  async retrieve(record, ref = record.provider_ref) {
    this.http.attempts = [];
    let obj;
    try {
      obj = await this.service(record.operation.resource).retrieve(ref);
    } catch (err) {
      if (err?.statusCode === 404 && this.contract.retrieve) {
        return verdict('unknown', null, `retrieve of ${ref} answered 404 although Stripe named it for this operation; not re-created, a person must check`, true);
      }
      return verdict('unknown', null, `retrieve of ${ref} proved nothing: [${this.attemptsSaid()}] ${errorWords(err?.type, err?.statusCode, err?.rawType)}`);
    }
    const v = classifyObject(record.operation.resource, obj, `retrieve ${ref}`);
    if (v.provider_ref !== null && v.provider_ref !== ref) return verdict('unknown', null, `retrieve of ${ref} answered another object`);
    return v;
  }

  ours(record, obj) {
    return obj?.metadata?.operation_id === record.operation.id && [undefined, OBJECT_TYPE[record.operation.resource]].includes(obj?.object);
  }

  async page(record, how, call) {
    this.http.attempts = [];
    let page;
    try {
      page = await call();
    } catch (err) {
      return { ours: [], complete: false, problem: `${how} proved nothing: [${this.attemptsSaid()}] ${errorWords(err?.type, err?.statusCode, err?.rawType)}` };
    }
    if (!Array.isArray(page?.data)) return { ours: [], complete: false, problem: `${how} proved nothing: the answer has no data list` };
    return { ours: page.data.filter((o) => this.ours(record, o)), complete: page.has_more !== true, problem: null };
  }

  async lookUp(record) {
    const problems = [];
    const { resource } = record.operation;
    const service = this.service(resource);
    if (this.contract.clientReference && SEARCHABLE.includes(resource)) {
      const query = `metadata['operation_id']:'${record.operation.id}'`;
      const how = `search ${query}`;
      const got = await this.page(record, how, () => service.search({ query }));
      if (got.ours.length) return { obj: got.ours[0], absent: false, said: `${how} found ours` };
      if (got.problem) problems.push(got.problem);
      else if (!got.complete) problems.push(`${how} proved nothing: more than one page`);
      else if (this.ageS(record) >= SEARCH_LAG_S) return { obj: null, absent: true, said: `${how} found none, ${Math.floor(this.ageS(record))} s after the first send` };
      else problems.push(`${how} found none, but Stripe search may lag writes by up to ${SEARCH_LAG_S} s`);
    }
    if (this.contract.listRecent) {
      const since = Math.floor(parseTime(record.first_sent_at)) - LIST_WINDOW_BEFORE_S;
      const how = `list of ${resource} created since ${since}`;
      const got = await this.page(record, how, () => service.list({ created: { gte: String(since) }, limit: String(LIST_LIMIT) }));
      const before = problems.map((p) => `${p}; then `).join('');
      if (got.ours.length) return { obj: got.ours[0], absent: false, said: `${before}${how} found ours` };
      if (got.problem) problems.push(got.problem);
      else if (got.complete) return { obj: null, absent: true, said: `${before}${how} found none of ours` };
      else problems.push(`${how} proved nothing: more than ${LIST_LIMIT} objects and ours is not on the page`);
    }
    return { obj: null, absent: false, said: problems.join('; ') || 'the contract offers no lookup without an id' };
  }

  hasIdlessLookup(record) {
    return this.contract.listRecent || (this.contract.clientReference && SEARCHABLE.includes(record.operation.resource));
  }

  deadEnd(record) {
    if (this.hasIdlessLookup(record)) return null;
    if (record.provider_ref != null) {
      return this.contract.retrieve ? null : `object ${record.provider_ref} is known but the contract offers no lookup to follow it; a person must check`;
    }
    if (this.keyRetained(record)) return null;
    const keys = this.contract.hasKeys ? 'our idempotency key is past its retention' : 'no idempotency keys';
    return `${keys} and no lookup without an id: cannot tell whether the create committed; a person must check`;
  }

  async follow(record, v) {
    if (v.outcome === 'pending' && v.provider_ref && this.contract.retrieve) {
      const now = await this.retrieve(record, v.provider_ref);
      if (now.outcome !== 'unknown') return { ...now, evidence: `${v.evidence}; then ${now.evidence}` };
    }
    return v;
  }

  async findOrRecreate(record) {
    const { obj, absent, said } = await this.lookUp(record);
    if (obj) return classifyObject(record.operation.resource, obj, said);
    if (!absent) return verdict('unknown', null, said);
    // Absence is proven: nothing of ours committed, so a create now is the first to count.
    record.ambiguous = false;
    const keyed = this.contract.hasKeys ? ` with key ${record.key}` : '';
    return prefixed(await this.sendCreate(record), `${said}, so the create never committed; re-created${keyed}`);
  }

  async reconcileLocked(record) {
    const reason = this.deadEnd(record);
    if (reason !== null) return verdict('unknown', null, reason, true);
    if (record.provider_ref != null) {
      if (this.contract.retrieve) return this.retrieve(record);
      const { obj, said } = await this.lookUp(record);
      if (obj && obj.id === record.provider_ref) return classifyObject(record.operation.resource, obj, said);
      return verdict('unknown', null, said);
    }
    if (this.keyRetained(record)) {
      const v = prefixed(await this.sendCreate(record), `replayed the create with key ${record.key}`);
      if (this.rejectedAfterLoss) {
        // A rejection of the replay after a lost attempt proves nothing: look instead.
        const looked = await this.findOrRecreate(record);
        return looked.outcome !== 'unknown' ? prefixed(looked, v.evidence) : verdict('unknown', null, `${v.evidence}; ${looked.evidence}`, looked.needs_review);
      }
      return this.follow(record, v);
    }
    return this.findOrRecreate(record);
  }

  async webhook(request) {
    const headers = lowerHeaders(request.headers);
    const { body } = request;
    const secret = this.contract.webhookSecret;
    if (typeof body !== 'string' || secret === null) {
      log('webhook rejected: no body, or the contract has no webhooks');
      return { ...REJECTED };
    }
    const signature = headers['stripe-signature'];
    const nowMs = Math.round(this.common.now * 1000);
    let event;
    try {
      // receivedAt: the scenario's clock, so that the SDK's age check uses `now`, not Date.now().
      event = this.stripe.webhooks.constructEvent(body, signature, secret, WEBHOOK_TOLERANCE_S, undefined, nowMs);
    } catch (err) {
      log(`webhook rejected: ${err?.type ?? err?.constructor?.name}: ${err?.message}`);
      return { ...REJECTED };
    }
    const stamp = Number(/(?:^|,)\s*t=(\d+)/.exec(signature ?? '')?.[1]);
    if (!Number.isFinite(stamp) || stamp - this.common.now > WEBHOOK_TOLERANCE_S) {
      log(`webhook rejected: timestamp ${stamp} is ahead of now by more than ${WEBHOOK_TOLERANCE_S} s`);
      return { ...REJECTED };
    }
    const obj = event?.data?.object;
    if (typeof event?.id !== 'string' || typeof event?.type !== 'string' || !obj || typeof obj !== 'object') {
      log('webhook rejected: event lacks id, type or data.object');
      return { ...REJECTED };
    }
    const opId = obj.metadata?.operation_id;
    if (typeof opId !== 'string' || !OPERATION_ID_RE.test(opId)) return { accepted: true, operation_id: null };
    const record = this.store.load(opId);
    if (record === null) return { accepted: true, operation_id: null };
    const v = obj.object === OBJECT_TYPE[record.operation.resource]
      ? classifyObject(record.operation.resource, obj, `event ${event.id} (${event.type})`)
      : null;
    return this.applyEvent(opId, event.id, v);
  }
}

run(makeHandler((store, common) => new StripeAdapter(store, common)));
