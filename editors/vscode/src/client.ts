/**
 * The pi-lsp language client: starts the server that {@link resolveServer} finds, advertises the
 * `experimental.pi` capabilities, answers the server's `pi/saveDocuments`, `pi/reloadDocuments`
 * and `workspace/configuration` requests, forwards `pi/event` to the transcript, and reports a
 * missing, wrong or crashed server with a clear message and a restart action.
 *
 * `workspace/configuration` for section `pi` is answered with {@link serverSettings}: settings that
 * can leak a key or widen rights are read from user scope only. Approvals come as
 * `pi/requestApproval` (with `pi/approvalWithdrawn`) and are shown by {@link ApprovalPrompts}; a
 * server that still sends `window/showMessageRequest` gets VS Code's own notification.
 */
import * as vscode from 'vscode';
import {
  CloseAction, DidChangeConfigurationNotification, ErrorAction, ExecuteCommandRequest, LanguageClient,
  LanguageClientOptions, RegistrationData, ServerOptions, State, StaticFeature,
} from 'vscode-languageclient/node';
import { ApprovalPrompts } from './approvals';
import { PI_CAPABILITIES, documentState, reloadDocuments, saveDocuments } from './documentSync';
import { LanguageKnowledgeFeature, registerLanguageKnowledge } from './languageKnowledge';
import { checkServerInfo, resolveServer } from './serverResolution';
import { Scope, ServerSettings, serverEnvironment, serverSettings } from './settingsModel';
import { Transcript } from './transcript';

export const SECRET_KEY = 'pi.apiKey';

/** Read one `pi.` key from `scope` (see {@link Scope}): the user's value, the innermost set value, or every set value. */
export function readSetting(key: string, scope: Scope): unknown {
  const info = vscode.workspace.getConfiguration('pi').inspect(key);
  if (scope === 'every') {
    return [info?.globalValue, info?.workspaceValue, info?.workspaceFolderValue].filter((v) => v !== undefined);
  }
  if (!info) {
    return undefined;
  }
  return scope === 'user' ? info.globalValue : info.workspaceFolderValue ?? info.workspaceValue ?? info.globalValue;
}

/** Adds `capabilities.experimental.pi` to `initialize`. */
class PiCapabilitiesFeature implements StaticFeature {
  fillClientCapabilities(capabilities: any): void {
    capabilities.experimental = { ...(capabilities.experimental ?? {}), pi: { ...PI_CAPABILITIES } };
  }
  initialize(): void {}
  getState() {
    return { kind: 'static' as const };
  }
  clear(): void {}
}

export class PiClient implements vscode.Disposable {
  client: LanguageClient | undefined;
  private stopping = false;
  private shownProblems = '';
  /** The `pi` settings last handed to the server (initialize or workspace/configuration). */
  lastSettings: unknown;
  private readonly disposables: vscode.Disposable[] = [];
  readonly serverLog = vscode.window.createOutputChannel('Pi Server');

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly transcript: Transcript,
    private readonly approvals: ApprovalPrompts,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** The settings as the server will get them; problems are reported once per distinct set. */
  async settings(): Promise<ServerSettings> {
    const key = await this.context.secrets.get(SECRET_KEY);
    const result = serverSettings(readSetting, Boolean(key));
    const shown = result.problems.join('\n');
    if (shown && shown !== this.shownProblems) {
      for (const problem of result.problems) {
        this.transcript.note(`⚠ ${problem}`);
      }
      void vscode.window.showWarningMessage(`Pi: invalid settings, defaults used. ${result.problems.join(' ')}`);
    }
    this.shownProblems = shown;
    return result;
  }

