// The TypeScript SDK v2 client signs in to an mcpforms endpoint with OAuth and calls one tool.
// Usage: node oauth_ts_client.mjs URL ERA TOOL ARGUMENTS_JSON   (ERA: legacy | auto)
// It registers dynamically, prints {"authorize": URL} and waits for the callback URL the user's browser
// was redirected to on stdin (the test drives the consent page), finishes the grant, reconnects with its
// token, calls TOOL and prints one JSON report: {protocolVersion, result}.
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';

const [url, era, tool, args] = process.argv.slice(2);
const REDIRECT = 'http://127.0.0.1:8977/callback'; // nobody listens: the test hands the redirect over
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

// Everything the client keeps between the redirect and the callback, in memory (one process).
const kept = {};
const provider = {
  get redirectUrl() {
    return REDIRECT;
  },
  get clientMetadata() {
    return {
      client_name: 'mcpforms e2e (TypeScript SDK)',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  clientInformation: () => kept.client,
  saveClientInformation: (client) => {
    kept.client = client;
  },
  tokens: () => kept.tokens,
  saveTokens: (tokens) => {
    kept.tokens = tokens;
  },
  redirectToAuthorization: (authorizationUrl) => {
    console.log(JSON.stringify({ authorize: authorizationUrl.href }));
  },
  saveCodeVerifier: (verifier) => {
    kept.verifier = verifier;
  },
  codeVerifier: () => kept.verifier,
  saveDiscoveryState: (state) => {
    kept.discovery = state;
  },
  discoveryState: () => kept.discovery,
};

function connect() {
  const options = era === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {};
  const client = new Client({ name: 'mcpforms-e2e-ts-oauth', version: '1.0.0' }, options);
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  return { client, transport };
}

// The first attempt meets the 401 (on connecting, or on the call of a tool that needs a user): the SDK
// discovers, registers and sends the user away; the second runs with the token.
let current;
async function attempt() {
  current = connect();
  await current.client.connect(current.transport);
  return current.client.callTool({ name: tool, arguments: JSON.parse(args) });
}
let result;
try {
  result = await attempt();
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const { value: callback } = await lines.next();
  await current.transport.finishAuth(new URL(callback.trim()).searchParams);
  await current.client.close();
  result = await attempt();
}
console.log(
  JSON.stringify({
    protocolVersion: current.client.getNegotiatedProtocolVersion(),
    result: result.structuredContent ?? result,
  }),
);
await current.client.close();
process.exit(0);
