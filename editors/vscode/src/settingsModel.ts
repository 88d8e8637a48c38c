/**
 * The `pi.*` settings of VS Code turned into the server's `pi` section (design.md section 5).
 *
 * Pure logic (no `vscode` import). The client calls {@link serverSettings} with a reader that
 * returns each key's value: for the keys that can leak a key or widen rights ({@link
 * USER_SCOPE_KEYS}) only the user (global) value, never a workspace's own settings files; for the
 * lists a workspace adds to ({@link UNION_KEYS}) every scope's list; for the others the effective
 * value. A value of the wrong type is reported and left out, so the server's
 * default applies (issue 8: "invalid settings reported, defaults used"); the server validates
 * ranges again and reports what it rejects.
 */

/**
 * Settings only honoured from user scope (`"scope": "application"` in package.json); also listed in
 * `restrictedConfigurations`. A workspace's own settings must not redirect prompts (`provider`
 * changes the default endpoint), leak a key (`apiKeyEnv`), widen what the model may do
 * (`approvals`, `bash.sandbox: "off"`) or let other local agents drive this editor (`externalSocket`).
 */
export const USER_SCOPE_KEYS = [
  'provider', 'baseUrl', 'apiKeyEnv', 'approvals', 'bash.sandbox', 'externalSocket', 'server.path', 'server.args',
];

/**
 * Lists a workspace adds to instead of replacing: a workspace can protect more paths, never drop
 * the ones the user protects.
 */
export const UNION_KEYS = ['protectedPaths'];

/** The environment variable that carries a key stored with `Pi: Set API Key` when `pi.apiKeyEnv` is unset. */
export const DEFAULT_API_KEY_ENV = 'PI_API_KEY';

type Check = (value: unknown) => boolean;

const isString: Check = (v) => typeof v === 'string';
const isNumber: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const isPositive: Check = (v) => isNumber(v) && (v as number) > 0;
const isBoolean: Check = (v) => typeof v === 'boolean';
const isStringList: Check = (v) => Array.isArray(v) && v.every(isString);
const isObject: Check = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const orNull = (check: Check): Check => (v) => v === null || check(v);
const atLeast = (min: number): Check => (v) => isNumber(v) && (v as number) >= min;
const integerAtLeast = (min: number): Check => (v) => Number.isInteger(v) && (v as number) >= min;
const oneOf = (...values: unknown[]): Check => (v) => values.includes(v);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Spec {
  /** VS Code key below `pi.` (dotted), also the path in the server's section. */
  key: string;
  check: Check;
  /** What a valid value looks like, for the message. */
  expected: string;
  /** An empty string means "unset" (VS Code string settings cannot be null). */
  emptyIsUnset?: boolean;
}

/**
 * Every setting of the server's `pi` section, in the server's order (pi_lsp/daemon/settings.py;
 * tests/editors/test_vscode_settings.py fails when one is missing here or in package.json). The
 * `server.*` keys are the extension's own and are not sent. `approvals` is one object setting:
 * its `rules` are a list of objects, edited in settings.json.
 */
