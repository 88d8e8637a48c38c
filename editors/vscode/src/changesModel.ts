/**
 * The change set of a session as the Changes view shows it (issue 18), without `vscode`: the
 * `pi/changes` result checked into {@link ChangeFile}s, the tree rows of each file and hunk, and the
 * text a file had before the agent's still-applied hunks (the left side of the diff).
 *
 * Wire (README, "pi/changes"): `{sessionId, turn, currentTurn, files: [{path, state, toolCalls,
 * hunks: [{id, oldStart, oldLines, newStart, newLines, oldText, newText, status, currentStart?}],
 * binary, restorable, current}]}`. Lines are 0-based; `oldLines`/`newLines` are line counts; a
 * hunk's `status` is `applied` | `changed` | `reverted` | `kept`; `currentStart` (where an applied or
 * kept hunk's lines are now) is set only when the server could locate them.
 */

export type HunkStatus = 'applied' | 'changed' | 'reverted' | 'kept';

export interface ChangeHunk {
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  oldText: string;
  newText: string;
  status: HunkStatus;
  currentStart?: number;
}

export interface ChangeFile {
  /** As the server sent it (an absolute path for files under the workspace folders). */
  path: string;
  state: string;
  toolNames: string[];
  /** The turns of the tool calls that changed it (the wire sends them as strings). */
  turns: number[];
  hunks: ChangeHunk[];
  binary: boolean;
  restorable: boolean;
  current: string;
}

export interface ChangeSet {
  sessionId: string;
  currentTurn: number;
  /** The session's last prompt (1-based), or undefined when the journal recorded none (`external`). */
  currentPrompt?: number;
  files: ChangeFile[];
}

/** A row of the tree: what VS Code's TreeItem needs, without VS Code. */
export interface ChangeRow {
  /** `file:<path>` or `hunk:<id>`: stable across refreshes so expansion state survives. */
  id: string;
  label: string;
  description: string;
  tooltip: string;
  /** `piChangeFile.<undoable|done>` or `piChangeHunk.<status>`: the menus' `when` clauses match it. */
  contextValue: string;
  path: string;
  hunkId?: string;
  hasChildren: boolean;
}

const STATUSES: ReadonlySet<string> = new Set(['applied', 'changed', 'reverted', 'kept']);

/** The checked `pi/changes` result; throws `Error` naming the first malformed field. */
export function parseChangeSet(result: unknown): ChangeSet {
  const r = object(result, 'result');
  const files = array(r.files, 'files').map((f, i) => {
    const file = object(f, `files[${i}]`);
    const hunks = array(file.hunks ?? [], `files[${i}].hunks`).map((h, j) => {
      const hunk = object(h, `files[${i}].hunks[${j}]`);
      const where = `files[${i}].hunks[${j}]`;
      const status = string(hunk.status, `${where}.status`);
      if (!STATUSES.has(status)) {
        throw new Error(`${where}.status: unknown status ${JSON.stringify(status)}`);
      }
      const parsed: ChangeHunk = {
        id: string(hunk.id, `${where}.id`),
        oldStart: count(hunk.oldStart, `${where}.oldStart`),
        oldLines: count(hunk.oldLines, `${where}.oldLines`),
        newStart: count(hunk.newStart, `${where}.newStart`),
        newLines: count(hunk.newLines, `${where}.newLines`),
        oldText: string(hunk.oldText, `${where}.oldText`),
        newText: string(hunk.newText, `${where}.newText`),
        status: status as HunkStatus,
      };
      if (hunk.currentStart !== undefined && hunk.currentStart !== null) {
        parsed.currentStart = count(hunk.currentStart, `${where}.currentStart`);
      }
      return parsed;
    });
    const calls = array(file.toolCalls ?? [], `files[${i}].toolCalls`);
    return {
      path: string(file.path, `files[${i}].path`),
      state: string(file.state, `files[${i}].state`),
      toolNames: [...new Set(calls.map((c) => (isObject(c) && typeof c.toolName === 'string' ? c.toolName : '?')))],
      turns: calls.map((c) => (isObject(c) ? Number(c.turn) : NaN)).filter((t) => Number.isInteger(t)),
      hunks,
      binary: file.binary === true,
      restorable: file.restorable !== false,
      current: typeof file.current === 'string' ? file.current : 'agent',
    };
  });
  return {
    sessionId: string(r.sessionId, 'sessionId'),
    currentTurn: typeof r.currentTurn === 'number' ? r.currentTurn : 0,
    currentPrompt: typeof r.currentPrompt === 'number' && Number.isInteger(r.currentPrompt) && r.currentPrompt > 0
      ? r.currentPrompt : undefined,
    files,
  };
}

/** Files whose change can still be taken back (a hunk still applied, or a created/deleted file not reverted yet). */
export function undoable(file: ChangeFile): boolean {
  if (file.hunks.length > 0) {
    return file.hunks.some((h) => h.status === 'applied' || h.status === 'kept');
  }
  return file.restorable && file.current !== 'reverted';
}