  /** Start the server; `false` (after telling the user why) when it cannot run. */
  async start(): Promise<boolean> {
    const found = resolveServer({ configuredPath: readSetting('server.path', 'user'), envPath: process.env.PATH });
    if (found.kind === 'missing') {
      this.transcript.setStatus('stopped', found.message);
      this.transcript.note(`✗ ${found.message}`);
      void this.offerInstall(found.message, found.installCommands[0]);
      return false;
    }
    const { settings } = await this.settings();
    this.lastSettings = settings;
    const args = readSetting('server.args', 'user');
    const env = serverEnvironment(process.env, settings, await this.context.secrets.get(SECRET_KEY));
    const serverOptions: ServerOptions = {
      command: found.command,
      args: ['--stdio', ...(Array.isArray(args) ? args.filter((a) => typeof a === 'string') : [])],
      options: { env },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: 'file' }],
      initializationOptions: { pi: settings },
      outputChannel: this.serverLog,
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => {
          if (!this.stopping) {
            void this.reportCrash();
          }
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        workspace: {
          configuration: async (params, token, next) => {
            const answers = await next(params, token);
            if (!Array.isArray(answers)) {
              return answers;
            }
            const pi = (await this.settings()).settings;
            this.lastSettings = pi;
            return params.items.map((item, i) => (item.section === 'pi' ? pi : answers[i]));
          },
        },
      },
    };
    const client = new LanguageClient('pi', 'Pi', serverOptions, clientOptions);
    client.registerFeature(new PiCapabilitiesFeature());
    client.registerFeature(new LanguageKnowledgeFeature()); // after PiCapabilitiesFeature: adds to experimental.pi
    this.disposables.push(registerLanguageKnowledge(client, this.context.extension.id));
    keepOwnCommands(client, this.context.extension.packageJSON);
    client.onNotification('pi/event', (params) => {
      this.transcript.event(params);
      const event = params?.event;
      if (event?.type === 'approval_resolved' && typeof event.approvalId === 'string') {
        this.approvals.serverResolved(event.approvalId);
      }
    });
    client.onRequest('pi/saveDocuments', (params) => saveDocuments(params, (line) => this.transcript.note(line)));
    client.onRequest('pi/reloadDocuments', (params) => reloadDocuments(params));
    client.onRequest('pi/requestApproval', (params) => this.approvals.request(params));
    client.onNotification('pi/approvalWithdrawn', (params) => this.approvals.withdrawn(params));
    this.client = client;
    this.stopping = false;
    this.transcript.setStatus('starting');
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      const message = `The pi-lsp server (${found.command}) did not start: ${errorText(error)}`;
      this.transcript.setStatus('stopped', message);
      this.transcript.note(`✗ ${message}`);
      void this.offerRestart(message);
      return false;
    }
    const problem = checkServerInfo(client.initializeResult?.serverInfo);
    if (problem) {
      await this.stop();
      this.transcript.setStatus('stopped', problem);
      this.transcript.note(`✗ ${problem}`);
      void this.offerInstall(problem, 'pipx install --force pi-lsp');
      return false;
    }
    this.transcript.note(`pi-lsp ${client.initializeResult?.serverInfo?.version} started (${found.command}, from ${found.source})`);
    this.transcript.setStatus('idle');
    this.watchDocuments(client);
    return true;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.stopping = true;
    this.disposables.splice(0).forEach((d) => d.dispose());
    this.approvals.denyAll('the server stopped');
    if (client && client.state !== State.Stopped) {
      try {
        await client.stop(3000);
      } catch (error) {
        this.serverLog.appendLine(`stopping the server failed: ${errorText(error)}`);
      }
    }
  }

  async restart(): Promise<boolean> {
    await this.stop();
    return this.start();
  }

  /** Tell the server the settings changed (it pulls them with `workspace/configuration`). */
  async settingsChanged(): Promise<void> {
    await this.settings();
    if (this.running) {
      await this.client!.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
  }

  dispose(): void {
    void this.stop();
    this.serverLog.dispose();
  }

  private watchDocuments(client: LanguageClient): void {
    const send = (doc: vscode.TextDocument) => {
      if (doc.uri.scheme === 'file' && client.state === State.Running) {
        void client.sendNotification('pi/documentState', documentState(doc));
      }
    };
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => send(e.document)),
      vscode.workspace.onDidSaveTextDocument(send),
    );
  }

  private async reportCrash(): Promise<void> {
    this.client = undefined;
    this.disposables.splice(0).forEach((d) => d.dispose());
    this.approvals.denyAll('the server stopped');
    const message = 'The pi-lsp server stopped unexpectedly.';
    this.transcript.setStatus('stopped', message);
    this.transcript.note(`✗ ${message} See the "Pi Server" output for its log.`);
    await this.offerRestart(message);
  }

  private async offerRestart(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(`Pi: ${message}`, 'Restart', 'Show Server Log');
    if (choice === 'Restart') {
      await this.restart();
    } else if (choice === 'Show Server Log') {
      this.serverLog.show(true);
    }
  }

  private async offerInstall(message: string, command: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(`Pi: ${message}`, 'Copy Install Command', 'Open Settings', 'Retry');
    if (choice === 'Copy Install Command') {
      await vscode.env.clipboard.writeText(command);
      void vscode.window.showInformationMessage(`Copied "${command}". Run it in a terminal, then run "Pi: Restart Server".`);
    } else if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'pi.server.path');
    } else if (choice === 'Retry') {
      await this.restart();
    }
  }
}

/**
 * The server offers `workspace/executeCommand` commands for every LSP editor (README: `pi.prompt`,
 * `pi.abort`, `pi.runInstruction`, ...); the language client registers each as a VS Code command,
 * and a name the extension already contributes (`pi.prompt`, `pi.abort`) would make the start fail
 * ("command already exists"). Those stay the extension's own; the server's others (used by its code
 * actions) are registered as usual.
 */
function keepOwnCommands(client: LanguageClient, manifest: any): void {
  const own = new Set<string>((manifest?.contributes?.commands ?? []).map((c: { command: string }) => c.command));
  const feature = client.getFeature(ExecuteCommandRequest.method);
  const register = feature.register.bind(feature);
  feature.register = (data: RegistrationData<{ commands: string[] }>) => register({
    ...data, registerOptions: { ...data.registerOptions, commands: data.registerOptions.commands.filter((c) => !own.has(c)) },
  });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
