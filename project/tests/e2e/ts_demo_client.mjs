// The TypeScript SDK v2 client completes the demo's two tools as the staff user (argv[3] is their token),
// answering each elicitation like a user would.
// Prints one JSON report for project/tests/e2e/test_demo_tools.py.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const ANSWERS = {
  email: 'grace@example.com',
  plan: 'pro',
  newsletter: false,
  body: 'The printer on floor 2 says it is out of toner.',
  priority: 'low',
};
const asked = [];
const client = new Client(
  { name: 'mcpforms-e2e-demo', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} } },
    versionNegotiation: { mode: 'auto' },
    inputRequired: { autoFulfill: true, maxRounds: 10 },
  },
);
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(request.params.message);
  const names = Object.keys(request.params.requestedSchema.properties).filter((name) => name in ANSWERS);
  return { action: 'accept', content: Object.fromEntries(names.map((name) => [name, ANSWERS[name]])) };
});
// The staff user's personal access token: create_ticket acts for a user.
const requestInit = { headers: { Authorization: `Bearer ${process.argv[3]}` } };
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2]), { requestInit }));
const signup = await client.callTool({ name: 'signup', arguments: {} });
const ticket = await client.callTool({ name: 'create_ticket', arguments: { subject: 'Printer out of toner' } });
console.log(
  JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion(),
    asked,
    signup: signup.structuredContent,
    ticket: ticket.structuredContent,
  }),
);
await client.close();
