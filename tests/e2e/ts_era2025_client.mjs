// A TypeScript client on the 2025-11-25 protocol completes the demo's signup, answering the server's
// elicitation/create with ACTION (accept, decline or cancel). SDK is "v1" (@modelcontextprotocol/sdk
// 1.32.2, the most used MCP client) or "v2" (@modelcontextprotocol/client with its default options,
// which speak 2025-11-25). Prints one JSON report for tests/e2e/test_era2025_clients.py.
const [sdk, url, action] = process.argv.slice(2);
const ANSWERS = { email: 'grace@example.com', plan: 'pro', newsletter: false };
const asked = [];

function answer(request) {
  asked.push(request.params.message);
  if (action !== 'accept') return { action };
  const names = Object.keys(request.params.requestedSchema.properties).filter((name) => name in ANSWERS);
  return { action, content: Object.fromEntries(names.map((name) => [name, ANSWERS[name]])) };
}

let client;
let transport;
if (sdk === 'v1') {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  client = new Client({ name: 'mcpforms-e2e-v1', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => answer(request));
  transport = new StreamableHTTPClientTransport(new URL(url));
} else {
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  client = new Client({ name: 'mcpforms-e2e-v2', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler('elicitation/create', async (request) => answer(request));
  transport = new StreamableHTTPClientTransport(new URL(url));
}
await client.connect(transport);
const protocolVersion = sdk === 'v1' ? transport.protocolVersion : client.getNegotiatedProtocolVersion();
const signup = await client.callTool({ name: 'signup', arguments: {} });
console.log(
  JSON.stringify({
    protocolVersion,
    asked,
    isError: signup.isError ?? false,
    structuredContent: signup.structuredContent ?? null,
    text: (signup.content ?? []).map((block) => block.text ?? '').join('\n'),
  }),
);
await client.close();
