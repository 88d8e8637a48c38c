// Test-only extension: python-lsp-server for Python files, started through vscode-languageclient (the
// library real language extensions use), so the workbench test has a real language server in VS Code.
// Bundled with esbuild and packaged by editors/vscode/test-workbench/knowledge.js, which installs it.
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

exports.activate = async () => {
  const command = vscode.workspace.getConfiguration('pylspTest').get('command') || 'pylsp';
  client = new LanguageClient('pylspTest', 'pylsp (test)', { command, args: [] },
    { documentSelector: [{ scheme: 'file', language: 'python' }] });
  // pylsp asks a progress-reporting client for a token (window/workDoneProgress/create) before every lint and,
  // in its synchronous handlers, cannot read the answer: each lint then stalls 1 s (pylsp's own warning
  // "There was an error while trying to initialize progress reporting"). Not advertising work-done progress
  // keeps its diagnostics as prompt as a user's tuned setup would have them.
  client.registerFeature({
    fillClientCapabilities: (capabilities) => { if (capabilities.window) capabilities.window.workDoneProgress = false; },
    initialize: () => {},
    getState: () => ({ kind: 'static' }),
    clear: () => {},
  });
  await client.start();
};

exports.deactivate = () => (client ? client.stop() : undefined);
