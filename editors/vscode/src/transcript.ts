/**
 * The user-visible side of a run: the {@link TranscriptModel} that the Pi view shows (listeners
 * of {@link Transcript.onDidChange} get the entries that changed), the "Pi" output channel (the
 * plain-text log of {@link TranscriptRenderer}) and a status bar item showing idle, running,
 * stopped or untrusted. A bounded copy of the log text is kept for the test-only state report.
 */
import * as vscode from 'vscode';
import { TranscriptRenderer } from './eventRendering';
import { Entry, QueuedDelivery, TranscriptModel } from './transcriptModel';

/** Most characters of transcript kept in memory (the channel itself keeps everything). */
export const KEPT_CHARS = 1_000_000;

export type PiStatus = 'starting' | 'idle' | 'running' | 'stopped' | 'untrusted';

export class Transcript implements vscode.Disposable {
  readonly channel = vscode.window.createOutputChannel('Pi');
  readonly renderer = new TranscriptRenderer();
  readonly model = new TranscriptModel();
  private readonly changed = new vscode.EventEmitter<Entry[]>();
  /** Fires with the model's entries that changed (never an empty list). */
  readonly onDidChange = this.changed.event;
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private kept = '';
  status: PiStatus = 'starting';

  constructor() {
    this.setStatus('starting');
    this.item.show();
  }

  /** The session named by the latest `pi/event` of a prompt run (not `external`), if any. */
  eventSessionId: string | undefined;

  /** Render one `pi/event` params object into the channel. */
  event(params: unknown): void {
    const session = (params as { sessionId?: unknown } | null)?.sessionId;
    if (typeof session === 'string' && session !== 'external') {
      this.eventSessionId = session;
    }
    this.append(this.renderer.render(params));
    this.changes(this.model.event(params));
  }

  /** A line of the extension's own (saves, errors); `error` marks it as an error in the view. */
  note(text: string, error = false): void {
    this.append(this.renderer.note(text));
    this.changes(this.model.note(text.trim(), error || text.trimStart().startsWith('✗')));
  }

  /** A line for the log channel only (the view shows the same thing its own way). */
  log(text: string): void {
    this.append(this.renderer.note(text));
  }

  /** The run that just ended changed `files` files (the view links to the Changes view). */
  changeSummary(files: number): void {
    this.append(this.renderer.note(`${files} file(s) changed: run "Pi: Review Changes"`));
    this.changes(this.model.changeSummary(files));
  }

  /** The user's prompt, as sent; `delivery` marks a steering or queued message (issue 19). */
  prompt(text: string, delivery?: QueuedDelivery): void {
    const mark = delivery === 'steer' ? ' (steering)' : delivery === 'followUp' ? ' (queued)' : '';
    this.append(this.renderer.note(`\n»${mark} ${text}`));
    this.changes(this.model.prompt(text, delivery));
  }

  /** Tell the view about entries changed through {@link model} directly. */
  changes(entries: Entry[]): void {
    if (entries.length > 0) {
      this.changed.fire(entries);
    }
  }

  /** The kept transcript text (the last {@link KEPT_CHARS} characters). */
  text(): string {
    return this.kept;
  }

  setStatus(status: PiStatus, detail?: string): void {
    this.status = status;
    const looks: Record<PiStatus, [string, string]> = {
      starting: ['$(loading~spin) Pi', 'Pi: starting the pi-lsp server'],
      idle: ['$(sparkle) Pi', 'Pi: idle. Click to prompt.'],
      running: ['$(sync~spin) Pi: running', 'Pi is working. Click to abort.'],
      stopped: ['$(error) Pi: stopped', 'The pi-lsp server is not running. Click to restart.'],
      untrusted: ['$(shield) Pi: off', 'Pi stays off until you trust this workspace.'],
    };
    const [text, tooltip] = looks[status];
    this.item.text = text;
    this.item.tooltip = detail ? `${tooltip}\n${detail}` : tooltip;
    this.item.command = status === 'running' ? 'pi.abort' : status === 'stopped' ? 'pi.restartServer'
      : status === 'idle' ? 'pi.transcript.focus' : 'pi.showLog';
  }

  dispose(): void {
    this.changed.dispose();
    this.item.dispose();
    this.channel.dispose();
  }

  private append(text: string): void {
    if (text === '') {
      return;
    }
    this.channel.append(text);
    this.kept = (this.kept + text).slice(-KEPT_CHARS);
  }
}