export const SPECS: Spec[] = [
  { key: 'provider', check: oneOf('openai', 'anthropic'), expected: '"openai" or "anthropic"' },
  // model and baseUrl are sent as given: the server checks them, reports a bad one and, refusing a
  // prompt, says it is invalid and why; left out here, the server would say it "is not set"
  { key: 'model', check: () => true, expected: 'a string', emptyIsUnset: true },
  { key: 'baseUrl', check: () => true, expected: 'an http(s) URL', emptyIsUnset: true },
  { key: 'apiKeyEnv', check: (v) => isString(v) && ENV_NAME.test(v as string), expected: 'an environment variable name', emptyIsUnset: true },
  { key: 'activeTools', check: orNull(isStringList), expected: 'a list of tool names or null' },
  { key: 'maxTurns', check: integerAtLeast(1), expected: 'an integer >= 1' },
  { key: 'edit.route', check: oneOf(null, 'editor', 'openDocuments'), expected: '"editor", "openDocuments" or null' },
  { key: 'edit.applyTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'edit.verifyTimeoutSeconds', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'edit.review', check: oneOf('after', 'before'), expected: '"after" or "before"' },
  { key: 'edit.reviewTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'bash.timeoutSeconds', check: orNull(isPositive), expected: 'a number > 0 or null' },
  { key: 'bash.sandbox', check: oneOf('auto', 'required', 'off'), expected: '"auto", "required" or "off"' },
  { key: 'approvals', check: isObject, expected: 'an object' },
  { key: 'changes.maxFileBytes', check: integerAtLeast(0), expected: 'an integer >= 0' },
  { key: 'changes.maxTotalBytes', check: integerAtLeast(0), expected: 'an integer >= 0' },
  { key: 'changes.gitTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'changes.blobGraceMinutes', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'changes.confirmTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'protectedPaths', check: isStringList, expected: 'a list of glob patterns' },
  // the provider's retries and timeouts
  { key: 'maxRetries', check: integerAtLeast(0), expected: 'an integer >= 0' },
  { key: 'backoffInitialSeconds', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'backoffMaxSeconds', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'connectTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'readTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'progressTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'externalSocket', check: isBoolean, expected: 'true or false' },
  { key: 'maxTokens', check: orNull(integerAtLeast(1)), expected: 'an integer >= 1 or null' },
  { key: 'thinking', check: (v) => v === 0 || integerAtLeast(1024)(v), expected: '0 or an integer >= 1024' },
  { key: 'contextWindow', check: orNull(integerAtLeast(1)), expected: 'an integer >= 1 or null' },
  { key: 'compaction.enabled', check: isBoolean, expected: 'true or false' },
  { key: 'compaction.reserveTokens', check: integerAtLeast(0), expected: 'an integer >= 0' },
  { key: 'compaction.keepRecentTokens', check: integerAtLeast(0), expected: 'an integer >= 0' },
  // issue 17: the language-server tools and diagnostics after edits
  { key: 'languageServer.timeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'diagnostics.afterEdit', check: isBoolean, expected: 'true or false' },
  { key: 'diagnostics.settleSeconds', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'diagnostics.quietSeconds', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'diagnostics.maxItems', check: integerAtLeast(1), expected: 'an integer >= 1' },
  { key: 'nudge.afterSeconds', check: atLeast(0), expected: 'a number >= 0' },
  { key: 'nudge.trailing', check: integerAtLeast(0), expected: 'an integer >= 0' },
];

/**
 * Where a value is read from: `user` settings only; the `innermost` scope that sets it (folder,
 * workspace, user); `every` scope that sets it (an array of their values, user first).
 */
export type Scope = 'user' | 'innermost' | 'every';

/** Reads one key below `pi.`; `undefined` (`[]` for `every`) when it is not set where it counts. */
export type Reader = (key: string, scope: Scope) => unknown;

export interface ServerSettings {
  /** The server's `pi` section (nested: `edit.route` becomes `{edit: {route}}`). */
  settings: Record<string, unknown>;
  /** One message per rejected value, naming the setting, the value and what was expected. */
  problems: string[];
}

/**
 * Build the server's `pi` section. `storedKey` says whether `Pi: Set API Key` stored a key: then
 * `apiKeyEnv` defaults to {@link DEFAULT_API_KEY_ENV}, the variable the client fills.
 */
export function serverSettings(read: Reader, storedKey = false): ServerSettings {
  const settings: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const spec of SPECS) {
    if (UNION_KEYS.includes(spec.key)) {
      const given = read(spec.key, 'every');
      const lists = Array.isArray(given) ? given : [];
      const good = lists.filter((value) => spec.check(value)) as unknown[][];
      for (const value of lists.filter((value) => !spec.check(value))) {
        problems.push(`pi.${spec.key}: expected ${spec.expected}, got ${short(value)}; left out.`);
      }
      if (good.length > 0) {
        setPath(settings, spec.key.split('.'), [...new Set(good.flat())]);
      }
      continue;
    }
    const value = read(spec.key, USER_SCOPE_KEYS.includes(spec.key) ? 'user' : 'innermost');
    if (value === undefined || (spec.emptyIsUnset && value === '')) {
      continue;
    }
    if (!spec.check(value)) {
      problems.push(`pi.${spec.key}: expected ${spec.expected}, got ${short(value)}; using the default.`);
      continue;
    }
    setPath(settings, spec.key.split('.'), value);
  }
  if (storedKey && settings.apiKeyEnv === undefined) {
    settings.apiKeyEnv = DEFAULT_API_KEY_ENV;
  }
  return { settings, problems };
}

/**
 * The server process's environment: the extension host's, plus the stored API key in the
 * variable the settings name (a VS Code started from a desktop launcher does not see the shell's
 * variables, issue 8).
 */
export function serverEnvironment(
  base: NodeJS.ProcessEnv, settings: Record<string, unknown>, apiKey: string | undefined,
): NodeJS.ProcessEnv {
  const env = { ...base };
  if (apiKey) {
    const name = typeof settings.apiKeyEnv === 'string' ? settings.apiKeyEnv : DEFAULT_API_KEY_ENV;
    env[name] = apiKey;
  }
  return env;
}

function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const key of keys.slice(0, -1)) {
    if (!isObject(node[key])) {
      node[key] = {};
    }
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length <= 60 ? text : `${text.slice(0, 57)}...`;
}
