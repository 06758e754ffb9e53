// A naive lostreply adapter for the openai profile: the SDK's README, wrapped in the protocol.
//
// Usage: `node openai_naive.mjs <execute|reconcile|webhook|resolve|status|serve>` (the adapter
// protocol, docs/adapter-protocol.md).
//
// `new OpenAI({baseURL, apiKey})` with the SDK's default retries (`maxRetries: 2`: a lost answer
// is silently generated again, and billed again, since no key is sent), `create(args)`, "it
// returned, so it worked", "it threw, so it failed". The outcome is written only after the SDK
// returns (no intent before the send, no lock), reconcile sends nothing and repeats what was
// written, a resolution overwrites. The client gets `client_timeout_ms`, as the protocol asks of
// every adapter.
import OpenAI from 'openai';
import {
  REJECTED, TERMINAL, checkOperationId, fieldOf, formatTimeExact, log, makeHandler, newRecord, reply, run, unknownReply,
} from './lr_common.mjs';

class OpenAINaive {
  constructor(store, common) {
    this.store = store;
    this.common = common;
  }

  async execute(request) {
    const operation = fieldOf(request, 'operation', 'object');
    const opId = checkOperationId(operation.id);
    const resource = fieldOf(operation, 'resource', 'string', 'operation.');
    const args = fieldOf(operation, 'args', 'object', 'operation.');
    const client = new OpenAI({ baseURL: `${this.common.baseUrl}/v1`, apiKey: this.common.credential, timeout: this.common.timeoutMs });
    const record = newRecord(opId, resource, args, null, formatTimeExact(this.common.now));
    try {
      const obj = resource === 'chat_completions' ? await client.chat.completions.create(args) : await client.responses.create(args);
      Object.assign(record, { outcome: 'succeeded', provider_ref: obj.id, evidence: `the SDK returned ${obj.id}` });
    } catch (err) {
      Object.assign(record, { outcome: 'failed', evidence: `the SDK threw ${err?.constructor?.name}: ${err?.message}` });
    }
    this.store.save(record);
    return reply(record);
  }

  async status(request) {
    const opId = checkOperationId(request.operation_id);
    const record = this.store.load(opId);
    return record === null ? unknownReply(opId, 'no record of this operation in the store') : reply(record);
  }

  async reconcile(request) {
    return this.status(request);
  }

  async resolve(request) {
    const opId = checkOperationId(request.operation_id);
    const resolution = fieldOf(request, 'resolution', 'object');
    const record = this.store.load(opId);
    if (record === null) return unknownReply(opId, 'no record of this operation in the store');
    if (TERMINAL.includes(resolution.outcome)) record.outcome = resolution.outcome;
    record.provider_ref = resolution.provider_ref ?? null;
    record.evidence = `operator: ${resolution.evidence}`;
    this.store.save(record);
    return reply(record);
  }

  async webhook() {
    log('webhook rejected: this adapter takes no webhooks');
    return { ...REJECTED };
  }
}

run(makeHandler((store, common) => new OpenAINaive(store, common)));
