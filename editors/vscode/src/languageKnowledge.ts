/**
 * Issue 17, the editor's knowledge for the model: VS Code answers pi-lsp's `pi/languageRequest` and
 * `pi/diagnostics` from the language servers it already runs, and sends `pi/diagnosticsChanged`
 * (wire contract: README "Wire contract"; the pure half is `knowledgeModel.ts`).
 *
 * - `capabilities.experimental.pi.diagnostics: true` and `.languageRequests` (the five methods of
 *   {@link LANGUAGE_COMMANDS}) are added to `initialize` by {@link LanguageKnowledgeFeature}.
 * - `pi/languageRequest {method, params}` runs the matching `vscode.execute*Provider` command on the
 *   document (loaded with `workspace.openTextDocument` when VS Code has not, which neither shows it nor
 *   marks it modified), after the extensions of its language have activated (at most
 *   {@link ATTACH_TIMEOUT_MS}). Positions are UTF-16, as VS Code's and as negotiated with pi-lsp. The
 *   answer is `{servers, result}`: `result` in LSP JSON (definition/references: every provider's
 *   locations, de-duplicated; rename/hover/documentSymbol: VS Code's first non-empty answer).
 *   VS Code does not say which extension's provider answered, so `servers` names the active extensions
 *   activated by `onLanguage:<languageId>` or contributing the language (pi-lsp excluded); when there is none it is
 *   `["VS Code language features"]` if some provider answered, else `[]`, which pi-lsp reports as "no
 *   language server for this file". pi-lsp registers none of these five providers, so VS Code's answers
 *   never include its own. A provider's error (a rename VS Code rejects) is a -32803 reply
 *   `"<server>: <message>"`; pi-lsp's `$/cancelRequest` ends the wait (-32800), and so does
 *   {@link PROVIDER_TIMEOUT_MS} (-32803).
 * - `pi/diagnostics {uris?}` answers `languages.getDiagnostics` without pi-lsp's own collection, as LSP
 *   `Diagnostic`s; named documents are loaded as above; without `uris`, every file of the workspace
 *   folders that has any.
 * - `languages.onDidChangeDiagnostics` becomes `pi/diagnosticsChanged {uris, versions?}` (file uris,
 *   coalesced for at most {@link DIAGNOSTICS_COALESCE_MS}); a change of pi-lsp's own collection alone is
 *   not reported. VS Code's diagnostics API keeps no `publishDiagnostics` version, so a change of an open
 *   document is dated with the document's version when VS Code reported it (the version
 *   vscode-languageclient sent pi-lsp): an upper bound, which keeps a report that came before an agent
 *   edit landed from counting for it, but cannot tell a report about the old text that arrives after
 *   the edit (pi-lsp's `diagnostics.quietSeconds` covers that).
 */
import * as vscode from 'vscode';
import { LanguageClient, ResponseError, State, StaticFeature } from 'vscode-languageclient/node';
import {
  ATTACH_TIMEOUT_MS, BoundExceeded, Converter, ExtensionInfo, INVALID_PARAMS, KNOWLEDGE_CAPABILITIES, PROVIDER_TIMEOUT_MS, REQUEST_FAILED,
  REQUEST_CANCELLED, UNNAMED_PROVIDER, UriCoalescer, bounded, hoverResult, languageExtensions, locationsResult, parseLanguageRequest, renameResult,
  serverNames, symbolsResult, withoutOwn,
} from './knowledgeModel';

/** Adds issue 17's entries to `capabilities.experimental.pi` (after the other `pi` capabilities are set). */
export class LanguageKnowledgeFeature implements StaticFeature {
  fillClientCapabilities(capabilities: any): void {
    const experimental = capabilities.experimental ?? {};
    capabilities.experimental = { ...experimental, pi: { ...(experimental.pi ?? {}), ...KNOWLEDGE_CAPABILITIES } };
  }
  initialize(): void {}
  getState() {
    return { kind: 'static' as const };
  }
  clear(): void {}
}

