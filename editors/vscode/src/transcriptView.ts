/**
 * The Pi view (`pi.transcript`): a webview view in Pi's own activity-bar container that shows the
 * transcript ({@link TranscriptModel} entries as HTML from {@link entryHtml}) with a prompt box.
 *
 * Why a webview and not a tree + document: a transcript is read top to bottom like a chat (Markdown,
 * diffs in colour, output that grows while a command runs, approval buttons next to the call they
 * are about), which a tree cannot show and a read-only document cannot make interactive.
 *
 * The page is local only: `media/transcript.js` and `media/transcript.css`, a Content-Security-Policy
 * that allows only those (script by nonce) and nothing remote. The host posts
 * `{type: "reset", entries, running}` (all entries, when the page (re)loads),
 * `{type: "upsert", entries}` (changed entries; `entries` = `[{id, html}]`) and
 * `{type: "state", running}` and `{type: "restore", text}` (text that was not sent goes back into the
 * prompt box); the page posts `{type: "ready"}`, `{type: "submit", text, delivery}`,
 * `{type: "approval", approvalId, action}`, `{type: "abort"}` and `{type: "reviewChanges"}` (the
 * "N files changed: review" link after a run).
 */
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { entryHtml } from './transcriptHtml';
import { ApprovalActionId, Entry } from './transcriptModel';
import { Transcript } from './transcript';

export const VIEW_ID = 'pi.transcript';

/**
 * How a prompt typed in the box is delivered (issue 19): `prompt` starts a run; while a run is
 * active the page asks, or its Steer / Queue buttons say, `steer` (`pi/steer`: sent with the run's
 * next model request) or `followUp` (`pi/followUp`: runs when the run would end).
 */
export type Delivery = 'prompt' | 'steer' | 'followUp';

const DELIVERIES: readonly unknown[] = ['prompt', 'steer', 'followUp'];

/** What the view asks of the rest of the extension. */
export interface TranscriptViewActions {
  submit(text: string, delivery: Delivery): void;
  answer(approvalId: string, action: ApprovalActionId): void;
  abort(): void;
  reviewChanges(): void;
}

export class TranscriptView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private running = false;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly transcript: Transcript,
    private readonly actions: TranscriptViewActions,
  ) {
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(VIEW_ID, this, { webviewOptions: { retainContextWhenHidden: true } }),
      transcript.onDidChange((entries) => this.post({ type: 'upsert', entries: entries.map(fragment) })),
    );
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.page(view.webview, media);
    view.webview.onDidReceiveMessage((message) => this.received(message), undefined, this.disposables);
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
      }
    }, undefined, this.disposables);
  }

  /** Show the view (it opens by itself when a prompt starts or an approval is asked). */
  async reveal(preserveFocus: boolean): Promise<void> {
    if (this.view) {
      this.view.show(preserveFocus);
      return;
    }
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    if (preserveFocus) {
      await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    }
  }

  /** Put `text` (not sent, or sent but never delivered) back into the prompt box. */
  restore(text: string): void {
    this.post({ type: 'restore', text });
  }

  /** Whether a run is active (the page shows Steer, Queue and Abort next to the prompt box then). */
  setRunning(running: boolean): void {
    this.running = running;
    this.post({ type: 'state', running });
  }

  dispose(): void {
    this.disposables.splice(0).forEach((d) => d.dispose());
  }

  private received(message: unknown): void {
    if (typeof message !== 'object' || message === null) {
      return;
    }
    const m = message as Record<string, unknown>;
    if (m.type === 'ready') {
      this.post({ type: 'reset', entries: this.transcript.model.entries.map(fragment), running: this.running });
    } else if (m.type === 'submit' && typeof m.text === 'string' && m.text.trim() !== '') {
      this.actions.submit(m.text, DELIVERIES.includes(m.delivery) ? m.delivery as Delivery : 'prompt');
    } else if (m.type === 'approval' && typeof m.approvalId === 'string'
      && (m.action === 'allowOnce' || m.action === 'allowSession' || m.action === 'deny')) {
      this.actions.answer(m.approvalId, m.action);
    } else if (m.type === 'abort') {
      this.actions.abort();
    } else if (m.type === 'reviewChanges') {
      this.actions.reviewChanges();
    }
  }

  private post(message: unknown): void {
    void this.view?.webview.postMessage(message);
  }

  private page(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, 'transcript.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, 'transcript.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Pi</title>
</head>
<body>
<main id="transcript" aria-live="polite"><p class="empty">Ask Pi something below. The transcript of each run shows here.</p></main>
<form id="prompt-form">
<div id="delivery" role="group" aria-label="Pi is working: send this how?" hidden><span class="question">Pi is working. Send this:</span>
<button type="button" data-delivery="steer" title="Sent with the agent's next model request (after the running tool calls)">Steer</button>
<button type="button" data-delivery="followUp" class="secondary" title="Runs when the current run ends">Queue</button>
<button type="button" id="delivery-cancel" class="secondary" title="Send nothing; the text stays here">Cancel</button></div>
<textarea id="prompt" rows="3" placeholder="Ask Pi… (Enter sends, Shift+Enter for a new line)" aria-label="Prompt"></textarea>
<div class="prompt-actions"><button type="submit" id="send">Send</button>
<button type="button" id="steer" class="secondary" title="Steer (Ctrl+Enter): sent with the agent's next model request" hidden>Steer</button>
<button type="button" id="queue" class="secondary" title="Queue (Alt+Enter): runs when the current run ends" hidden>Queue</button>
<button type="button" id="abort" class="secondary" hidden>Abort</button></div>
</form>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}

function fragment(entry: Entry): { id: string; html: string } {
  return { id: entry.id, html: entryHtml(entry) };
}
