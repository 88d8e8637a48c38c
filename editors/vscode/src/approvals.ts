/**
 * Approvals that cannot vanish (issue 15, the shared approval spec): the client advertises
 * `experimental.pi.approvals` and answers the server's `pi/requestApproval` requests.
 *
 * A request shows in three places at once, all closed by the extension when it is decided:
 * - the approval card in the Pi view, with the server's buttons (no button is preselected unless
 *   the server names a `defaultAction`, which it does only for read-only scope); the view opens
 *   by itself;
 * - a status bar item "Pi: waiting for approval" (click: show the view);
 * - a notification with progress ("Pi is waiting for your approval: …"). VS Code keeps a
 *   notification with running progress on screen (it never hides into the notification centre
 *   like a plain one), and the extension can close it. Its Cancel button is Deny.
 *
 * Answers: a button in the view or the notification's Cancel (Deny), Escape on the card (Deny).
 * `pi/approvalWithdrawn {approvalId, reason}` (timeout, abort, cancelled call) closes all three at
 * once, and the view says what happened ("Approval timed out after 120 s: denied"); the pending
 * request is then answered with deny (the server ignores a late answer anyway).
 */
import * as vscode from 'vscode';
import { parseApprovalRequest } from './approvalRequest';
import { ApprovalActionId } from './transcriptModel';
import { Transcript } from './transcript';

export interface ApprovalResult {
  action: ApprovalActionId;
  reason?: string;
}

interface Pending {
  resolve(result: ApprovalResult): void;
  /** Closes the notification. */
  close(): void;
}

export class ApprovalPrompts implements vscode.Disposable {
  private readonly pending = new Map<string, Pending>();
  private readonly item = vscode.window.createStatusBarItem('pi.approval', vscode.StatusBarAlignment.Left, 51);

  constructor(private readonly transcript: Transcript, private readonly reveal: () => Promise<void>) {
    this.item.name = 'Pi approval';
    this.item.text = '$(bell-dot) Pi: waiting for approval';
    this.item.tooltip = 'Pi waits for your answer. Click to show it.';
    this.item.command = 'pi.transcript.focus';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
  }

  /** Handle one `pi/requestApproval`; resolves with the user's answer, or deny when it is withdrawn. */
  request(params: unknown): Promise<ApprovalResult> {
    const request = parseApprovalRequest(params);
    if (!request) {
      this.transcript.note(`✗ ignored a malformed approval request (denied): ${JSON.stringify(params)?.slice(0, 200)}`);
      return Promise.resolve({ action: 'deny', reason: 'malformed pi/requestApproval' });
    }
    this.pending.get(request.approvalId)?.resolve({ action: 'deny', reason: 'asked again' });
    return new Promise<ApprovalResult>((resolve) => {
      let closeNotification = () => {};
      const entry: Pending = {
        resolve: (result) => {
          if (this.pending.get(request.approvalId) !== entry) {
            return;
          }
          this.pending.delete(request.approvalId);
          closeNotification();
          this.updateItem();
          resolve(result);
        },
        close: () => closeNotification(),
      };
      this.pending.set(request.approvalId, entry);
      this.transcript.changes(this.transcript.model.requestApproval(request));
      this.updateItem();
      void this.reveal();
      void vscode.window.withProgress({
        location: vscode.ProgressLocation.Notification,
        title: `Pi is waiting for your approval: ${request.title}. Answer in the Pi view (Cancel denies).`,
        cancellable: true,
      }, (_progress, token) => new Promise<void>((done) => {
        closeNotification = done;
        if (!this.pending.has(request.approvalId)) {
          done();
        }
        token.onCancellationRequested(() => this.answer(request.approvalId, 'deny'));
      }));
    });
  }

  /** The user's answer (a view button, Escape or the notification's Cancel = `deny`). */
  answer(approvalId: string, action: ApprovalActionId): void {
    const entry = this.pending.get(approvalId);
    if (!entry) {
      return; // already decided or withdrawn: a late click changes nothing
    }
    this.transcript.changes(this.transcript.model.answered(approvalId, action));
    entry.resolve({ action });
  }

  /** `pi/approvalWithdrawn`: close everything at once and show why in the view. */
  withdrawn(params: unknown): void {
    const approvalId = typeof params === 'object' && params !== null ? (params as any).approvalId : undefined;
    if (typeof approvalId !== 'string') {
      return;
    }
    this.transcript.changes(this.transcript.model.withdrawn(params));
    this.pending.get(approvalId)?.resolve({ action: 'deny', reason: 'withdrawn' });
  }

  /**
   * A `pi/event` `approval_resolved` arrived: the server decided, so any prompt still open for it
   * closes (normally `pi/approvalWithdrawn` or the user's answer closed it already).
   */
  serverResolved(approvalId: string): void {
    this.pending.get(approvalId)?.resolve({ action: 'deny', reason: 'already decided by the server' });
  }

  /** Deny every pending approval (the server stopped). */
  denyAll(reason: string): void {
    for (const [approvalId, entry] of [...this.pending]) {
      this.transcript.changes(this.transcript.model.withdrawn({ approvalId, reason: 'cancelled' }));
      entry.resolve({ action: 'deny', reason });
    }
  }

  /** Approval ids still waiting for the user. */
  pendingIds(): string[] {
    return [...this.pending.keys()];
  }

  dispose(): void {
    this.denyAll('the extension stopped');
    this.item.dispose();
  }

  private updateItem(): void {
    if (this.pending.size > 0) {
      this.item.text = `$(bell-dot) Pi: waiting for approval${this.pending.size > 1 ? ` (${this.pending.size})` : ''}`;
      this.item.show();
    } else {
      this.item.hide();
    }
  }
}