/**
 * Register the two request handlers on `client` (before it starts) and return the disposable that
 * forwards diagnostics changes while the client runs. `ownId` is pi-lsp's extension id.
 */
export function registerLanguageKnowledge(client: LanguageClient, ownId: string): vscode.Disposable {
  const knowledge = new LanguageKnowledge(client, ownId);
  client.onRequest('pi/languageRequest', (params, token) => knowledge.languageRequest(params, token));
  client.onRequest('pi/diagnostics', (params) => knowledge.diagnostics(params));
  return knowledge;
}

class LanguageKnowledge implements vscode.Disposable {
  private readonly coalescer: UriCoalescer;
  private readonly listener: vscode.Disposable;
  /** Per uri with pi-lsp diagnostics: the last [own, others] keys seen, to tell an own-only change. */
  private readonly lastSeen = new Map<string, [string, string]>();

  constructor(private readonly client: LanguageClient, private readonly ownId: string) {
    this.coalescer = new UriCoalescer((uris, versions) => {
      if (this.client.state === State.Running) {
        void this.client.sendNotification('pi/diagnosticsChanged', versions ? { uris, versions } : { uris });
      }
    });
    this.listener = vscode.languages.onDidChangeDiagnostics((event) => this.changed(event.uris));
  }

  dispose(): void {
    this.listener.dispose();
    this.coalescer.dispose();
  }

  async languageRequest(params: unknown, token: vscode.CancellationToken): Promise<{ servers: string[]; result: unknown }> {
    const request = parseLanguageRequest(params);
    if (typeof request === 'string') {
      throw new ResponseError(INVALID_PARAMS, request);
    }
    const uri = this.parseUri(request.uri);
    const doc = await this.load(uri);
    const extensions = await this.attach(doc);
    const c = this.converter();
    const args: unknown[] = [uri];
    if (request.position) {
      args.push(new vscode.Position(request.position.line, request.position.character));
    }
    if (request.newName !== undefined) {
      args.push(request.newName);
    }
    let raw: unknown;
    try {
      raw = await bounded(vscode.commands.executeCommand(request.command, ...args), token, PROVIDER_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof BoundExceeded) {
        throw new ResponseError(error.cancelled ? REQUEST_CANCELLED : REQUEST_FAILED, error.message);
      }
      const names = serverNames(extensions, true);
      throw new ResponseError(REQUEST_FAILED, `${names.join(', ') || UNNAMED_PROVIDER}: ${error instanceof Error ? error.message : String(error)}`);
    }
    let result: unknown;
    switch (request.method) {
      case 'textDocument/definition':
      case 'textDocument/references':
        result = locationsResult(raw, c);
        break;
      case 'textDocument/documentSymbol':
        result = symbolsResult(raw, c);
        break;
      case 'textDocument/hover':
        result = hoverResult(raw, c);
        break;
      default:
        result = renameResult(raw instanceof vscode.WorkspaceEdit ? raw.entries() : undefined, c);
    }
    return { servers: serverNames(extensions, result !== null), result };
  }

  async diagnostics(params: unknown): Promise<{ documents: unknown[] }> {
    const named = isObject(params) && Array.isArray(params.uris) ? params.uris.filter((u): u is string => typeof u === 'string') : undefined;
    const documents: unknown[] = [];
    if (named) {
      for (const text of named) {
        const uri = this.parseUri(text);
        let doc: vscode.TextDocument;
        try {
          doc = await this.load(uri);
        } catch {
          documents.push({ uri: text, version: null, servers: [], diagnostics: [] });
          continue;
        }
        const extensions = await this.attach(doc);
        const diagnostics = this.foreignDiagnostics(uri);
        documents.push({
          uri: text, version: doc.version, servers: serverNames(extensions, diagnostics.length > 0),
          diagnostics: await this.client.code2ProtocolConverter.asDiagnostics(diagnostics),
        });
      }
      return { documents };
    }
    for (const [uri] of vscode.languages.getDiagnostics()) {
      if (uri.scheme !== 'file' || !vscode.workspace.getWorkspaceFolder(uri)) {
        continue;
      }
      const diagnostics = this.foreignDiagnostics(uri);
      if (diagnostics.length === 0) {
        continue;
      }
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      const extensions = doc ? languageExtensions(doc.languageId, this.extensions(), this.ownId) : [];
      documents.push({
        uri: this.client.code2ProtocolConverter.asUri(uri), version: doc?.version ?? null, servers: serverNames(extensions, true),
        diagnostics: await this.client.code2ProtocolConverter.asDiagnostics(diagnostics),
      });
    }
    return { documents };
  }

