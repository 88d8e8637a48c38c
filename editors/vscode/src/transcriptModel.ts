/**
 * The transcript as a list of entries that the Pi view shows (issue 15): the prompt, the
 * assistant's text, one entry per tool call (arguments, live output, result, edit diff), each
 * approval with its answer, notes of the extension, and the final state of each run.
 *
 * Pure logic (no `vscode` import): feed it every `pi/event`'s params ({@link TranscriptModel.event}),
 * the `pi/requestApproval` requests and `pi/approvalWithdrawn` notifications (APPROVALS_SPEC in
 * the team's shared folder), and the extension's own lines; each call returns the entries that
 * changed, so the view re-renders only those. Sizes are bounded ({@link MODEL_LIMITS}).
 */
import { resultText } from './eventRendering';

/** Bounds, in UTF-16 code units (JavaScript string length). */
export const MODEL_LIMITS = { liveTailChars: 4000, resultChars: 20000, textChars: 100000, entries: 2000 };

export type ToolState = 'running' | 'done' | 'error';
export type RunState = 'done' | 'aborted' | 'error';
export type ApprovalActionId = 'allowOnce' | 'allowSession' | 'deny';

export interface ApprovalAction {
  id: ApprovalActionId;
  title: string;
}

/** `pi/requestApproval` params (the shared approval spec). */
export interface ApprovalRequest {
  approvalId: string;
  sessionId: string;
  toolCallId: string;
  toolName: string;
  title: string;
  message: string;
  actions: ApprovalAction[];
  defaultAction: ApprovalActionId | null;
  timeoutMs: number;
}

interface Base {
  /** Stable across updates; the view keys its elements on it. */
  id: string;
}

/** How a user message reached the run: a new run (`undefined`), Pi's steer or follow-up (issue 19). */
export type QueuedDelivery = 'steer' | 'followUp';

export interface PromptEntry extends Base { kind: 'prompt'; text: string; delivery?: QueuedDelivery }
export interface AssistantEntry extends Base { kind: 'assistant'; text: string; error?: string }
export interface ToolEntry extends Base {
  kind: 'tool';
  toolCallId: string;
  name: string;
  args: unknown;
  state: ToolState;
  external: boolean;
  /** The tail of the output streamed by `tool_execution_update` while the call runs. */
  liveTail: string;
  /** The result's text blocks joined (set at `tool_execution_end`). */
  result?: string;
  /** `details.diff` (Pi's numbered display diff) or `details.patch` of an edit. */
  diff?: string;
  /** The approval asked for this call, shown inside the call's entry (above its result). */
  approval?: ApprovalEntry;
}
export interface ApprovalEntry extends Base {
  kind: 'approval';
  approvalId: string;
  toolCallId: string;
  toolName: string;
  title: string;
  message?: string;
  /** Buttons, only while the extension holds the pending `pi/requestApproval`. */
  actions: ApprovalAction[];
  defaultAction: ApprovalActionId | null;
  timeoutMs?: number;
  pending: boolean;
  /** What happened, once decided: `Allowed once`, `Approval timed out after 2 s: denied`, … */
  outcome?: string;
  denied?: boolean;
}
export interface NoteEntry extends Base { kind: 'note'; text: string; error: boolean }
export interface EndEntry extends Base { kind: 'end'; state: RunState; reason?: string }

/** After a run that changed files: the link to the Changes view ("2 files changed: review"). */
export interface ChangesEntry extends Base { kind: 'changes'; files: number }

export type Entry = PromptEntry | AssistantEntry | ToolEntry | ApprovalEntry | NoteEntry | EndEntry | ChangesEntry;

type Event = Record<string, any>;

export class TranscriptModel {
  readonly entries: Entry[] = [];
  private next = 0;
  /** The assistant entry that streamed text goes to; reset at each `message_end`. */
  private open: AssistantEntry | undefined;
  private readonly approvals = new Map<string, ApprovalEntry>();
  /** Tool entries that show an approval, by approval id. */
  private readonly hosts = new Map<string, ToolEntry>();

