/**
 * The test-only state report (issue 8: the real-workbench test asserts through a command of the
 * extension, not by scraping the page). Registered, and shown in the palette, only when the
 * extension host's environment has `PI_VSCODE_TEST_STATE` (a file path): `Pi: Report State (test
 * only)` then writes the state there as JSON (atomically) and also returns it.
 */
import * as fs from 'fs';
import * as vscode from 'vscode';
import { PiController } from './controller';

export const STATE_ENV = 'PI_VSCODE_TEST_STATE';

export function registerTestState(context: vscode.ExtensionContext, controller: PiController): void {
  const file = process.env[STATE_ENV];
  if (!file) {
    return;
  }
  void vscode.commands.executeCommand('setContext', 'pi.testMode', true);
  context.subscriptions.push(vscode.commands.registerCommand('pi.test.reportState', () => {
    const state = collect(controller);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 1));
    fs.renameSync(`${file}.tmp`, file);
    return state;
  }));
}

function collect(controller: PiController): Record<string, unknown> {
  const documents = vscode.workspace.textDocuments
    .filter((d) => d.uri.scheme === 'file')
    .map((d) => {
      let disk: string | null = null;
      try {
        disk = fs.readFileSync(d.uri.fsPath, 'utf8');
      } catch {
        disk = null;
      }
      return { path: d.uri.fsPath, text: d.getText(), version: d.version, isDirty: d.isDirty, disk };
    });
  return {
    reportedAt: Date.now(),
    vscodeVersion: vscode.version,
    serverRunning: controller.client.running,
    lastSettings: controller.client.lastSettings ?? null,
    pendingApprovals: controller.approvals.pendingIds(),
    status: controller.transcript.status,
    running: controller.running,
    sessionId: controller.sessionId ?? null,
    results: controller.results,
    changes: controller.changes.set ?? null,
    runs: controller.transcript.renderer.runs,
    toolCalls: controller.transcript.renderer.toolCalls,
    transcript: controller.transcript.text(),
    activeEditor: vscode.window.activeTextEditor?.document.uri.fsPath ?? null,
    documents,
  };
}
