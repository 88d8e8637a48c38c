/**
 * Pi's commands and the life of a prompt: `Pi: Prompt`, `Pi: Prompt with Selection`, `Pi: Abort`,
 * `Pi: Show Log`, `Pi: Set API Key`, `Pi: Restart Server`.
 *
 * Rules (issue 8): one run at a time; a prompt while a run is active (issue 19) is sent to it as
 * a steering message (`pi/steer`) or a queued one (`pi/followUp`), as the user picks (the Pi view's
 * prompt box asks or has buttons; "Pi: Prompt" asks with a quick pick that can also stop the
 * agent); text that was not sent, or never delivered (`undelivered`), goes back into the prompt
 * box. Nothing that runs code starts in an untrusted
 * workspace: the server itself starts only once the workspace is trusted. A run continues the
 * session of the previous one (the model keeps the conversation).
 */
import * as vscode from 'vscode';
import { ApprovalPrompts } from './approvals';
import { filesChangedAfter } from './changesModel';
import { ChangesView } from './changesView';
import { PiClient, SECRET_KEY, errorText } from './client';
import { Transcript } from './transcript';
import { QueuedDelivery } from './transcriptModel';
import { Delivery, TranscriptView } from './transcriptView';

export class PiController implements vscode.Disposable {
  readonly transcript = new Transcript();
  readonly view: TranscriptView;
  readonly approvals: ApprovalPrompts;
  readonly client: PiClient;
  readonly changes: ChangesView;
  sessionId: string | undefined;
  running = false;
  /** Every prompt result `{sessionId, stopReason, errorMessage?, undelivered?}` or `{error}`, in order. */
  readonly results: unknown[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.view = new TranscriptView(context.extensionUri, this.transcript, {
      submit: (text, delivery) => void this.submit(text, delivery),
      answer: (approvalId, action) => this.approvals.answer(approvalId, action),
      abort: () => void this.abort(),
      reviewChanges: () => void this.changes.reveal(),
    });
    this.approvals = new ApprovalPrompts(this.transcript, () => this.view.reveal(true));
    this.client = new PiClient(context, this.transcript, this.approvals);
    this.changes = new ChangesView({
      sessionId: () => this.sessionId,
      request: (method, params) => {
        if (!this.client.client || !this.client.running) {
          return Promise.reject(new Error('the pi-lsp server is not running'));
        }
        return this.client.client.sendRequest(method, params);
      },
    }, (line) => this.transcript.note(line));
    const command = (id: string, run: (...args: any[]) => unknown) =>
      context.subscriptions.push(vscode.commands.registerCommand(id, run));
    command('pi.prompt', (text?: unknown) => this.promptCommand(typeof text === 'string' ? text : undefined));
    command('pi.promptWithSelection', () => this.promptWithSelection());
    command('pi.abort', () => this.abort());
    command('pi.showLog', () => this.transcript.channel.show(true));
    command('pi.setApiKey', () => this.setApiKey());
    command('pi.restartServer', () => this.startIfTrusted(true));
    context.subscriptions.push(
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.startIfTrusted()),
      vscode.workspace.onDidChangeConfiguration((e) => this.configurationChanged(e)),
      context.secrets.onDidChange((e) => e.key === SECRET_KEY && this.restartWhenIdle('the API key changed')),
    );
  }

  /** Start the server unless the workspace is untrusted (then wait for trust). */
  async startIfTrusted(restart = false): Promise<boolean> {
    if (!vscode.workspace.isTrusted) {
      this.transcript.setStatus('untrusted');
      this.transcript.note('Pi stays off until this workspace is trusted (it runs commands and edits files).');
      return false;
    }
    return restart ? this.client.restart() : this.client.running || this.client.start();
  }

  async promptCommand(given?: string): Promise<void> {
    if (!(await this.ready())) {
      return;
    }
    const text = given ?? await vscode.window.showInputBox({
      title: 'Pi: Prompt', prompt: 'What should Pi do?', placeHolder: 'e.g. make the failing test pass',
      ignoreFocusOut: true,
    });
    if (text && text.trim() !== '') {
      await this.prompt(text);
    }
  }

  async promptWithSelection(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.selection.isEmpty) {
      void vscode.window.showInformationMessage('Pi: select some text first.');
      return;
    }
    if (!(await this.ready())) {
      return;
    }
    const ask = await vscode.window.showInputBox({ title: 'Pi: Prompt with Selection', prompt: 'What should Pi do with the selection?', ignoreFocusOut: true });
    if (!ask || ask.trim() === '') {
      return;
    }
    const sel = editor.selection;
    const where = `${vscode.workspace.asRelativePath(editor.document.uri)} lines ${sel.start.line + 1}-${sel.end.line + 1}`;
    await this.prompt(`${ask}\n\nSelected in ${where}:\n\`\`\`\n${editor.document.getText(sel)}\n\`\`\``);
  }

  /**
   * A prompt typed in the Pi view: `prompt` starts a run (or, while one is active, asks how to send
   * it); `steer` / `followUp` go to the active run (a new run when none is active).
   */
  async submit(text: string, delivery: Delivery): Promise<void> {
    if (!(await this.ready())) {
      this.view.restore(text);
    } else if (delivery === 'prompt') {
      await this.prompt(text);
    } else {
      await this.queue(text, delivery);
    }
  }

  /** A prompt while a run is active: Steer / Queue / Stop the agent / Cancel, in a quick pick. */
  async askDelivery(text: string): Promise<void> {
    const keep = "your text goes to the Pi view's prompt box";
    const items: (vscode.QuickPickItem & { how: QueuedDelivery | 'stop' | 'cancel' })[] = [
      { label: 'Steer', description: "send it with the agent's next model request", how: 'steer' },
      { label: 'Queue', description: 'run it when the current run ends', how: 'followUp' },
      { label: 'Stop the agent', description: `abort the run; ${keep}`, how: 'stop' },
      { label: 'Cancel', description: `send nothing; ${keep}`, how: 'cancel' },
    ];
    const picked = await vscode.window.showQuickPick(items, {
      title: 'Pi is working on a prompt', placeHolder: 'Send this prompt how?', ignoreFocusOut: true,
    });
    const how = picked?.how ?? 'cancel';
    if (how === 'steer' || how === 'followUp') {
      await this.queue(text, how);
      return;
    }
    if (how === 'stop') {
      await this.abort();
    }
    this.view.restore(text);
  }

  /**
   * Send `text` to the active run (`pi/steer` or `pi/followUp`) and show it in the transcript,
   * marked. With no run active (it ended meanwhile) the text starts a run instead; a refusal
   * puts it back into the prompt box.
   */
  async queue(text: string, how: QueuedDelivery): Promise<void> {
    const client = this.client.client;
    const session = this.sessionId ?? this.transcript.eventSessionId;
    if (!this.running) {
      await this.prompt(text);
      return;
    }
    if (!client || !session) {
      this.transcript.note('✗ the run has not started yet: your text is back in the prompt box');
      this.view.restore(text);
      return;
    }
    try {
      await client.sendRequest(how === 'steer' ? 'pi/steer' : 'pi/followUp', { sessionId: session, text });
      this.transcript.prompt(text, how);
    } catch (error) {
      if (!this.running) {
        await this.prompt(text); // the run ended meanwhile: the text is the next prompt
        return;
      }
      this.transcript.note(`✗ not sent: ${errorText(error)} (your text is back in the prompt box)`);
      this.view.restore(text);
    }
  }

  /** Send `pi/prompt` and wait for the run to end; the transcript streams meanwhile. A prompt
   * while a run is active asks how to send it ({@link askDelivery}). */
  async prompt(text: string): Promise<void> {
    if (this.running) {
      await this.askDelivery(text);
      return;
    }
    const client = this.client.client;
    if (!client || !this.client.running) {
      return;
    }
    this.running = true;
    this.transcript.setStatus('running');
    this.view.setRunning(true);
    this.transcript.prompt(text);
    void this.view.reveal(true);
    try {
      const params: Record<string, unknown> = { text };
      if (this.sessionId) {
        params.sessionId = this.sessionId;
      }
      const result: any = await client.sendRequest('pi/prompt', params);
      this.results.push(result);
      if (result && typeof result.sessionId === 'string') {
        this.sessionId = result.sessionId;
      }
      for (const lost of Array.isArray(result?.undelivered) ? result.undelivered : []) {
        if (typeof lost === 'string') {
          this.transcript.note(`✗ not sent (the run ended first), back in the prompt box: ${lost}`);
          this.view.restore(lost);
        }
      }
      if (result?.stopReason === 'error') {
        void vscode.window.showErrorMessage(`Pi: the run failed: ${result.errorMessage ?? 'unknown error'}`, 'Show Log')
          .then((c) => c && this.transcript.channel.show(true));
      }
    } catch (error) {
      this.results.push({ error: errorText(error) });
      this.transcript.note(`✗ the prompt failed: ${errorText(error)}`);
      void vscode.window.showErrorMessage(`Pi: the prompt failed: ${errorText(error)}`);
    } finally {
      this.running = false;
      this.view.setRunning(false);
      this.transcript.setStatus(this.client.running ? 'idle' : 'stopped');
    }
    await this.reviewLink();
  }

  /** After a run: refresh the Changes view; when the run changed files, the transcript links to it. */
  private async reviewLink(): Promise<void> {
    const endedBefore = this.changes.set?.sessionId === this.sessionId ? this.changes.set?.currentTurn ?? 0 : 0;
    await this.changes.refresh();
    const set = this.changes.set;
    const changed = set ? filesChangedAfter(set, endedBefore).length : 0;
    if (changed > 0) {
      this.transcript.changeSummary(changed);
    }
  }

  async abort(): Promise<void> {
    if (!this.running || !this.client.client) {
      void vscode.window.showInformationMessage('Pi: nothing to abort.');
      return;
    }
    this.transcript.note('(abort requested)');
    await this.client.client.sendNotification('pi/abort', this.sessionId ? { sessionId: this.sessionId } : {});
  }

  async setApiKey(): Promise<void> {
    const key = await vscode.window.showInputBox({
      title: 'Pi: Set API Key', prompt: 'Stored in VS Code\'s secret storage and passed to the pi-lsp server. Empty removes it.',
      password: true, ignoreFocusOut: true,
    });
    if (key === undefined) {
      return;
    }
    if (key === '') {
      await this.context.secrets.delete(SECRET_KEY);
      void vscode.window.showInformationMessage('Pi: API key removed.');
    } else {
      await this.context.secrets.store(SECRET_KEY, key);
      void vscode.window.showInformationMessage('Pi: API key stored.');
    }
  }

  dispose(): void {
    this.client.dispose();
    this.changes.dispose();
    this.approvals.dispose();
    this.view.dispose();
    this.transcript.dispose();
  }

  private async ready(): Promise<boolean> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('Pi runs commands and edits files: trust this workspace first.', 'Manage Workspace Trust')
        .then((c) => c && vscode.commands.executeCommand('workbench.trust.manage'));
      return false;
    }
    if (this.client.running) {
      return true;
    }
    return this.client.start();
  }

  private configurationChanged(e: vscode.ConfigurationChangeEvent): void {
    if (!e.affectsConfiguration('pi')) {
      return;
    }
    // the server reads externalSocket once, at initialize; apiKeyEnv decides its environment
    if (e.affectsConfiguration('pi.server') || e.affectsConfiguration('pi.apiKeyEnv') || e.affectsConfiguration('pi.externalSocket')) {
      void this.restartWhenIdle('the server settings changed');
    } else {
      void this.client.settingsChanged();
    }
  }

  private async restartWhenIdle(why: string): Promise<void> {
    if (!this.client.client && this.transcript.status !== 'stopped') {
      return; // never started (untrusted): it will start with the new values
    }
    if (this.running) {
      this.transcript.note(`${why}; run "Pi: Restart Server" after this prompt to apply it.`);
      return;
    }
    this.transcript.note(`${why}: restarting the server.`);
    await this.startIfTrusted(true);
  }
}
