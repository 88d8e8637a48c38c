/**
 * The `pi.*` settings of VS Code turned into the server's `pi` section (design.md section 5).
 *
 * Pure logic (no `vscode` import). The client calls {@link serverSettings} with a reader that
 * returns each key's value: for the keys that can leak a key or widen rights ({@link
 * USER_SCOPE_KEYS}) only the user (global) value, never a workspace's own settings files; for the
 * others the effective value. A value of the wrong type is reported and left out, so the server's
 * default applies (issue 8: "invalid settings reported, defaults used"); the server validates
 * ranges again and reports what it rejects.
 */

/** Settings only honoured from user scope; also listed in `restrictedConfigurations`. */
export const USER_SCOPE_KEYS = ['baseUrl', 'apiKeyEnv', 'approvals', 'server.path', 'server.args'];

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

/** Every setting sent to the server (the `server.*` keys are the extension's own). */
export const SPECS: Spec[] = [
  // model and baseUrl are sent as given: the server checks them, reports a bad one and, refusing a
  // prompt, says it is invalid and why; left out here, the server would say it "is not set"
  { key: 'model', check: () => true, expected: 'a string', emptyIsUnset: true },
  { key: 'baseUrl', check: () => true, expected: 'an http(s) URL', emptyIsUnset: true },
  { key: 'apiKeyEnv', check: (v) => isString(v) && ENV_NAME.test(v as string), expected: 'an environment variable name', emptyIsUnset: true },
  { key: 'activeTools', check: orNull(isStringList), expected: 'a list of tool names or null' },
  { key: 'maxTurns', check: (v) => Number.isInteger(v) && (v as number) >= 1, expected: 'an integer >= 1' },
  { key: 'edit.route', check: (v) => v === null || v === 'editor' || v === 'openDocuments', expected: '"editor", "openDocuments" or null' },
  { key: 'edit.applyTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'edit.verifyTimeoutSeconds', check: (v) => isNumber(v) && (v as number) >= 0, expected: 'a number >= 0' },
  { key: 'edit.review', check: (v) => v === 'after' || v === 'before', expected: '"after" or "before"' },
  { key: 'edit.reviewTimeoutSeconds', check: isPositive, expected: 'a number > 0' },
  { key: 'bash.timeoutSeconds', check: orNull(isPositive), expected: 'a number > 0 or null' },
  { key: 'approvals', check: isObject, expected: 'an object' },
  { key: 'protectedPaths', check: isStringList, expected: 'a list of glob patterns' },
  // issue 17: diagnostics after edits and the language-server tools
  { key: 'diagnostics.afterEdit', check: isBoolean, expected: 'true or false' },
  { key: 'diagnostics.settleSeconds', check: (v) => isNumber(v) && (v as number) >= 0, expected: 'a number >= 0' },
  { key: 'diagnostics.quietSeconds', check: (v) => isNumber(v) && (v as number) >= 0, expected: 'a number >= 0' },
  { key: 'diagnostics.maxItems', check: (v) => Number.isInteger(v) && (v as number) >= 1, expected: 'an integer >= 1' },
  { key: 'languageServer.timeoutSeconds', check: isPositive, expected: 'a number > 0' },
];

/** Reads one key below `pi.`; `undefined` when the user did not set it anywhere it counts. */
export type Reader = (key: string, userScopeOnly: boolean) => unknown;

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
    const value = read(spec.key, USER_SCOPE_KEYS.includes(spec.key));
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
