/**
 * The VS Code-free half of issue 17's editor side (the wire contract: README "Wire contract",
 * `pi/languageRequest`, `pi/diagnostics`, `pi/diagnosticsChanged`): parsing pi-lsp's requests,
 * converting VS Code's answers to LSP JSON, naming the answering extensions, and coalescing change
 * notifications. Pure functions over structural shapes, so `node --test` covers them without VS Code;
 * `languageKnowledge.ts` feeds them the real objects and `client.code2ProtocolConverter`.
 *
 * Positions: VS Code's are UTF-16 code units, 0-based lines, which is also the encoding
 * vscode-languageclient negotiates with pi-lsp (it offers only `utf-16`), so they pass unchanged.
 */

/** The `textDocument/*` methods the extension answers through `pi/languageRequest`, with the VS Code command for each. */
export const LANGUAGE_COMMANDS: Readonly<Record<string, string>> = {
  'textDocument/definition': 'vscode.executeDefinitionProvider',
  'textDocument/references': 'vscode.executeReferenceProvider',
  'textDocument/rename': 'vscode.executeDocumentRenameProvider',
  'textDocument/documentSymbol': 'vscode.executeDocumentSymbolProvider',
  'textDocument/hover': 'vscode.executeHoverProvider',
};

/** `capabilities.experimental.pi` entries for issue 17 (merged into the other `pi` capabilities). */
export const KNOWLEDGE_CAPABILITIES = { diagnostics: true, languageRequests: Object.keys(LANGUAGE_COMMANDS) };

/** JSON-RPC error codes used in replies (LSP spec). */
export const INVALID_PARAMS = -32602;
export const REQUEST_FAILED = -32803;
export const REQUEST_CANCELLED = -32800;

/** Most time spent waiting for a document's language extensions to activate (ms): then the answer is `servers: []`. */
export const ATTACH_TIMEOUT_MS = 5000;
/** Most time a `pi/languageRequest` waits for VS Code's providers (ms); pi-lsp cancels earlier by its own setting. */
export const PROVIDER_TIMEOUT_MS = 30000;
/** Longest delay of a `pi/diagnosticsChanged` after the first change it reports (ms; the contract allows 50). */
export const DIAGNOSTICS_COALESCE_MS = 50;

export interface LspPosition { line: number; character: number }
export interface LspRange { start: LspPosition; end: LspPosition }

/** A parsed `pi/languageRequest`: the document, the position (UTF-16, 0-based) and the rename's new name. */
export interface LanguageRequest {
  method: string;
  command: string;
  uri: string;
  position?: LspPosition;
  newName?: string;
}

/**
 * Parse `pi/languageRequest` params `{method, params}`. Returns the request or a message saying what is
 * wrong (the caller replies InvalidParams). `position` is required except for documentSymbol, `newName`
 * (a non-empty string) for rename.
 */
export function parseLanguageRequest(value: unknown): LanguageRequest | string {
  if (!isObject(value) || typeof value.method !== 'string') {
    return 'pi/languageRequest needs {method, params}';
  }
  const command = LANGUAGE_COMMANDS[value.method];
  if (!command) {
    return `the editor does not answer ${value.method} (it answers ${Object.keys(LANGUAGE_COMMANDS).join(', ')})`;
  }
  const params = value.params;
  const uri = isObject(params) && isObject(params.textDocument) ? params.textDocument.uri : undefined;
  if (typeof uri !== 'string' || uri === '') {
    return `${value.method}: params.textDocument.uri is missing`;
  }
  const request: LanguageRequest = { method: value.method, command, uri };
  if (value.method !== 'textDocument/documentSymbol') {
    const position = (params as Record<string, unknown>).position;
    if (!isPosition(position)) {
      return `${value.method}: params.position must be {line, character} with integers >= 0`;
    }
    request.position = { line: position.line, character: position.character };
  }
  if (value.method === 'textDocument/rename') {
    const newName = (params as Record<string, unknown>).newName;
    if (typeof newName !== 'string' || newName === '') {
      return 'textDocument/rename: params.newName must be a non-empty string';
    }
    request.newName = newName;
  }
  return request;
}

