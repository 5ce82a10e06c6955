// The browser side of a minimal MCP Apps host: ext-apps' AppBridge talks to the form's ui:// document in a
// sandboxed iframe; tools/call from the App goes to window.hostCallTool, which the test runner (node)
// exposes and forwards to the real server. Bundled by esbuild in browser_host.mjs.
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

window.startHost = async ({ html, toolInput, theme, variables }) => {
  const iframe = document.createElement('iframe');
  iframe.setAttribute('sandbox', 'allow-scripts allow-forms');
  iframe.title = 'Form';
  iframe.style.cssText = 'width: 100%; height: 720px; border: 0; display: block;';
  document.body.appendChild(iframe);
  const bridge = new AppBridge(
    null,
    { name: 'mcpforms-e2e-host', version: '1.0.0' },
    { serverTools: {} },
    { hostContext: { theme, styles: { variables } } },
  );
  bridge.oncalltool = async (params) => window.hostCallTool(params);
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: toolInput });
  window.hostBridge = bridge;
  return true;
};

window.sendToolResult = (result) => window.hostBridge.sendToolResult(result);

window.setHostTheme = (theme, variables) => {
  document.body.style.background = theme === 'dark' ? '#0f1115' : '#ffffff';
  window.hostBridge.setHostContext({ theme, styles: { variables } });
};