  /** Apply one `pi/event` params object `{sessionId, event}`; the entries that changed. */
  event(params: unknown): Entry[] {
    if (!isObject(params) || !isObject(params.event) || typeof params.event.type !== 'string') {
      return [];
    }
    const event = params.event;
    const external = params.sessionId === 'external';
    switch (event.type) {
      case 'message_update':
        return this.delta(event.delta);
      case 'message_end':
        return this.messageEnd(event.message);
      case 'tool_execution_start':
        this.open = undefined;
        return [this.add<ToolEntry>({
          kind: 'tool', toolCallId: str(event.toolCallId), name: str(event.toolName, '?'), args: event.args,
          state: 'running', external, liveTail: '',
        })];
      case 'tool_execution_update': {
        const tool = this.tool(str(event.toolCallId));
        if (!tool || typeof event.output !== 'string' || event.output === '') {
          return [];
        }
        tool.liveTail = tail(tool.liveTail + event.output, MODEL_LIMITS.liveTailChars);
        return [tool];
      }
      case 'tool_execution_end':
        return this.toolEnd(event, external);
      case 'approval_requested':
      case 'pi_approval_request':
        return this.approvalRequested(event);
      case 'approval_resolved':
        return this.approvalResolved(event);
      case 'agent_end': {
        this.open = undefined;
        const stopReason = str(event.stopReason, 'unknown');
        const state: RunState = stopReason === 'stop' ? 'done' : stopReason === 'aborted' ? 'aborted' : 'error';
        const reason = typeof event.errorMessage === 'string' ? event.errorMessage
          : state === 'error' ? `stop reason: ${stopReason}` : undefined;
        return [this.add<EndEntry>({ kind: 'end', state, reason })];
      }
      default:
        return [];
    }
  }

  /** The user's prompt, shown when it is sent; `delivery` marks a steering or queued message. */
  prompt(text: string, delivery?: QueuedDelivery): Entry[] {
    this.open = undefined;
    return [this.add<PromptEntry>(delivery ? { kind: 'prompt', text, delivery } : { kind: 'prompt', text })];
  }

  /** A line of the extension's own (a save, a server problem); `error` marks it as an error. */
  note(text: string, error = false): Entry[] {
    this.open = undefined;
    return [this.add<NoteEntry>({ kind: 'note', text, error })];
  }

  /** The run just ended changed `files` files: a link to review them. */
  changeSummary(files: number): Entry[] {
    this.open = undefined;
    return [this.add<ChangesEntry>({ kind: 'changes', files })];
  }

  /** A `pi/requestApproval` arrived: the approval entry gets its buttons. */
  requestApproval(request: ApprovalRequest): Entry[] {
    const entry = this.approval(request.approvalId) ?? this.newApproval({
      approvalId: request.approvalId, toolCallId: request.toolCallId, toolName: request.toolName, title: request.title,
    });
    if (entry.outcome === undefined) {
      Object.assign(entry, {
        title: request.title, message: request.message, actions: request.actions,
        defaultAction: request.defaultAction, timeoutMs: request.timeoutMs, pending: true,
      });
    }
    return [this.host(entry)];
  }

  /** The user answered in the view or the notification (or dismissed it: `deny`). */
  answered(approvalId: string, action: ApprovalActionId): Entry[] {
    const entry = this.approval(approvalId);
    if (!entry || !entry.pending) {
      return [];
    }
    settle(entry, answerText(action), action === 'deny');
    return [this.host(entry)];
  }

  /** `pi/approvalWithdrawn {approvalId, reason, decision}`: the buttons go, the reason stays. */
  withdrawn(params: unknown): Entry[] {
    if (!isObject(params) || typeof params.approvalId !== 'string') {
      return [];
    }
    const entry = this.approval(params.approvalId);
    if (!entry) {
      return [];
    }
    settle(entry, withdrawnText(str(params.reason, 'cancelled'), entry.timeoutMs), true);
    return [this.host(entry)];
  }

  /** Approvals still waiting for the user. */
  pendingApprovals(): ApprovalEntry[] {
    return [...this.approvals.values()].filter((a) => a.pending);
  }

  private delta(delta: unknown): Entry[] {
    if (!isObject(delta) || delta.type !== 'text' || typeof delta.text !== 'string' || delta.text === '') {
      return [];
    }
    if (!this.open) {
      this.open = this.add<AssistantEntry>({ kind: 'assistant', text: '' });
    }
    this.open.text = (this.open.text + delta.text).slice(0, MODEL_LIMITS.textChars);
    return [this.open];
  }

  private messageEnd(message: unknown): Entry[] {
    const current = this.open;
    this.open = undefined;
    if (!isObject(message) || message.role !== 'assistant' || message.stopReason !== 'error') {
      return [];
    }
    const error = str(message.errorMessage, 'the model failed');
    if (current) {
      current.error = error;
      return [current];
    }
    return [this.add<AssistantEntry>({ kind: 'assistant', text: '', error })];
  }

  private toolEnd(event: Event, external: boolean): Entry[] {
    this.open = undefined;
    const id = str(event.toolCallId);
    const tool = this.tool(id) ?? this.add<ToolEntry>({
      kind: 'tool', toolCallId: id, name: str(event.toolName, '?'), args: undefined, state: 'running', external, liveTail: '',
    });
    tool.state = event.isError === true ? 'error' : 'done';
    tool.result = resultText(event.result).slice(0, MODEL_LIMITS.resultChars);
    const details = isObject(event.result) ? event.result.details : undefined;
    if (isObject(details)) {
      const diff = typeof details.diff === 'string' && details.diff !== '' ? details.diff
        : typeof details.patch === 'string' && details.patch !== '' ? details.patch : undefined;
      tool.diff = diff?.slice(0, MODEL_LIMITS.resultChars);
    }
    return [tool];
  }