/** What the extension needs to know of an installed extension (a slice of `vscode.Extension`). */
export interface ExtensionInfo {
  id: string;
  isActive: boolean;
  packageJSON: { displayName?: unknown; name?: unknown; main?: unknown; activationEvents?: unknown; contributes?: unknown };
}

/**
 * The extensions that serve `languageId` as VS Code knows them: extensions with code (`main`) whose
 * activation events name `onLanguage:<languageId>` or that contribute the language (VS Code activates
 * those for it implicitly), except `ownId` (pi-lsp). VS Code never says which
 * extension's provider answered a `vscode.execute*Provider` command, so these are the best honest names
 * of the document's language servers. Named by `displayName` (else `name`, else the id), in the order given.
 */
export function languageExtensions(languageId: string, extensions: readonly ExtensionInfo[], ownId: string): ExtensionInfo[] {
  const event = `onLanguage:${languageId}`;
  const contributes = (e: ExtensionInfo) => {
    const c = e.packageJSON.contributes;
    return isObject(c) && Array.isArray(c.languages) && c.languages.some((l: unknown) => isObject(l) && l.id === languageId);
  };
  return extensions.filter((e) => e.id.toLowerCase() !== ownId.toLowerCase()
    && typeof e.packageJSON.main === 'string'
    && ((Array.isArray(e.packageJSON.activationEvents) && e.packageJSON.activationEvents.includes(event)) || contributes(e)));
}

export function extensionName(e: ExtensionInfo): string {
  const { displayName, name } = e.packageJSON;
  return typeof displayName === 'string' && displayName ? displayName : typeof name === 'string' && name ? name : e.id;
}

/** The name used when a provider answered but no extension is known for the language (built-in or `*`-activated). */
export const UNNAMED_PROVIDER = 'VS Code language features';

/**
 * `servers` of a reply: the active extensions of the document's language (see {@link languageExtensions});
 * when none is known, `[UNNAMED_PROVIDER]` if some provider answered, else `[]` (no language server).
 */
export function serverNames(active: readonly ExtensionInfo[], answered: boolean): string[] {
  const names = active.filter((e) => e.isActive).map(extensionName);
  return names.length > 0 ? names : answered ? [UNNAMED_PROVIDER] : [];
}

/** Converts VS Code values (given structurally) to LSP JSON; `client.code2ProtocolConverter` in the extension. */
export interface Converter {
  asUri(uri: unknown): string;
  asRange(range: unknown): LspRange;
  asSymbolKind(kind: number): number;
}

export interface CodeLocation { uri: unknown; range: unknown }
export interface CodeLocationLink { targetUri: unknown; targetRange: unknown; targetSelectionRange?: unknown; originSelectionRange?: unknown }

/**
 * Definition / references: VS Code's `Location`s and `LocationLink`s (one list, all providers) as LSP
 * `Location` / `LocationLink` JSON, de-duplicated by uri + range (a link by its target selection range),
 * in VS Code's order. `null` when there is none.
 */
export function locationsResult(items: unknown, c: Converter): unknown[] | null {
  if (!Array.isArray(items)) {
    return null;
  }
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const item of items) {
    let lsp: Record<string, unknown>;
    let key: string;
    if (isObject(item) && 'targetUri' in item) {
      const link = item as unknown as CodeLocationLink;
      const targetRange = c.asRange(link.targetRange);
      const targetSelectionRange = link.targetSelectionRange ? c.asRange(link.targetSelectionRange) : targetRange;
      lsp = { targetUri: c.asUri(link.targetUri), targetRange, targetSelectionRange };
      if (link.originSelectionRange) {
        lsp.originSelectionRange = c.asRange(link.originSelectionRange);
      }
      key = JSON.stringify([lsp.targetUri, targetSelectionRange]);
    } else if (isObject(item) && 'uri' in item && 'range' in item) {
      lsp = { uri: c.asUri(item.uri), range: c.asRange(item.range) };
      key = JSON.stringify([lsp.uri, lsp.range]);
    } else {
      continue;
    }
    if (!seen.has(key)) {
      seen.add(key);
      out.push(lsp);
    }
  }
  return out.length > 0 ? out : null;
}

