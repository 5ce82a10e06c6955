// A real tasks client: @modelcontextprotocol/ext-tasks (pinned in package.json) over the TypeScript SDK v2
// client, against a 2026-07-28 server. Usage: node task_client.mjs CONFIG_JSON, where CONFIG is
//   { url, token?, tool, arguments, answers?: [ElicitResult...], cancel?: bool, detach?: bool,
//     resume?: SerializedTaskReference, endpointId? }
// It calls the tool (or, with `resume`, takes up a task another run of this script started), answers each
// input request from `answers` in turn (an MRTR round before the task, or the task's input_required), polls
// at the server's pollIntervalMs, and prints one JSON line per thing a user would notice:
//   {"event":"created", taskId, status, statusMessage, pollIntervalMs, reference}
//   {"event":"status", status, statusMessage}           (each change seen while polling)
//   {"event":"input", scope, inputId, message, fields}  (each input request answered)
//   {"event":"cancelled-by-client"}                      (with `cancel`: tasks/cancel sent once created)
//   {"event":"outcome", status, result | error}          (the end: what the call came to)
// With `detach` it stops after "created" and leaves the task on the server, as a client that crashed would.
// For a 2026 server ext-tasks needs the host's own rawDispatch (the SDK's typed request() has no task
// methods): a plain fetch POST with the headers the 2026-07-28 Streamable HTTP transport requires.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const VERSION = '2026-07-28';
const config = JSON.parse(process.argv[2]);
const answers = [...(config.answers ?? [])];
const auth = config.token ? { Authorization: `Bearer ${config.token}` } : {};
const clientInfo = { name: 'mcpforms-e2e-tasks', version: '1.0.0' };
const capabilities = { elicitation: { form: {} } };

const emit = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
// A test that goes wrong must not leave this process polling forever.
const deadline = setTimeout(() => {
  emit({ event: 'timeout' });
  process.exit(3);
}, config.timeoutMs ?? 170_000);

let requestId = 0;
let createTaskResult = null; // what tools/call answered when it made the task, as the server sent it
// What the Mcp-Name header names: the tool for tools/call, the task for tasks/* (spec §8.2).
const nameOf = (method, params) => (method === 'tools/call' ? params?.name : params?.taskId);

async function rawDispatch(request, options = {}) {
  const { method, params } = request;
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': method,
    ...auth,
    ...(options.context?.headers ?? {}),
  };
  const name = nameOf(method, params);
  if (name !== undefined) headers['Mcp-Name'] = String(name);
  requestId += 1;
  const response = await fetch(config.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: `tasks-${requestId}`, method, params }),
    signal: options.signal,
  });
  const text = await response.text();
  // A 2026 server answers with JSON; an event stream's last data line is the response all the same.
  const payload = response.headers.get('content-type')?.startsWith('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data:')).at(-1).slice(5)
    : text;
  const message = JSON.parse(payload);
  if (message.error) return { kind: 'error', error: message.error };
  if (method === 'tools/call' && message.result?.resultType === 'task') createTaskResult = message.result;
  return { kind: 'result', result: message.result };
}

const client = new Client(clientInfo, { capabilities, versionNegotiation: { mode: { pin: VERSION } } });
await client.connect(new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: auth } }));

const session = createTaskSessionFromClient(client, {
  // The same logical endpoint for every run of the script: a reference serialized by one run (against one
  // server instance) is taken up by another (against another instance of the same deployment).
  endpointId: config.endpointId ?? 'mcpforms-e2e',
  rawDispatch,
  v2RequestFraming: { protocolVersion: VERSION, clientInfo, clientCapabilities: capabilities },
  onInputRequest: async (request, context) => {
    const { message, requestedSchema } = request.params;
    const fields = Object.keys(requestedSchema?.properties ?? {});
    emit({ event: 'input', scope: context.scope, inputId: context.inputId ?? null, message, fields });
    return answers.length ? answers.shift() : { action: 'cancel' };
  },
  onError: (error) => emit({ event: 'client-error', message: String(error?.message ?? error) }),
});

let last = null;
function seen(task) {
  const key = `${task.status}|${task.statusMessage ?? ''}`;
  if (key === last) return;
  last = key;
  emit({ event: 'status', status: task.status, statusMessage: task.statusMessage ?? null });
}

try {
  const execution = config.resume
    ? await session.resumeTask(config.resume)
    : await session.callTool(config.tool, config.arguments ?? {});
  if (execution.kind === 'task') {
    const task = execution.handle;
    const reference = execution.serializeReference();
    if (!config.resume) {
      const created = createTaskResult;
      last = `${created.status}|${created.statusMessage ?? ''}`;
      emit({
        event: 'created',
        taskId: task.taskId,
        status: created.status,
        statusMessage: created.statusMessage ?? null,
        pollIntervalMs: created.pollIntervalMs ?? null,
        reference,
      });
    } else {
      emit({ event: 'resumed', taskId: task.taskId });
    }
    if (config.detach) {
      await execution.handoff(() => undefined); // the reference is in the "created" line already
      // Closing the session cancels every execution it still tracks, and a handed-off one is tracked
      // until its local result settles: wait for that, or the close would cancel the task on the server.
      await execution.result().catch(() => undefined);
    } else {
      if (config.cancel) {
        await execution.cancel();
        emit({ event: 'cancelled-by-client' });
      }
      const { outcome } = await execution.settle({
        onEvent: (event) => (event.type === 'task' ? seen(event.task) : undefined),
      });
      emit(outcomeLine(outcome));
    }
  } else {
    emit(outcomeLine(await execution.result()));
  }
} finally {
  clearTimeout(deadline);
  await session.close();
  await client.close();
}

function outcomeLine(outcome) {
  if (outcome.status === 'completed') return { event: 'outcome', status: 'completed', result: outcome.result };
  if (outcome.status === 'failed') {
    const { code, message, data } = outcome.error;
    return { event: 'outcome', status: 'failed', error: { code, message, data } };
  }
  return { event: 'outcome', status: outcome.status };
}
