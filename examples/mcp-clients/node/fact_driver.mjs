// One tool call through the real TypeScript MCP SDK (@modelcontextprotocol/sdk 1.x), for the fact tests.
//
// Reads one JSON object on stdin:
//   {url, credential, tool, arguments,
//    timeout_ms: the request option `timeout` (null: the SDK's default, 60 s),
//    reset_on_progress: the request option `resetTimeoutOnProgress`,
//    max_total_ms: the request option `maxTotalTimeout` (null: none),
//    progress: true to pass `onprogress` (the SDK then sends a progressToken)}
// and prints one JSON object on stdout: what the SDK handed back, nothing interpreted:
//   {kind: "result", is_error, structured, text, progress}
//   {kind: "error", type, code, message, progress}
// The tests (examples/tests/it/mcp_client_facts.rs) assert on it and on the server's journal and ledger.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

async function main() {
  const config = await readStdin();
  let progress = 0;
  const transport = new StreamableHTTPClientTransport(new URL(config.url), {
    requestInit: { headers: { Authorization: `Bearer ${config.credential}` } },
  });
  // The SDK sends its courtesy cancel without awaiting it and rejects the call
  // at once; close() then aborts every fetch in flight. So that the journal
  // shows what the SDK sends (not what an early exit cut), notifications in
  // flight are awaited before closing: a long-lived agent process lets them go.
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
  const client = new Client({ name: 'lostreply-fact-driver', version: '0' });
  await client.connect(transport);
  const options = {};
  if (config.timeout_ms != null) options.timeout = config.timeout_ms;
  if (config.reset_on_progress) options.resetTimeoutOnProgress = true;
  if (config.max_total_ms != null) options.maxTotalTimeout = config.max_total_ms;
  if (config.progress) options.onprogress = () => { progress += 1; };
  let out;
  try {
    const result = await client.callTool(
      { name: config.tool, arguments: config.arguments ?? {} },
      undefined,
      options,
    );
    const text = (result.content ?? []).find((c) => typeof c.text === 'string')?.text ?? null;
    out = {
      kind: 'result',
      is_error: result.isError === true,
      structured: result.structuredContent ?? null,
      text,
      progress,
    };
  } catch (e) {
    out = {
      kind: 'error',
      type: e?.constructor?.name ?? typeof e,
      code: typeof e?.code === 'number' ? e.code : null,
      message: String(e?.message ?? e),
      progress,
    };
  }
  await Promise.allSettled([...notifications]);
  process.stdout.write(JSON.stringify(out) + '\n');
  try { await client.close(); } catch { /* the fact is already out */ }
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`fact driver: ${e?.stack ?? e}\n`);
  process.exit(1);
});
