// The TypeScript SDK v1 client (@modelcontextprotocol/sdk 1.32.2, 2025-11-25 only) calls the demo's
// multi-step travel_request as the staff user and answers each step's server-sent elicitation/create in
// turn. Usage: node ts_travel_client.mjs URL TOKEN ANSWERS, where ANSWERS is a JSON list of elicitation
// results ({action, content?}), one per step asked, in order. Prints one JSON report for
// project/tests/e2e/test_travel_clients.py: the negotiated version, what each step asked (its message and
// fields), and the call's result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, token, script] = process.argv.slice(2);
const answers = JSON.parse(script);
const asked = [];

const client = new Client({ name: 'mcpforms-e2e-travel', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push({ message: request.params.message, fields: Object.keys(request.params.requestedSchema.properties) });
  return answers.shift() ?? { action: 'cancel' }; // one more step than the test expected ends the call
});
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
const result = await client.callTool({ name: 'travel_request', arguments: {} });
console.log(
  JSON.stringify({
    protocolVersion: transport.protocolVersion,
    asked,
    isError: result.isError ?? false,
    text: (result.content ?? []).map((block) => block.text ?? '').join('\n'),
  }),
);
await client.close();