  private changed(uris: readonly vscode.Uri[]): void {
    const report: string[] = [];
    const versions = new Map<string, number>();
    for (const uri of uris) {
      if (uri.scheme !== 'file') {
        continue;
      }
      const key = uri.toString();
      const own = this.client.diagnostics?.get(uri) ?? [];
      const previous = this.lastSeen.get(key);
      if (own.length > 0 || previous) {
        const now: [string, string] = [own.map(diagnosticKey).join('\n'), this.foreignDiagnostics(uri).map(diagnosticKey).join('\n')];
        if (own.length > 0) {
          this.lastSeen.set(key, now);
        } else {
          this.lastSeen.delete(key);
        }
        if (previous && previous[0] !== now[0] && previous[1] === now[1]) {
          continue; // only pi-lsp's own diagnostics changed
        }
      }
      const reported = this.client.code2ProtocolConverter.asUri(uri);
      report.push(reported);
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
      if (doc && !doc.isClosed) {
        versions.set(reported, doc.version);
      }
    }
    this.coalescer.add(report, (reported) => versions.get(reported));
  }

  private foreignDiagnostics(uri: vscode.Uri): vscode.Diagnostic[] {
    return withoutOwn(vscode.languages.getDiagnostics(uri), this.client.diagnostics?.get(uri) ?? [], diagnosticKey);
  }

  private parseUri(text: string): vscode.Uri {
    try {
      return this.client.protocol2CodeConverter.asUri(text);
    } catch (error) {
      throw new ResponseError(INVALID_PARAMS, `not a uri: ${text}`);
    }
  }

  /** The document VS Code holds for `uri`, loaded (not shown) when it holds none. */
  private async load(uri: vscode.Uri): Promise<vscode.TextDocument> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    if (open) {
      return open;
    }
    try {
      return await vscode.workspace.openTextDocument(uri);
    } catch (error) {
      throw new ResponseError(REQUEST_FAILED, `cannot open ${uri.fsPath}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Wait (at most ATTACH_TIMEOUT_MS) for the extensions of the document's language to activate; they are its servers. */
  private async attach(doc: vscode.TextDocument): Promise<ExtensionInfo[]> {
    const found = languageExtensions(doc.languageId, this.extensions(), this.ownId);
    const waiting = found.filter((e) => !e.isActive);
    if (waiting.length > 0) {
      const all = vscode.extensions.all;
      const activations = waiting.map((e) => Promise.resolve(all.find((x) => x.id === e.id)?.activate()).catch(() => undefined));
      await Promise.race([Promise.all(activations), delay(ATTACH_TIMEOUT_MS)]);
    }
    return found.map((e) => vscode.extensions.getExtension(e.id) ?? e);
  }

  private extensions(): readonly ExtensionInfo[] {
    return vscode.extensions.all;
  }

  private converter(): Converter {
    const c2p = this.client.code2ProtocolConverter;
    return {
      asUri: (uri) => c2p.asUri(uri as vscode.Uri),
      asRange: (range) => c2p.asRange(range as vscode.Range),
      asSymbolKind: (kind) => c2p.asSymbolKind(kind as vscode.SymbolKind),
    };
  }
}

/** Identity of a diagnostic for comparisons: range, severity, message, source, code. */
function diagnosticKey(d: vscode.Diagnostic): string {
  const code = typeof d.code === 'object' && d.code !== null ? d.code.value : d.code;
  const r = d.range;
  return JSON.stringify([r.start.line, r.start.character, r.end.line, r.end.character, d.severity, d.message, d.source ?? null, code ?? null]);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
