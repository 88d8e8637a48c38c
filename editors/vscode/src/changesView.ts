/**
 * The Changes view (`pi.changes`, issue 18): a tree under the Pi container with the files the
 * session of the last prompt changed and their hunks (status as description). Inline actions
 * Keep / Undo per hunk and Undo per file, the title actions "Undo the Last Prompt" (what the user
 * asked last, all its model turns: `pi/revertChanges {prompt}`), "Undo All" and "Refresh"; a click on a
 * file opens `vscode.diff` of the text before the agent's change (`pi-changes:` documents, rebuilt
 * from the hunks by {@link beforeText}) and the current file.
 *
 * Requests: `pi/changes {sessionId}`, `pi/revertChanges {sessionId, files? | hunks?}` (reverts of
 * files VS Code holds arrive as `workspace/applyEdit`, so each is one undo step),
 * `pi/keepChanges {sessionId, hunks}`. Conflicts (text changed since the agent's change) are left
 * alone by the server and reported here.
 */
import * as vscode from 'vscode';
import {
  ChangeFile, ChangeRow, ChangeSet, beforeText, changedFileCount, fileRows, hunkRows, parseChangeSet,
} from './changesModel';

export const CHANGES_VIEW_ID = 'pi.changes';
export const BEFORE_SCHEME = 'pi-changes';

/** How the view reaches the server (the language client while it runs). */
export interface ChangesBackend {
  sessionId(): string | undefined;
  request(method: string, params: unknown): Promise<unknown>;
}

