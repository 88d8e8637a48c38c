/**
 * Transcript entries ({@link Entry}) as HTML fragments for the Pi view's webview.
 *
 * Pure (no `vscode` import). Every piece of text from the model, a tool or the server is escaped;
 * the assistant's text is Markdown rendered by markdown-it with raw HTML off (so `<script>` in a
 * reply shows as text), no linkification, and markdown-it's own link validation (no
 * `javascript:`/`vbscript:`/`file:` links). Images are left to the webview's Content-Security-Policy,
 * which loads nothing remote. Each fragment is one element carrying `data-id` = the entry id; a
 * tool call's arguments and full result sit in a `<details>` under its one-line summary.
 */
import MarkdownIt from 'markdown-it';
import type { ApprovalEntry, Entry, ToolEntry } from './transcriptModel';

const markdown = new MarkdownIt({ html: false, linkify: false, breaks: false });

/** Most characters of a tool line's subject (the command, the path) before it is cut with `…`. */
export const LINE_CHARS = 120;

/** The HTML of one entry (one element with `data-id`). */
export function entryHtml(entry: Entry): string {
  switch (entry.kind) {
    case 'prompt': {
      const how = entry.delivery === 'steer' ? 'steering' : entry.delivery === 'followUp' ? 'queued' : '';
      const label = entry.delivery === 'steer' ? ' · steering (sent with the next model request)'
        : entry.delivery === 'followUp' ? ' · queued (runs when this run ends)' : '';
      return `<div class="entry prompt${how ? ` ${how}` : ''}" data-id="${entry.id}"${how ? ` data-delivery="${how}"` : ''}>`
        + `<span class="who">You${label}</span>${paragraphs(entry.text)}</div>`;
    }
    case 'assistant':
      return `<div class="entry assistant${entry.error ? ' error' : ''}" data-id="${entry.id}">`
        + `<div class="markdown">${markdownHtml(entry.text)}</div>`
        + (entry.error ? `<div class="error-line">✗ Model error: ${escapeHtml(entry.error)}</div>` : '')
        + '</div>';
    case 'tool':
      return toolHtml(entry);
    case 'approval':
      return approvalHtml(entry);
    case 'note':
      return `<div class="entry note${entry.error ? ' error' : ''}" data-id="${entry.id}">${escapeHtml(entry.text)}</div>`;
    case 'changes':
      return `<div class="entry changes" data-id="${entry.id}"><button type="button" class="link review-changes">`
        + `${entry.files} file${entry.files === 1 ? '' : 's'} changed: review</button></div>`;
    case 'end': {
      const label = entry.state === 'done' ? '✔ Done' : entry.state === 'aborted' ? '■ Aborted' : '✗ Failed';
      const reason = entry.reason ? `: ${escapeHtml(entry.reason)}` : '';
      return `<div class="entry end ${entry.state}" data-id="${entry.id}" data-state="${entry.state}">${label}${reason}</div>`;
    }
  }
}

/** The assistant's Markdown as HTML (raw HTML in it is escaped, never passed through). */
export function markdownHtml(text: string): string {
  return markdown.render(text);
}

/**
 * The one readable line of a tool call: the tool name and what it acts on, e.g.
 * `edit textkit/slug.py`, `bash python3 -m unittest -q`, `grep TODO src`, `definition app.py:3 greet`,
 * `rename greeting.py:1 greet → welcome`, `symbols notes.txt`; other tools show their
 * arguments as compact JSON. Plain text (escape it before use); cut to {@link LINE_CHARS}.
 */
export function toolLine(name: string, args: unknown): string {
  const a = isObject(args) ? args : {};
  const s = (key: string) => (typeof a[key] === 'string' ? a[key] as string : undefined);
  let subject: string | undefined;
  switch (name) {
    case 'bash': {
      const command = s('command');
      subject = command === undefined ? undefined : command.split('\n')[0] + (command.includes('\n') ? ' …' : '');
      break;
    }
    case 'read': {
      const range = typeof a.offset === 'number' ? `:${a.offset}${typeof a.limit === 'number' ? `+${a.limit}` : ''}` : '';
      subject = s('path') && s('path') + range;
      break;
    }
    case 'edit':
    case 'write':
    case 'ls':
      subject = s('path');
      break;
    case 'grep':
    case 'find':
      subject = [s('pattern'), s('path')].filter((x) => x !== undefined).join(' ');
      break;
    case 'diagnostics':
    case 'symbols':
      subject = s('path') ?? (name === 'diagnostics' ? 'workspace' : undefined);
      break;
    case 'definition':
    case 'references':
    case 'hover':
    case 'rename': {
      // issue 17: `definition app.py:3 greet`, `rename greeting.py:1 greet → welcome`
      const at = s('path') && (typeof a.line === 'number' ? `${s('path')}:${a.line}` : s('path'));
      const which = typeof a.occurrence === 'number' && a.occurrence > 1 ? ` (#${a.occurrence})` : '';
      const symbol = s('symbol') && s('symbol') + which;
      subject = [at, symbol, s('newName') && `→ ${s('newName')}`].filter((x) => x).join(' ') || undefined;
      break;
    }
    default:
      subject = args === undefined ? '' : JSON.stringify(args);
  }
  const line = subject ? `${name} ${subject}` : name;
  return line.length <= LINE_CHARS ? line : `${line.slice(0, LINE_CHARS)}…`;
}