/**
 * Document symbols: VS Code answers `DocumentSymbol`s (which it also dresses as `SymbolInformation`)
 * or plain `SymbolInformation`s. A symbol with `selectionRange` and `children` becomes an LSP
 * `DocumentSymbol` (nested), one with only `location` an LSP `SymbolInformation`. `null` when none.
 */
export function symbolsResult(items: unknown, c: Converter): unknown[] | null {
  if (!Array.isArray(items) || items.length === 0) {
    return null;
  }
  const asDocumentSymbol = (s: Record<string, any>): Record<string, unknown> => {
    const out: Record<string, unknown> = {
      name: String(s.name), kind: c.asSymbolKind(s.kind), range: c.asRange(s.range), selectionRange: c.asRange(s.selectionRange),
      children: Array.isArray(s.children) ? s.children.filter(isObject).map(asDocumentSymbol) : [],
    };
    if (typeof s.detail === 'string' && s.detail) {
      out.detail = s.detail;
    }
    if (Array.isArray(s.tags) && s.tags.length > 0) {
      out.tags = s.tags;
    }
    return out;
  };
  return items.filter(isObject).map((s) => {
    if ('selectionRange' in s && 'range' in s) {
      return asDocumentSymbol(s);
    }
    const out: Record<string, unknown> = {
      name: String(s.name), kind: c.asSymbolKind(s.kind),
      location: { uri: c.asUri(s.location?.uri), range: c.asRange(s.location?.range) },
    };
    if (typeof s.containerName === 'string' && s.containerName) {
      out.containerName = s.containerName;
    }
    return out;
  });
}

/**
 * Hover: the first of VS Code's hovers (one per provider) with any text, as an LSP `Hover` whose
 * contents are Markdown (`MarkdownString`s as they are, `{language, value}` as a fenced block, plain
 * strings as Markdown, joined by blank lines). `null` when no hover has text.
 */
export function hoverResult(items: unknown, c: Converter): unknown | null {
  if (!Array.isArray(items)) {
    return null;
  }
  for (const hover of items) {
    if (!isObject(hover)) {
      continue;
    }
    const parts = (Array.isArray(hover.contents) ? hover.contents : [hover.contents]).map(markdownOf).filter((t) => t.trim() !== '');
    if (parts.length === 0) {
      continue;
    }
    const out: Record<string, unknown> = { contents: { kind: 'markdown', value: parts.join('\n\n') } };
    if (hover.range) {
      out.range = c.asRange(hover.range);
    }
    return out;
  }
  return null;
}

function markdownOf(part: unknown): string {
  if (typeof part === 'string') {
    return part;
  }
  if (isObject(part) && typeof part.value === 'string') {
    return typeof part.language === 'string' ? `\`\`\`${part.language}\n${part.value}\n\`\`\`` : part.value;
  }
  return '';
}

/**
 * Rename: VS Code's `WorkspaceEdit` as its `entries()` (`[uri, TextEdit[]]` pairs; VS Code's API does
 * not expose file operations there) to an LSP `WorkspaceEdit` `{changes: {uri: TextEdit[]}}`. `null`
 * when it changes nothing.
 */
export function renameResult(entries: readonly (readonly [unknown, readonly { range: unknown; newText: string }[]])[] | undefined, c: Converter): unknown | null {
  const changes: Record<string, { range: LspRange; newText: string }[]> = {};
  let count = 0;
  for (const [uri, edits] of entries ?? []) {
    if (edits.length === 0) {
      continue;
    }
    const key = c.asUri(uri);
    changes[key] = [...(changes[key] ?? []), ...edits.map((e) => ({ range: c.asRange(e.range), newText: e.newText }))];
    count += edits.length;
  }
  return count > 0 ? { changes } : null;
}

/**
 * The diagnostics of a document except pi-lsp's own: `all` (every collection, as
 * `languages.getDiagnostics(uri)` gives them) minus `own` (pi-lsp's collection) as a multiset, items
 * compared by `key` (range, severity, message, source, code).
 */
