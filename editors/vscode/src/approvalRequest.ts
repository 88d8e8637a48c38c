/**
 * Checking a `pi/requestApproval` request's params (the shared approval spec) before anything is
 * shown: pure, so the Node unit tests cover it.
 */
import { ApprovalActionId, ApprovalRequest } from './transcriptModel';

/** The answers the spec defines. */
export const ACTION_IDS: readonly string[] = ['allowOnce', 'allowSession', 'deny'];

/**
 * `params` as an {@link ApprovalRequest} when it is a well-formed `pi/requestApproval` params object
 * (the six strings, a numeric `timeoutMs`, at least one known action), else `undefined` (the caller
 * answers deny). Unknown actions are dropped; a `defaultAction` that is not a known action id is
 * read as `null` (nothing preselected).
 */
export function parseApprovalRequest(params: unknown): ApprovalRequest | undefined {
  if (typeof params !== 'object' || params === null) {
    return undefined;
  }
  const p = params as Record<string, unknown>;
  const strings = ['approvalId', 'sessionId', 'toolCallId', 'toolName', 'title', 'message'];
  if (!strings.every((k) => typeof p[k] === 'string') || typeof p.timeoutMs !== 'number' || !Array.isArray(p.actions)) {
    return undefined;
  }
  const actions = p.actions.filter((a): a is { id: ApprovalActionId; title: string } =>
    typeof a === 'object' && a !== null && ACTION_IDS.includes((a as any).id) && typeof (a as any).title === 'string');
  if (actions.length === 0) {
    return undefined;
  }
  const defaultAction = typeof p.defaultAction === 'string' && ACTION_IDS.includes(p.defaultAction)
    ? p.defaultAction as ApprovalActionId : null;
  return { ...(p as unknown as ApprovalRequest), actions: actions.map(({ id, title }) => ({ id, title })), defaultAction };
}