/** A diff (Pi's display diff `+N line` / `-N line` / ` N line`, or a unified patch) with one
 * `<span>` per line: class `add` for `+`, `del` for `-`, `hunk` for `@@`, `ctx` otherwise. */
export function diffHtml(diff: string): string {
  const lines = diff.replace(/\n$/, '').split('\n').map((line) => {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'file'
      : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
    return `<span class="${cls}">${escapeHtml(line)}</span>`;
  });
  return `<pre class="diff">${lines.join('\n')}</pre>`;
}

function toolHtml(entry: ToolEntry): string {
  const icon = entry.state === 'running' ? '⟳' : entry.state === 'error' ? '✗' : '✔';
  const state = entry.state === 'running' ? 'running' : entry.state === 'error' ? 'failed' : '';
  const summary = `<summary><span class="icon">${icon}</span> <span class="tool-line">${escapeHtml(toolLine(entry.name, entry.args))}</span>`
    + (entry.external ? ' <span class="badge">external</span>' : '')
    + (state ? ` <span class="state">${state}</span>` : '') + '</summary>';
  const args = entry.args === undefined ? '' : `<div class="label">Arguments</div><pre class="args">${escapeHtml(JSON.stringify(entry.args, null, 2))}</pre>`;
  const result = entry.result === undefined ? ''
    : `<div class="label">Result</div><pre class="result">${escapeHtml(entry.result === '' ? '(no output)' : entry.result)}</pre>`;
  const live = entry.state === 'running' && entry.liveTail !== ''
    ? `<pre class="live-tail">${escapeHtml(lastLines(entry.liveTail, 12))}</pre>` : '';
  const diff = entry.diff && entry.state === 'done' ? diffHtml(entry.diff) : '';
  const error = entry.state === 'error' && entry.result ? `<pre class="error-result">${escapeHtml(lastLines(entry.result, 12))}</pre>` : '';
  return `<div class="entry tool ${entry.state}" data-id="${entry.id}" data-tool="${escapeHtml(entry.name)}" data-state="${entry.state}">`
    + `<details>${summary}<div class="body">${args}${result}</div></details>`
    + `${entry.approval ? approvalHtml(entry.approval, false) : ''}${live}${diff}${error}</div>`;
}

/** An approval card; `own` when it is an entry of its own (then it carries `data-id`). */
function approvalHtml(entry: ApprovalEntry, own = true): string {
  const cls = entry.pending ? 'pending' : entry.denied ? 'denied' : 'allowed';
  const head = entry.pending
    ? `<div class="approval-head">⚠ Pi is waiting for your approval: <strong>${escapeHtml(entry.title)}</strong></div>`
    : `<div class="approval-head">${entry.denied ? '✗' : '✔'} Approval: <strong>${escapeHtml(entry.title)}</strong></div>`;
  const message = entry.pending && entry.message ? `<pre class="approval-message">${escapeHtml(entry.message)}</pre>` : '';
  const buttons = entry.pending && entry.actions.length > 0
    ? `<div class="actions">${entry.actions.map((a) => {
      const primary = a.id === entry.defaultAction;
      return `<button type="button" class="${primary ? 'primary' : 'secondary'}" data-approval="${escapeHtml(entry.approvalId)}"`
        + ` data-action="${escapeHtml(a.id)}"${primary ? ' data-default="true"' : ''}>${escapeHtml(a.title)}</button>`;
    }).join('')}</div>` : '';
  const outcome = entry.outcome ? `<div class="outcome">${escapeHtml(entry.outcome)}</div>` : '';
  return `<div class="${own ? 'entry ' : ''}approval ${cls}"${own ? ` data-id="${entry.id}"` : ''} data-approval-id="${escapeHtml(entry.approvalId)}">`
    + `${head}${message}${buttons}${outcome}</div>`;
}

function paragraphs(text: string): string {
  return `<div class="text">${escapeHtml(text)}</div>`;
}

function lastLines(text: string, count: number): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return lines.slice(-count).join('\n');
}

/** `&`, `<`, `>`, `"` and `'` as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]!));
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