  private approvalRequested(event: Event): Entry[] {
    const approvalId = typeof event.approvalId === 'string' ? event.approvalId : undefined;
    if (approvalId && this.approval(approvalId)) {
      return []; // the request came first and already made the entry
    }
    const toolName = str(event.toolName, '?');
    const title = typeof event.title === 'string' ? event.title
      : `${toolName}: ${str(event.scope)}${event.reason ? ` (${str(event.reason)})` : ''}`;
    this.open = undefined;
    const entry = this.newApproval({ approvalId: approvalId ?? `event-${this.next}`, toolCallId: str(event.toolCallId), toolName, title });
    return [this.host(entry)];
  }

  private approvalResolved(event: Event): Entry[] {
    const entry = typeof event.approvalId === 'string' ? this.approval(event.approvalId) : undefined;
    if (!entry) {
      return [];
    }
    const deny = event.decision !== 'allow';
    const by = str(event.by, 'user');
    let text: string;
    if (by === 'timeout' || by === 'aborted' || by === 'cancelled') {
      text = withdrawnText(by, entry.timeoutMs);
    } else if (by === 'fallback') {
      text = `No answer could be asked: ${deny ? 'denied' : 'allowed'} by the fallback setting`;
    } else if (deny) {
      text = 'Denied';
    } else {
      text = event.scope === 'session' ? 'Allowed for this session' : 'Allowed once';
    }
    // The server's word is final: it replaces what the view assumed (e.g. a late click).
    entry.pending = false;
    entry.actions = [];
    entry.outcome = text;
    entry.denied = deny;
    return [this.host(entry)];
  }

  /** A new approval: inside the running tool call it is about, else an entry of its own. */
  private newApproval(fields: Pick<ApprovalEntry, 'approvalId' | 'toolCallId' | 'toolName' | 'title'>): ApprovalEntry {
    const tool = this.tool(fields.toolCallId);
    const base = { kind: 'approval' as const, actions: [], defaultAction: null, pending: true, ...fields };
    let entry: ApprovalEntry;
    if (tool && !tool.approval) {
      entry = { id: `e${this.next++}`, ...base };
      tool.approval = entry;
      this.hosts.set(entry.approvalId, tool);
    } else {
      entry = this.add<ApprovalEntry>(base);
    }
    this.approvals.set(entry.approvalId, entry);
    return entry;
  }

  /** The entry that shows `approval`: its tool call's, or itself. */
  private host(approval: ApprovalEntry): Entry {
    return this.hosts.get(approval.approvalId) ?? approval;
  }

  private add<T extends Entry>(fields: Omit<T, 'id'>): T {
    const entry = { id: `e${this.next++}`, ...fields } as T;
    this.entries.push(entry);
    if (this.entries.length > MODEL_LIMITS.entries) {
      this.entries.splice(0, this.entries.length - MODEL_LIMITS.entries);
    }
    return entry;
  }

  private tool(toolCallId: string): ToolEntry | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e.kind === 'tool' && e.toolCallId === toolCallId && e.state === 'running') {
        return e;
      }
    }
    return undefined;
  }

  private approval(approvalId: string): ApprovalEntry | undefined {
    return this.approvals.get(approvalId);
  }
}

/** The one-line outcome of an answer given in the editor. */
export function answerText(action: ApprovalActionId): string {
  return action === 'allowOnce' ? 'Allowed once' : action === 'allowSession' ? 'Allowed for this session' : 'Denied';
}

/** The one-line outcome of a withdrawn approval; `timeoutMs` from the request (ms). */
export function withdrawnText(reason: string, timeoutMs: number | undefined): string {
  if (reason === 'timeout') {
    const seconds = timeoutMs === undefined ? undefined : Math.round(timeoutMs / 100) / 10;
    return `Approval timed out${seconds === undefined ? '' : ` after ${seconds} s`}: denied`;
  }
  return reason === 'aborted' ? 'Approval withdrawn, the run was aborted: denied'
    : 'Approval withdrawn, the tool call was cancelled: denied';
}


function settle(entry: ApprovalEntry, outcome: string, denied: boolean): ApprovalEntry {
  entry.pending = false;
  entry.actions = [];
  entry.outcome = outcome;
  entry.denied = denied;
  return entry;
}

function tail(text: string, max: number): string {
  return text.length <= max ? text : text.slice(text.length - max);
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
