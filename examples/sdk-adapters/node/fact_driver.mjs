// One SDK call with a named setting, for the fact tests: what the SDK returned or threw.
//
// Usage: node fact_driver.mjs <scenario> <base_url> [--timeout-ms N] [--resource R] [--args JSON]
//
// `base_url` is the simulator's `http://127.0.0.1:PORT` (no `/v1`). The driver makes exactly one
// SDK call (the SDK may send several requests: that is the fact under test) and prints one JSON
// line on stdout, in the same shape as ../python/fact_driver.py:
//
//   {"sdk": "stripe-node", "version": "23.2.0", "scenario": "...", "settings": {...},
//    "kind": "result", "result": {"id", "object", "status"}, "elapsed_ms": 512}
//   {"sdk": ..., "kind": "error", "error": {"type", "module", "status", "code", "message"}, "elapsed_ms": ...}
//
// `elapsed_ms` covers the SDK call only. Exit status 0 whenever the line was printed, 2 for an
// unknown scenario. The Rust side starts the simulator with a fault, runs this, parses the line
// and compares with the journal and the ledger; nothing here interprets the outcome.
//
// Scenarios (`settings` in the output says exactly what was set):
// - stripe-create-default-client: `new Stripe(key, {host, port, protocol})`, nothing else
//   (stripe-node's defaults: 2 retries, 80 s timeout, its own `stripe-node-retry-<uuid>` key);
// - stripe-create-retries-0: `maxNetworkRetries: 0` (a closed connection is still retried once);
// - stripe-create-retries-2, stripe-create-retries-2-key (`{idempotencyKey: 'fact-key-1'}`);
// - openai-chat-default, openai-chat-no-retries (`maxRetries: 0`), openai-responses-default.
import fs from 'node:fs';
import OpenAI from 'openai';
import Stripe from 'stripe';

const SCENARIOS = [
  'stripe-create-default-client',
  'stripe-create-retries-0',
  'stripe-create-retries-2',
  'stripe-create-retries-2-key',
  'openai-chat-default',
  'openai-chat-no-retries',
  'openai-responses-default',
];
const DEFAULT_ARGS = {
  stripe: { email: 'fact@example.com' },
  'openai-chat': { model: 'gpt-5', messages: [{ role: 'user', content: 'fact' }] },
  'openai-responses': { model: 'gpt-5', input: 'fact' },
};
const SERVICE = { customers: 'customers', payment_intents: 'paymentIntents', refunds: 'refunds' };

function version(pkg) {
  const file = new URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

function parseArgs(argv) {
  const [scenario, base, ...rest] = argv;
  const opts = { scenario, base: (base ?? '').replace(/\/+$/, ''), timeoutMs: null, resource: 'customers', args: null };
  for (let i = 0; i < rest.length; i += 2) {
    if (rest[i] === '--timeout-ms') opts.timeoutMs = Number(rest[i + 1]);
    else if (rest[i] === '--resource') opts.resource = rest[i + 1];
    else if (rest[i] === '--args') opts.args = JSON.parse(rest[i + 1]);
    else return null;
  }
  return SCENARIOS.includes(scenario) && opts.base ? opts : null;
}

function stripeCall(opts) {
  const url = new URL(opts.base);
  const config = { host: url.hostname, port: url.port, protocol: url.protocol.replace(':', '') };
  if (opts.scenario === 'stripe-create-retries-0') config.maxNetworkRetries = 0;
  if (opts.scenario.startsWith('stripe-create-retries-2')) config.maxNetworkRetries = 2;
  if (opts.timeoutMs != null) config.timeout = opts.timeoutMs;
  const stripe = new Stripe('sk_test_a', config);
  const options = opts.scenario.endsWith('-key') ? { idempotencyKey: 'fact-key-1' } : {};
  const settings = {
    resource: opts.resource,
    maxNetworkRetries: config.maxNetworkRetries ?? `SDK default (${stripe.getMaxNetworkRetries()})`,
    timeout_ms: config.timeout ?? `SDK default (${stripe.getApiField('timeout')})`,
    idempotencyKey: options.idempotencyKey ?? 'SDK default',
  };
  const args = opts.args ?? DEFAULT_ARGS.stripe;
  return [settings, () => stripe[SERVICE[opts.resource]].create(args, options)];
}

function openaiCall(opts) {
  const config = { baseURL: `${opts.base}/v1`, apiKey: 'sk_test_a' };
  if (opts.scenario.endsWith('no-retries')) config.maxRetries = 0;
  if (opts.timeoutMs != null) config.timeout = opts.timeoutMs;
  const client = new OpenAI(config);
  const settings = {
    maxRetries: config.maxRetries ?? `SDK default (${client.maxRetries})`,
    timeout_ms: config.timeout ?? `SDK default (${client.timeout})`,
  };
  const responses = opts.scenario.includes('responses');
  const args = opts.args ?? DEFAULT_ARGS[responses ? 'openai-responses' : 'openai-chat'];
  return [settings, () => (responses ? client.responses.create(args) : client.chat.completions.create(args))];
}

function describeError(err) {
  const status = err?.statusCode ?? err?.status;
  return {
    type: err?.type && typeof err.type === 'string' && err.type.startsWith('Stripe') ? err.type : err?.constructor?.name ?? typeof err,
    module: err instanceof Stripe.errors.StripeError ? 'stripe' : err instanceof OpenAI.OpenAIError ? 'openai' : 'other',
    status: Number.isInteger(status) ? status : null,
    code: typeof err?.code === 'string' ? err.code : null,
    message: String(err?.message ?? err).slice(0, 500),
  };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (!opts) {
    process.stderr.write(`usage: fact_driver.mjs <${SCENARIOS.join('|')}> <base_url> [--timeout-ms N] [--resource R] [--args JSON]\n`);
    return 2;
  }
  const stripeSide = opts.scenario.startsWith('stripe');
  const [settings, call] = stripeSide ? stripeCall(opts) : openaiCall(opts);
  const out = {
    sdk: stripeSide ? 'stripe-node' : 'openai-node',
    version: version(stripeSide ? 'stripe' : 'openai'),
    node: process.version,
    scenario: opts.scenario,
    settings,
  };
  const started = performance.now();
  try {
    const result = await call();
    out.kind = 'result';
    out.result = { id: result?.id ?? null, object: result?.object ?? null, status: result?.status ?? null };
  } catch (err) {
    out.kind = 'error';
    out.error = describeError(err);
  }
  out.elapsed_ms = Math.round(performance.now() - started);
  await new Promise((resolve) => process.stdout.write(`${JSON.stringify(out)}\n`, resolve));
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`fact_driver.mjs: ${e?.stack ?? e}\n`);
    process.exit(1);
  },
);