export function withoutOwn<T>(all: readonly T[], own: readonly T[], key: (d: T) => string): T[] {
  if (own.length === 0) {
    return [...all];
  }
  const left = new Map<string, number>();
  for (const d of own) {
    const k = key(d);
    left.set(k, (left.get(k) ?? 0) + 1);
  }
  return all.filter((d) => {
    const k = key(d);
    const n = left.get(k) ?? 0;
    if (n > 0) {
      left.set(k, n - 1);
      return false;
    }
    return true;
  });
}

/** Timers, injectable so the coalescer is tested without waiting. */
export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = { set: (fn, ms) => setTimeout(fn, ms), clear: (h) => clearTimeout(h as NodeJS.Timeout) };

/**
 * Collects uris and hands them to `send` at most `delayMs` after the first one arrived (one call per
 * window, each uri once, in arrival order), with the versions that date them (`pi/diagnosticsChanged`
 * `versions`): per uri the newest given, none when one of its changes had none (`versions` is
 * undefined when no uri has one). `dispose` drops what is pending.
 */
export class UriCoalescer {
  private pending: string[] = [];
  private versions = new Map<string, number | null>();
  private handle: unknown;

  constructor(private readonly send: (uris: string[], versions?: Record<string, number>) => void,
    private readonly delayMs = DIAGNOSTICS_COALESCE_MS, private readonly timers: Timers = realTimers) {}

  add(uris: Iterable<string>, versionOf: (uri: string) => number | undefined = () => undefined): void {
    for (const uri of uris) {
      const version = versionOf(uri) ?? null;
      if (!this.pending.includes(uri)) {
        this.pending.push(uri);
        this.versions.set(uri, version);
      } else {
        const known = this.versions.get(uri) ?? null;
        this.versions.set(uri, known === null || version === null ? null : Math.max(known, version));
      }
    }
    if (this.pending.length > 0 && this.handle === undefined) {
      this.handle = this.timers.set(() => this.flush(), this.delayMs);
    }
  }

  flush(): void {
    if (this.handle !== undefined) {
      this.timers.clear(this.handle);
      this.handle = undefined;
    }
    const uris = this.pending;
    const dated = this.versions;
    this.pending = [];
    this.versions = new Map();
    if (uris.length > 0) {
      let versions: Record<string, number> | undefined;
      for (const uri of uris) {
        const version = dated.get(uri);
        if (typeof version === 'number') {
          versions = { ...versions, [uri]: version };
        }
      }
      this.send(uris, versions);
    }
  }

  dispose(): void {
    if (this.handle !== undefined) {
      this.timers.clear(this.handle);
    }
    this.handle = undefined;
    this.pending = [];
    this.versions = new Map();
  }
}

/** Why {@link bounded} gave up: pi-lsp cancelled (`cancelled`) or the time ran out. */
export class BoundExceeded extends Error {
  constructor(message: string, readonly cancelled: boolean) {
    super(message);
  }
}

/** The slice of a `CancellationToken` {@link bounded} needs. */
export interface Cancellation {
  isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

/**
 * `work`'s value, unless `token` is cancelled first or `ms` pass (then a {@link BoundExceeded}): the
 * extension never leaves pi-lsp waiting on a provider that does not answer. `work` itself cannot be
 * stopped (VS Code's commands take no token); its late answer is dropped.
 */
export async function bounded<T>(work: PromiseLike<T>, token: Cancellation, ms: number, timers: Timers = realTimers): Promise<T> {
  let handle: unknown;
  let listener: { dispose(): void } | undefined;
  const stop = new Promise<never>((_, reject) => {
    if (token.isCancellationRequested) {
      reject(new BoundExceeded('cancelled by pi-lsp', true));
      return;
    }
    handle = timers.set(() => reject(new BoundExceeded(`no answer from the language servers within ${ms / 1000} s`, false)), ms);
    listener = token.onCancellationRequested(() => reject(new BoundExceeded('cancelled by pi-lsp', true)));
  });
  try {
    return await Promise.race([Promise.resolve(work), stop]);
  } finally {
    if (handle !== undefined) {
      timers.clear(handle);
    }
    listener?.dispose();
  }
}

function isPosition(value: unknown): value is LspPosition {
  return isObject(value) && Number.isInteger(value.line) && Number.isInteger(value.character)
    && (value.line as number) >= 0 && (value.character as number) >= 0;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
