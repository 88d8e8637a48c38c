/**
 * `pi/event` notifications (design.md section 6) rendered as transcript text for the "Pi" output
 * channel, plus a structured record of the tool calls (status and result) for the status bar and
 * the test-only state report.
 *
 * Pure logic (no `vscode` import). The channel is append-only, so {@link TranscriptRenderer.render}
 * returns the text to APPEND for one event: assistant text arrives as deltas and is appended as
 * is; every other event starts on a fresh line. Output is bounded: arguments and results are cut
 * ({@link LIMITS}), so a whole file never floods the channel.
 */

/** Cut-off points, in UTF-16 code units (JavaScript string length) and lines. */
export const LIMITS = { argsChars: 200, resultLines: 6, lineChars: 160, updateChars: 2000 };

export type ToolStatus = 'running' | 'done' | 'error';

export interface ToolCallRecord {
  id: string;
  name: string;
  sessionId: string;
  args: unknown;
  status: ToolStatus;
  /** The result's text blocks joined (bounded to 4000 chars); set at `tool_execution_end`. */
  result?: string;
}

export interface RunRecord {
  sessionId: string;
  running: boolean;
  stopReason?: string;
  errorMessage?: string;
}

type Event = Record<string, unknown>;

/** One transcript: feed it every `pi/event`'s params in arrival order. */
export class TranscriptRenderer {
  readonly toolCalls: ToolCallRecord[] = [];
  readonly runs: RunRecord[] = [];
  private midLine = false;

  /** Text to append for one `pi/event` params object `{sessionId, event}`; `''` for nothing. */
  render(params: unknown): string {
    if (!isObject(params) || !isObject(params.event) || typeof params.event.type !== 'string') {
      return this.line(`[pi] ignored a malformed pi/event: ${cut(JSON.stringify(params) ?? '', LIMITS.argsChars)}`);
    }
    const sessionId = typeof params.sessionId === 'string' ? params.sessionId : '?';
    const event = params.event;
    const external = sessionId === 'external' ? '[external] ' : '';
    switch (event.type) {
      case 'agent_start':
        this.runs.push({ sessionId, running: true });
        return this.line(`── Pi run started (session ${sessionId}) ──`);
      case 'message_update':
        return this.delta(event.delta);
      case 'message_end':
        return this.messageEnd(event.message);
      case 'tool_execution_start': {
        const id = String(event.toolCallId ?? '');
        const name = String(event.toolName ?? '?');
        this.toolCalls.push({ id, name, sessionId, args: event.args, status: 'running' });
        return this.line(`${external}▶ ${name} ${cut(JSON.stringify(event.args) ?? '', LIMITS.argsChars)}`);
      }
      case 'tool_execution_update': {
        const output = typeof event.output === 'string' ? event.output : '';
        return output ? this.block(cut(output, LIMITS.updateChars), '  │ ') : '';
      }
      case 'tool_execution_end':
        return this.toolEnd(event, external);
      case 'approval_requested':
        return this.line(`${external}? approval asked: ${String(event.title ?? event.toolName ?? '?')}`);
      case 'approval_resolved':
        return this.line(`${external}${event.decision === 'allow' ? '✔' : '⛔'} approval ${event.decision === 'allow' ? 'allowed' : 'denied'}`
          + `${event.scope === 'session' ? ' for this session' : ''} (by ${String(event.by ?? '?')}): ${String(event.toolName ?? '?')}`);
      case 'pi_approval_request':
        return this.line(`${external}? approval asked for ${String(event.toolName ?? '?')}: ${String(event.scope ?? '')}` +
          (event.reason ? ` (${String(event.reason)})` : ''));
      case 'pi_file_saved':
        return this.line(`💾 saved ${String(event.path ?? event.uri ?? '?')}`);
      case 'agent_end': {
        const run = [...this.runs].reverse().find((r) => r.sessionId === sessionId && r.running);
        const stopReason = typeof event.stopReason === 'string' ? event.stopReason : 'unknown';
        const errorMessage = typeof event.errorMessage === 'string' ? event.errorMessage : undefined;
        if (run) {
          Object.assign(run, { running: false, stopReason, errorMessage });
        }
        const how = stopReason === 'stop' ? 'done' : stopReason === 'aborted' ? 'aborted' : `ended: ${stopReason}`;
        return this.line(`── Pi run ${how}${errorMessage ? `: ${errorMessage}` : ''} ──`) + '\n';
      }
      default:
        return '';
    }
  }

  /** A line the extension itself adds (a save it made, an error it reports). */
  note(text: string): string {
    return this.line(text);
  }

  private delta(delta: unknown): string {
    if (!isObject(delta) || delta.type !== 'text' || typeof delta.text !== 'string' || delta.text === '') {
      return '';
    }
    this.midLine = !delta.text.endsWith('\n');
    return delta.text;
  }

  private messageEnd(message: unknown): string {
    if (!isObject(message) || message.role !== 'assistant') {
      return '';
    }
    let out = this.midLine ? '\n' : '';
    this.midLine = false;
    if (message.stopReason === 'error' && typeof message.errorMessage === 'string') {
      out += this.line(`✗ model error: ${message.errorMessage}`);
    }
    return out;
  }

  private toolEnd(event: Event, external: string): string {
    const id = String(event.toolCallId ?? '');
    const isError = event.isError === true;
    const text = resultText(event.result);
    let record = this.toolCalls.find((c) => c.id === id && c.status === 'running');
    if (!record) {
      record = { id, name: String(event.toolName ?? '?'), sessionId: '?', args: undefined, status: 'running' };
      this.toolCalls.push(record);
    }
    record.status = isError ? 'error' : 'done';
    record.result = cut(text, 4000);
    const lines = text.split('\n');
    const shown = lines.slice(0, LIMITS.resultLines).map((l) => cut(l, LIMITS.lineChars));
    if (lines.length > LIMITS.resultLines) {
      shown.push(`… (${lines.length - LIMITS.resultLines} more lines)`);
    }
    const head = `${external}${isError ? '✗' : '✔'} ${record.name}${isError ? ' failed' : ''}`;
    return this.line(head) + (text ? this.block(shown.join('\n'), '    ') : '');
  }

  private line(text: string): string {
    const prefix = this.midLine ? '\n' : '';
    this.midLine = false;
    return `${prefix}${text}\n`;
  }

  private block(text: string, indent: string): string {
    return this.line(text.replace(/\n$/, '').split('\n').map((l) => indent + l).join('\n'));
  }
}

/** The text blocks of a `{content: [...]}` result joined by newlines; images as `[image]`. */
export function resultText(result: unknown): string {
  if (!isObject(result) || !Array.isArray(result.content)) {
    return '';
  }
  return result.content
    .map((block: unknown) => (isObject(block) && block.type === 'text' && typeof block.text === 'string'
      ? block.text : isObject(block) && block.type === 'image' ? '[image]' : ''))
    .filter((t: string) => t !== '')
    .join('\n');
}

/** `text` cut to `max` code units with a marker saying how much was dropped. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (+${text.length - max} chars)`;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
