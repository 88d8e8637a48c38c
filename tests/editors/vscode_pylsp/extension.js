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
  await client.start();
};

exports.deactivate = () => (client ? client.stop() : undefined);
