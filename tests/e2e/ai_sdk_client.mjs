// The Vercel AI SDK's MCP client (@ai-sdk/mcp) as the staff user (argv[3] is their token): it lists the
// demo's tools and executes create_ticket directly, as generateText would run a tool the model chose, with
// no model involved. Once with every argument, once with only the subject, the rest answered by its
// elicitation handler; then once more from a client that declares no elicitation, which nobody can ask.
// Prints one JSON report for tests/e2e/test_clients.py.
import { createMCPClient, ElicitationRequestSchema } from '@ai-sdk/mcp';

const [url, token] = process.argv.slice(2);
const ANSWERS = { body: 'The AI SDK asked for this.', priority: 'high' };
const asked = [];

const client = await createMCPClient({
  transport: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } },
  capabilities: { elicitation: {} },
});
client.onElicitationRequest(ElicitationRequestSchema, async (request) => {
  const names = Object.keys(request.params.requestedSchema.properties);
  asked.push({ message: request.params.message, fields: names });
  const content = Object.fromEntries(names.filter((name) => name in ANSWERS).map((name) => [name, ANSWERS[name]]));
  return { action: 'accept', content };
});

try {
  const tools = await client.tools();
  const run = (name, input, id) => tools[name].execute(input, { toolCallId: id, messages: [] });
  const complete = await run('create_ticket', { subject: 'AI SDK', body: 'Every argument given.', priority: 'low' }, '1');
  const answered = await run('create_ticket', { subject: 'AI SDK asks' }, '2');
  const silent = await createMCPClient({ transport: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } });
  let unasked;
  try {
    unasked = await (await silent.tools()).create_ticket.execute({ subject: 'AI SDK, nobody asked' }, { toolCallId: '3', messages: [] });
  } finally {
    await silent.close();
  }
  console.log(
    JSON.stringify({
      protocolVersion: client.initializeResult.protocolVersion,
      tools: Object.keys(tools),
      complete: complete.structuredContent,
      answered: answered.structuredContent,
      asked,
      unasked,
    }),
  );
} finally {
  await client.close();
}
