/**
 * Entry point: activation and deactivation only. Everything else lives in {@link PiController}
 * (commands, prompts, trust), `client.ts` (the language client) and their helpers.
 */
import * as vscode from 'vscode';
import { PiController } from './controller';
import { registerTestState } from './testState';

let controller: PiController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  controller = new PiController(context);
  context.subscriptions.push(controller);
  registerTestState(context, controller);
  await controller.startIfTrusted();
}

export async function deactivate(): Promise<void> {
  await controller?.client.stop();
  controller = undefined;
}
