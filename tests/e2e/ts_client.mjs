// The TypeScript SDK v2 client against a live mcpforms endpoint: list -> call -> input_required -> answer
// -> complete, negotiating the era with versionNegotiation {mode: 'auto'}. Prints one JSON report.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const url = new URL(process.argv[2]);
const asked = [];
const client = new Client(
  { name: 'mcpforms-e2e-ts', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: 'auto' },
    inputRequired: { autoFulfill: true, maxRounds: 10 },
  },
);
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(request.params.message);
  const names = Object.keys(request.params.requestedSchema.properties);
  return { action: 'accept', content: Object.fromEntries(names.map((name) => [name, name === 'name' ? 'Ada' : 'blue'])) };
});
await client.connect(new StreamableHTTPClientTransport(url));
const tools = await client.listTools();
const greeting = await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} });
const rounds = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
console.log(
  JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion(),
    tools: tools.tools.map((tool) => tool.name),
    asked,
    greeting: greeting.content,
    rounds: rounds.content,
  }),
);
await client.close();
