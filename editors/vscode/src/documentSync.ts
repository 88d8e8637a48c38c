/**
 * The editor's side of the four `experimental.pi` capabilities (design.md sections 4 and 5):
 *
 * - `pi/saveDocuments {documents: [{uri, version}]}`: each document is saved with
 *   `TextDocument.save()` only when its version still equals the one the server names (`null`:
 *   a document the agent's edit loaded, saved whatever its version); otherwise it is skipped
 *   with the reason. Reply `{saved: [uri], skipped: [{uri, reason}]}`.
 * - `pi/reloadDocuments {uris}`: only unmodified documents are reloaded from disk (VS Code's
 *   file watcher usually has done it already; else the editor's Revert command re-reads the
 *   file). A modified buffer is never touched. Reply `{reloaded: [uri], skipped: [{uri, reason}]}`.
 * - `pi/documentState {uri, version, dirty}` after every change and save of a synced document, so
 *   the server knows exactly which buffers hold unsaved work.
 * - `editClosedFiles`: VS Code applies edits to files no editor shows (it loads them in memory).
 */
import * as fs from 'fs';
import * as vscode from 'vscode';

export const PI_CAPABILITIES = { saveDocuments: true, reloadDocuments: true, editClosedFiles: true, documentState: true, approvals: true,
  // pi/event for the client's own pi/executeToolCall(s) too: the Pi view shows them
  toolEvents: true };

export interface SaveReply { saved: string[]; skipped: { uri: string; reason: string }[] }
export interface ReloadReply { reloaded: string[]; skipped: { uri: string; reason: string }[] }

/** How long to wait for VS Code's watcher to reload a clean document before reverting it (ms). */
export const RELOAD_WAIT_MS = 1500;

/** The open document a server URI names (URIs compare after VS Code's own normalisation). */
export function findDocument(uri: string): vscode.TextDocument | undefined {
  let wanted: string;
  try {
    wanted = vscode.Uri.parse(uri, true).toString();
  } catch {
    return undefined;
  }
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === wanted);
}

/** Handle `pi/saveDocuments`; `note` receives one transcript line per saved or skipped file. */
export async function saveDocuments(params: unknown, note: (line: string) => void): Promise<SaveReply> {
  const reply: SaveReply = { saved: [], skipped: [] };
  const documents = isObject(params) && Array.isArray(params.documents) ? params.documents : [];
  for (const item of documents) {
    const uri = isObject(item) && typeof item.uri === 'string' ? item.uri : undefined;
    if (uri === undefined) {
      continue;
    }
    const version = isObject(item) ? item.version : undefined;
    const skip = (reason: string) => {
      reply.skipped.push({ uri, reason });
      note(`  not saved: ${label(uri)} (${reason})`);
    };
    const doc = findDocument(uri);
    if (!doc) {
      skip('not open in the editor');
    } else if (typeof version === 'number' && doc.version !== version) {
      skip(`the buffer changed since the edit (version ${doc.version}, not ${version})`);
    } else if (!doc.isDirty) {
      reply.saved.push(uri);
    } else if (await doc.save()) {
      reply.saved.push(uri);
      note(`💾 saved ${label(uri)}`);
    } else {
      skip('VS Code did not save it');
    }
  }
  return reply;
}

/** Handle `pi/reloadDocuments`: reload unmodified documents only. */
export async function reloadDocuments(params: unknown): Promise<ReloadReply> {
  const reply: ReloadReply = { reloaded: [], skipped: [] };
  const uris = isObject(params) && Array.isArray(params.uris) ? params.uris : [];
  for (const uri of uris) {
    if (typeof uri !== 'string') {
      continue;
    }
    const doc = findDocument(uri);
    if (!doc) {
      reply.skipped.push({ uri, reason: 'not open in the editor' });
    } else if (doc.isDirty) {
      reply.skipped.push({ uri, reason: 'the buffer has unsaved changes' });
    } else if (await reload(doc)) {
      reply.reloaded.push(uri);
    } else {
      reply.skipped.push({ uri, reason: 'VS Code did not reload it from disk' });
    }
  }
  return reply;
}

async function reload(doc: vscode.TextDocument): Promise<boolean> {
  const matchesDisk = () => {
    try {
      return doc.getText() === fs.readFileSync(doc.uri.fsPath, 'utf8').replace(/^\uFEFF/, '');
    } catch {
      return false;
    }
  };
  const end = Date.now() + RELOAD_WAIT_MS;
  while (Date.now() < end) {
    if (matchesDisk()) {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (doc.isDirty) {
    return false; // the user typed meanwhile: never revert their work
  }
  await vscode.window.showTextDocument(doc, { preserveFocus: true, preview: false });
  await vscode.commands.executeCommand('workbench.action.files.revert');
  return !doc.isDirty;
}

/** `pi/documentState` params for `doc`. */
export function documentState(doc: vscode.TextDocument): { uri: string; version: number; dirty: boolean } {
  return { uri: doc.uri.toString(), version: doc.version, dirty: doc.isDirty };
}

function label(uri: string): string {
  try {
    return vscode.workspace.asRelativePath(vscode.Uri.parse(uri, true));
  } catch {
    return uri;
  }
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
