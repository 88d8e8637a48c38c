/**
 * The user-visible side of a run: the "Pi" output channel (the streamed transcript of
 * {@link TranscriptRenderer}) and a status bar item showing idle, running, stopped or untrusted.
 * A bounded copy of the transcript text is kept for the test-only state report.
 */
import * as vscode from 'vscode';
import { TranscriptRenderer } from './eventRendering';

/** Most characters of transcript kept in memory (the channel itself keeps everything). */
export const KEPT_CHARS = 1_000_000;

export type PiStatus = 'starting' | 'idle' | 'running' | 'stopped' | 'untrusted';

export class Transcript implements vscode.Disposable {
  readonly channel = vscode.window.createOutputChannel('Pi');
  readonly renderer = new TranscriptRenderer();
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  private kept = '';
  status: PiStatus = 'starting';

  constructor() {
    this.setStatus('starting');
    this.item.show();
  }

  /** Render one `pi/event` params object into the channel. */
  event(params: unknown): void {
    this.append(this.renderer.render(params));
  }

  /** A line of the extension's own (saves, errors, prompts). */
  note(text: string): void {
    this.append(this.renderer.note(text));
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
      : status === 'idle' ? 'pi.prompt' : 'pi.showLog';
  }

  dispose(): void {
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