/**
 * The file rows: label = base name, description = folder relative to `root` (when under it) and
 * what happened (`modified · 2 hunks`, `created`, `deleted`, `binary`, `not restorable`).
 */
export function fileRows(set: ChangeSet, root?: string): ChangeRow[] {
  return set.files.map((file) => {
    const { name, folder } = splitPath(file.path, root);
    const what = [file.state];
    if (file.hunks.length > 0) {
      what.push(`${file.hunks.length} hunk${file.hunks.length === 1 ? '' : 's'}`);
    }
    if (file.binary) {
      what.push('binary');
    }
    if (!file.restorable) {
      what.push('not restorable');
    }
    if (file.current === 'reverted') {
      what.push('reverted');
    }
    return {
      id: `file:${file.path}`,
      label: name,
      description: [folder, what.join(' · ')].filter((s) => s !== '').join('  '),
      tooltip: `${file.path}\n${file.state} by ${file.toolNames.join(', ') || 'the agent'}`,
      contextValue: `piChangeFile.${undoable(file) ? 'undoable' : 'done'}`,
      path: file.path,
      hasChildren: file.hunks.length > 0,
    };
  });
}

/**
 * The hunk rows of `file`: label = the lines it covers now (1-based, as editors number them) and
 * its first changed line, description = its status.
 */
export function hunkRows(file: ChangeFile): ChangeRow[] {
  return file.hunks.map((hunk) => {
    const start = (hunk.currentStart ?? hunk.newStart) + 1;
    const lines = hunk.newLines === 0 ? `after line ${start - 1}` : hunk.newLines === 1 ? `line ${start}` : `lines ${start}-${start + hunk.newLines - 1}`;
    const sample = firstLine(hunk.newText) || firstLine(hunk.oldText);
    const sign = hunk.newLines === 0 ? '−' : hunk.oldLines === 0 ? '+' : '~';
    return {
      id: `hunk:${hunk.id}`,
      label: `${sign} ${lines}: ${sample}`,
      description: hunk.status,
      tooltip: `- ${hunk.oldText}+ ${hunk.newText}`.slice(0, 2000),
      contextValue: `piChangeHunk.${hunk.status}`,
      path: file.path,
      hunkId: hunk.id,
      hasChildren: false,
    };
  });
}

/**
 * The text before the agent's change, rebuilt from `current` (the file now): every hunk located
 * in it (`applied` or `kept`, with `currentStart`) gets its old lines back; `changed` hunks (not
 * locatable) and `reverted` ones (already back) are left as they are. For a created file: `''`.
 * Lines are split like the server splits them (Python's `str.splitlines(keepends=True)`), so the
 * 0-based line numbers agree.
 */
export function beforeText(file: ChangeFile, current: string): string {
  if (file.state === 'created') {
    return '';
  }
  const lines = splitLines(current);
  const located = file.hunks
    .filter((h) => (h.status === 'applied' || h.status === 'kept') && h.currentStart !== undefined)
    .sort((a, b) => b.currentStart! - a.currentStart!);
  for (const hunk of located) {
    lines.splice(hunk.currentStart!, hunk.newLines, ...splitLines(hunk.oldText));
  }
  return lines.join('');
}

/** Lines with their endings, the boundaries of Python's `str.splitlines` (`\r\n` is one). */
export function splitLines(text: string): string[] {
  return text.match(/[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]*(?:\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]|$)/g)!
    .filter((line) => line !== '');
}

/** How many files of the set are still (partly) as the agent left them: the transcript's "N files changed". */
export function changedFileCount(set: ChangeSet): number {
  return set.files.filter(undoable).length;
}

/** The files a call after turn `turn` changed (the previous prompt ended at `turn`): the "N files changed" of a prompt. */
export function filesChangedAfter(set: ChangeSet, turn: number): ChangeFile[] {
  return set.files.filter((f) => f.turns.some((t) => t > turn));
}

function splitPath(path: string, root?: string): { name: string; folder: string } {
  const cut = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  const name = path.slice(cut + 1);
  let folder = cut >= 0 ? path.slice(0, cut) : '';
  if (root !== undefined) {
    const base = root.replace(/[\\/]+$/, '');
    if (folder === base) {
      folder = '';
    } else if (folder.startsWith(`${base}/`) || folder.startsWith(`${base}\\`)) {
      folder = folder.slice(base.length + 1);
    }
  }
  return { name, folder };
}

function firstLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const trimmed = line.trim();
  return trimmed.length > 60 ? `${trimmed.slice(0, 59)}…` : trimmed;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function object(v: unknown, where: string): Record<string, unknown> {
  if (!isObject(v)) {
    throw new Error(`${where}: expected an object`);
  }
  return v;
}

function array(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) {
    throw new Error(`${where}: expected an array`);
  }
  return v;
}

function string(v: unknown, where: string): string {
  if (typeof v !== 'string') {
    throw new Error(`${where}: expected a string`);
  }
  return v;
}

function count(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new Error(`${where}: expected a non-negative integer`);
  }
  return v;
}
