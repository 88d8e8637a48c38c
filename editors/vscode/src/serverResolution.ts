/**
 * Where the pi-lsp server comes from, and whether it is one this extension can talk to.
 *
 * Pure logic (no `vscode` import) so the unit tests run under plain Node.
 *
 * Order (issue 8): the `pi.server.path` setting when it is set, else `pi-lsp` on `PATH`. When
 * neither gives an executable file, the result says so and carries the install commands the
 * notification offers. After `initialize`, {@link checkServerInfo} compares the server's
 * `serverInfo` (LSP 3.15 `InitializeResult.serverInfo`) with {@link MIN_SERVER_VERSION}.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** Commands that install the server from a checkout of pi-lsp (it is not on PyPI), shown when it is missing. */
export const INSTALL_COMMANDS = ['pipx install /path/to/pi-lsp', 'uv tool install /path/to/pi-lsp'];

/** Oldest server version with the `pi/*` methods this extension calls (`pi/prompt`, `pi/event`). */
export const MIN_SERVER_VERSION = '0.1.0';

/** The executable's name on `PATH`. */
export const SERVER_NAME = 'pi-lsp';

export type Resolution =
  | { kind: 'found'; command: string; source: 'setting' | 'PATH' }
  | { kind: 'missing'; message: string; installCommands: string[] };

export interface ResolveInput {
  /** `pi.server.path` (user or machine scope only); empty or blank means unset. */
  configuredPath: unknown;
  /** The extension host's `PATH` (`process.env.PATH`). */
  envPath: string | undefined;
  /** Home folder for a leading `~` in the setting. */
  home?: string;
  /** Is this an existing, executable regular file? Default: {@link isExecutableFile}. */
  isExecutable?: (file: string) => boolean;
}

/** `true` when `file` is a regular file the current user may execute. Never throws. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Find the server: the setting first, then `PATH` (searched in order, empty entries skipped).
 *
 * A setting that is set but unusable (not a string, not an executable file) is NOT silently
 * replaced by `PATH`: the user asked for that file, so the message names it.
 */
export function resolveServer(input: ResolveInput): Resolution {
  const isExecutable = input.isExecutable ?? isExecutableFile;
  const install = INSTALL_COMMANDS;
  const configured = input.configuredPath;
  if (configured !== undefined && configured !== null && configured !== '') {
    if (typeof configured !== 'string') {
      return { kind: 'missing', installCommands: install,
        message: `The setting pi.server.path must be a string, not ${JSON.stringify(configured)}.` };
    }
    if (configured.trim() !== '') {
      const file = expandHome(configured.trim(), input.home ?? os.homedir());
      if (isExecutable(file)) {
        return { kind: 'found', command: file, source: 'setting' };
      }
      return { kind: 'missing', installCommands: install,
        message: `The setting pi.server.path is "${configured}", which is not an executable file.` };
    }
  }
  for (const dir of (input.envPath ?? '').split(path.delimiter)) {
    if (dir === '') {
      continue;
    }
    const file = path.join(dir, SERVER_NAME);
    if (isExecutable(file)) {
      return { kind: 'found', command: file, source: 'PATH' };
    }
  }
  return { kind: 'missing', installCommands: install,
    message: `The pi-lsp server was not found on PATH. Install it with "${install[0]}" or "${install[1]}", or set pi.server.path.` };
}

function expandHome(file: string, home: string): string {
  if (file === '~') {
    return home;
  }
  if (file.startsWith('~/')) {
    return path.join(home, file.slice(2));
  }
  return file;
}

/**
 * Compare dotted numeric versions (`"0.10.2"` vs `"0.9"`): negative, zero or positive.
 * A pre-release or build suffix (`-rc1`, `+local`, `.dev3`) is ignored; missing parts count as 0.
 */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/[-+]/)[0].split('.').map((p) => parseInt(p, 10) || 0);
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return 0;
}

/**
 * A problem with the server's `serverInfo`, or `undefined` when it is pi-lsp at least
 * {@link MIN_SERVER_VERSION}. `serverInfo` is optional in LSP, so its absence is a problem too:
 * the extension cannot know the server speaks `pi/*`.
 */
export function checkServerInfo(
  serverInfo: { name?: unknown; version?: unknown } | undefined, minVersion = MIN_SERVER_VERSION,
): string | undefined {
  if (!serverInfo || serverInfo.name !== SERVER_NAME) {
    const name = serverInfo && typeof serverInfo.name === 'string' ? `"${serverInfo.name}"` : 'a server without serverInfo';
    return `The configured server is ${name}, not pi-lsp; Pi's commands need pi-lsp ${minVersion} or later.`;
  }
  if (typeof serverInfo.version !== 'string' || compareVersions(serverInfo.version, minVersion) < 0) {
    return `pi-lsp ${String(serverInfo.version ?? '(unknown version)')} is too old; this extension needs ${minVersion} or later (upgrade: "pipx upgrade pi-lsp" or "uv tool upgrade pi-lsp").`;
  }
  return undefined;
}