export class ChangesView implements vscode.TreeDataProvider<ChangeRow>, vscode.TextDocumentContentProvider, vscode.Disposable {
  set: ChangeSet | undefined;
  private readonly changed = new vscode.EventEmitter<ChangeRow | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly beforeChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.beforeChanged.event;
  private readonly tree: vscode.TreeView<ChangeRow>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly backend: ChangesBackend, private readonly note: (line: string) => void) {
    this.tree = vscode.window.createTreeView(CHANGES_VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    const command = (id: string, run: (...args: any[]) => unknown) =>
      this.disposables.push(vscode.commands.registerCommand(id, run));
    command('pi.changes.refresh', () => this.refresh());
    command('pi.changes.reveal', () => this.reveal());
    command('pi.changes.keepHunk', (row?: ChangeRow) => row?.hunkId && this.keep([row.hunkId]));
    command('pi.changes.undoHunk', (row?: ChangeRow) => row?.hunkId && this.revert({ hunks: [row.hunkId] }));
    command('pi.changes.keepFile', (row?: ChangeRow) => row && this.keep(this.file(row.path)?.hunks
      .filter((h) => h.status === 'applied').map((h) => h.id) ?? []));
    command('pi.changes.undoFile', (row?: ChangeRow) => row && this.revert({ files: [row.path] }));
    command('pi.changes.undoAll', () => this.revert({}));
    command('pi.changes.undoLastPrompt', () => this.undoLastPrompt());
    command('pi.changes.openDiff', (row?: ChangeRow, line?: number) => row && this.openDiff(row.path, line));
    this.disposables.push(
      this.tree, this.changed, this.beforeChanged,
      vscode.workspace.registerTextDocumentContentProvider(BEFORE_SCHEME, this),
    );
  }

  /** Take back what the session's last prompt changed; says so when no prompt is recorded. */
  private async undoLastPrompt(): Promise<void> {
    if (!this.set) {
      await this.refresh();
    }
    const prompt = this.set?.currentPrompt;
    if (prompt === undefined) {
      void vscode.window.showInformationMessage('Pi: no prompt of this session is recorded; use Undo All.');
      return;
    }
    await this.revert({ prompt });
  }

  getTreeItem(row: ChangeRow): vscode.TreeItem {
    const item = new vscode.TreeItem(row.label,
      row.hasChildren ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.id = row.id;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = row.contextValue;
    if (!row.hunkId) {
      item.resourceUri = vscode.Uri.file(row.path);
      item.command = { command: 'pi.changes.openDiff', title: 'Open Changes', arguments: [row] };
    } else {
      const hunk = this.file(row.path)?.hunks.find((h) => h.id === row.hunkId);
      item.command = { command: 'pi.changes.openDiff', title: 'Open Changes', arguments: [row, hunk?.currentStart ?? hunk?.newStart] };
    }
    return item;
  }

  getChildren(row?: ChangeRow): ChangeRow[] {
    if (!this.set) {
      return [];
    }
    if (!row) {
      return fileRows(this.set, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
    }
    const file = this.file(row.path);
    return row.hunkId || !file ? [] : hunkRows(file);
  }

  /** The `pi-changes:` document: the file's text before the agent's (still applied) hunks. */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const file = this.file(uri.path);
    if (!file || file.state === 'created') {
      return '';
    }
    const current = await currentText(vscode.Uri.file(uri.path));
    return current === undefined ? '' : beforeText(file, current);
  }

  /** Ask the server for the session's change set and redraw; the number of files still changed. */
  async refresh(): Promise<number> {
    const sessionId = this.backend.sessionId();
    if (!sessionId) {
      this.set = undefined;
      this.tree.message = 'No Pi session yet: the files a prompt changes show here.';
      this.changed.fire(undefined);
      return 0;
    }
    try {
      this.set = parseChangeSet(await this.backend.request('pi/changes', { sessionId }));
    } catch (error) {
      this.tree.message = `Could not load the changes: ${error instanceof Error ? error.message : String(error)}`;
      this.changed.fire(undefined);
      return 0;
    }
    this.tree.message = this.set.files.length === 0 ? 'This session changed no files.' : undefined;
    this.tree.description = `${changedFileCount(this.set)} of ${this.set.files.length} files to review`;
    this.changed.fire(undefined);
    for (const file of this.set.files) {
      this.beforeChanged.fire(beforeUri(file.path));
    }
    return changedFileCount(this.set);
  }

  /** Refresh, then show the view (in this order: one rendering, so a click lands on current rows). */
  async reveal(): Promise<void> {
    await this.refresh();
    await vscode.commands.executeCommand(`${CHANGES_VIEW_ID}.focus`);
  }

  dispose(): void {
    this.disposables.splice(0).forEach((d) => d.dispose());
  }

  private file(path: string): ChangeFile | undefined {
    return this.set?.files.find((f) => f.path === path);
  }

  private async revert(what: { files?: string[]; hunks?: string[]; prompt?: number }): Promise<void> {
    const sessionId = this.backend.sessionId();
    if (!sessionId) {
      return;
    }
    try {
      const report: any = await this.backend.request('pi/revertChanges', { sessionId, ...what });
      const conflicts: any[] = Array.isArray(report?.conflicts) ? report.conflicts : [];
      if (conflicts.length > 0) {
        const lines = conflicts.map((c) => `${c.path}: ${c.reason}`);
        lines.forEach((l) => this.note(`⚠ not reverted (changed since): ${l}`));
        void vscode.window.showWarningMessage(`Pi: ${conflicts.length} change(s) were edited since and left alone: ${lines.join('; ')}`);
      }
    } catch (error) {
      void vscode.window.showErrorMessage(`Pi: the revert failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    await this.refresh();
  }

  private async keep(hunks: string[]): Promise<void> {
    const sessionId = this.backend.sessionId();
    if (!sessionId || hunks.length === 0) {
      return;
    }
    try {
      await this.backend.request('pi/keepChanges', { sessionId, hunks });
    } catch (error) {
      void vscode.window.showErrorMessage(`Pi: keeping the change failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    await this.refresh();
  }

  private async openDiff(path: string, line?: number): Promise<void> {
    const file = this.file(path);
    const name = path.split(/[\\/]/).pop();
    if (!file) {
      return;
    }
    if (file.binary || (file.state === 'deleted' && file.current !== 'reverted')) {
      void vscode.window.showInformationMessage(`Pi: ${name} was ${file.binary ? 'changed (binary)' : 'deleted'}: no text diff to show.`);
      return;
    }
    const options: vscode.TextDocumentShowOptions = { preview: true };
    if (line !== undefined) {
      options.selection = new vscode.Range(line, 0, line, 0);
    }
    await vscode.commands.executeCommand('vscode.diff', beforeUri(path), vscode.Uri.file(path),
      `${name} (before Pi ↔ now)`, options);
  }
}

/** The `pi-changes:` URI of the before text of `path` (an absolute file path). */
export function beforeUri(path: string): vscode.Uri {
  return vscode.Uri.file(path).with({ scheme: BEFORE_SCHEME });
}

/** The file's text now: the open buffer, else the disk; `undefined` when it is gone. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) {
    return open.getText();
  }
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}
