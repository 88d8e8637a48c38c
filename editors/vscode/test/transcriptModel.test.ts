import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ApprovalEntry, ApprovalRequest, MODEL_LIMITS, ToolEntry, TranscriptModel, withdrawnText } from '../src/transcriptModel';

const ev = (event: Record<string, unknown>, sessionId = 's1') => ({ sessionId, event });
const text = (t: string) => ev({ type: 'message_update', delta: { type: 'text', text: t } });
const request = (over: Partial<ApprovalRequest> = {}): ApprovalRequest => ({
  approvalId: 'a1', sessionId: 's1', toolCallId: 'c9', toolName: 'bash', title: 'Run bash: rm -rf build',
  message: 'pi: allow bash to run the command `rm -rf build`?', timeoutMs: 2000, defaultAction: null,
  actions: [{ id: 'allowOnce', title: 'Allow once' }, { id: 'allowSession', title: 'Allow for this session' }, { id: 'deny', title: 'Deny' }],
  ...over,
});

test('a run: prompt, streamed text, a tool with live output and a diff, the end', () => {
  const m = new TranscriptModel();
  m.prompt('fix it');
  m.event(ev({ type: 'agent_start' }));
  const first = m.event(text('Reading '));
  const second = m.event(text('**the** file.'));
  assert.equal(first[0].id, second[0].id, 'deltas of one message go to one entry');
  m.event(ev({ type: 'message_end', message: { role: 'assistant', content: [] } }));
  m.event(ev({ type: 'tool_execution_start', toolCallId: 'c1', toolName: 'bash', args: { command: 'make test' } }));
  m.event(ev({ type: 'tool_execution_update', toolCallId: 'c1', toolName: 'bash', output: 'step 1\n' }));
  const live = m.event(ev({ type: 'tool_execution_update', toolCallId: 'c1', toolName: 'bash', output: 'step 2\n' }));
  assert.equal((live[0] as ToolEntry).liveTail, 'step 1\nstep 2\n');
  m.event(ev({ type: 'tool_execution_end', toolCallId: 'c1', toolName: 'bash', isError: false,
    result: { content: [{ type: 'text', text: 'step 1\nstep 2\nOK' }] } }));
  m.event(ev({ type: 'tool_execution_start', toolCallId: 'c2', toolName: 'edit', args: { path: 'a.py', edits: [] } }));
  m.event(ev({ type: 'tool_execution_end', toolCallId: 'c2', toolName: 'edit', isError: false,
    result: { content: [{ type: 'text', text: 'Successfully replaced 1 block(s) in a.py.' }], details: { diff: '-1 a\n+1 b', patch: '@@' } } }));
  m.event(text('Done.'));
  m.event(ev({ type: 'agent_end', stopReason: 'stop' }));
  assert.deepEqual(m.entries.map((e) => e.kind), ['prompt', 'assistant', 'tool', 'tool', 'assistant', 'end']);
  const [, said, bash, edit, , end] = m.entries as any[];
  assert.equal(said.text, 'Reading **the** file.');
  assert.equal(bash.state, 'done');
  assert.equal(bash.result, 'step 1\nstep 2\nOK');
  assert.equal(edit.diff, '-1 a\n+1 b', 'the numbered display diff is preferred over the patch');
  assert.deepEqual({ state: end.state, reason: end.reason }, { state: 'done', reason: undefined });
});

test('errors: a failed tool, a model error, aborted and failed runs', () => {
  const m = new TranscriptModel();
  m.event(ev({ type: 'tool_execution_start', toolCallId: 'e', toolName: 'edit', args: { path: 'x' } }));
  const [failed] = m.event(ev({ type: 'tool_execution_end', toolCallId: 'e', toolName: 'edit', isError: true,
    result: { content: [{ type: 'text', text: 'Could not find the exact text' }] } })) as ToolEntry[];
  assert.equal(failed.state, 'error');
  m.event(text('Trying'));
  const [said] = m.event(ev({ type: 'message_end', message: { role: 'assistant', stopReason: 'error', errorMessage: '429' } }));
  assert.deepEqual([said.kind, (said as any).text, (said as any).error], ['assistant', 'Trying', '429']);
  assert.equal((m.event(ev({ type: 'agent_end', stopReason: 'aborted' }))[0] as any).state, 'aborted');
  const [end] = m.event(ev({ type: 'agent_end', stopReason: 'error', errorMessage: 'boom' })) as any[];
  assert.deepEqual([end.state, end.reason], ['error', 'boom']);
  assert.equal(m.note('✗ server stopped', true)[0].kind, 'note');
});

test('an approval requested, answered in the view, then confirmed by the server', () => {
  const m = new TranscriptModel();
  m.event(ev({ type: 'approval_requested', approvalId: 'a1', toolCallId: 'c9', toolName: 'bash', title: 'Run bash: rm -rf build' }));
  const [card] = m.requestApproval(request()) as ApprovalEntry[];
  assert.equal(m.entries.length, 1, 'the event and the request make one entry');
  assert.equal(card.pending, true);
  assert.equal(card.actions.length, 3);
  assert.equal(card.defaultAction, null);
  assert.deepEqual(m.pendingApprovals().map((a) => a.approvalId), ['a1']);
  m.answered('a1', 'allowOnce');
  assert.deepEqual([card.pending, card.actions, card.outcome, card.denied], [false, [], 'Allowed once', false]);
  assert.deepEqual(m.answered('a1', 'deny'), [], 'a second answer changes nothing');
  m.event(ev({ type: 'approval_resolved', approvalId: 'a1', toolCallId: 'c9', toolName: 'bash', decision: 'allow', scope: 'session', by: 'user' }));
  assert.equal(card.outcome, 'Allowed for this session');
  assert.deepEqual(m.pendingApprovals(), []);
});

test('a withdrawn approval loses its buttons and says why, in seconds', () => {
  const m = new TranscriptModel();
  const [card] = m.requestApproval(request({ timeoutMs: 2000 })) as ApprovalEntry[];
  m.withdrawn({ approvalId: 'a1', reason: 'timeout', decision: 'deny' });
  assert.deepEqual([card.pending, card.actions, card.outcome, card.denied], [false, [], 'Approval timed out after 2 s: denied', true]);
  assert.deepEqual(m.answered('a1', 'allowOnce'), [], 'a late click is not shown as taken');
  assert.equal(card.outcome, 'Approval timed out after 2 s: denied');
  assert.deepEqual(m.withdrawn({ approvalId: 'unknown', reason: 'timeout' }), []);
  assert.deepEqual(m.withdrawn('junk'), []);
  assert.equal(withdrawnText('timeout', 120000), 'Approval timed out after 120 s: denied');
  assert.equal(withdrawnText('timeout', 1500), 'Approval timed out after 1.5 s: denied');
  assert.equal(withdrawnText('aborted', 1), 'Approval withdrawn, the run was aborted: denied');
});

test('an approval asked through window/showMessageRequest shows as a line and its outcome', () => {
  const m = new TranscriptModel();
  m.event(ev({ type: 'approval_requested', approvalId: 'b', toolCallId: 'c', toolName: 'bash', title: 'Run bash: make' }));
  const [card] = m.event(ev({ type: 'approval_resolved', approvalId: 'b', decision: 'deny', scope: null, by: 'timeout' })) as ApprovalEntry[];
  assert.deepEqual([card.actions, card.outcome, card.denied], [[], 'Approval timed out: denied', true]);
  const [old] = m.event(ev({ type: 'pi_approval_request', toolCallId: 'd', toolName: 'read', scope: '/etc/passwd', reason: 'outside' })) as ApprovalEntry[];
  assert.equal(old.title, 'read: /etc/passwd (outside)');
});

test('bounded: the live tail keeps the end; malformed events change nothing', () => {
  const m = new TranscriptModel();
  m.event(ev({ type: 'tool_execution_start', toolCallId: 'b', toolName: 'bash', args: { command: 'yes' } }));
  m.event(ev({ type: 'tool_execution_update', toolCallId: 'b', output: 'x'.repeat(10000) + 'END' }));
  const tool = m.entries[0] as ToolEntry;
  assert.equal(tool.liveTail.length, MODEL_LIMITS.liveTailChars);
  assert.ok(tool.liveTail.endsWith('END'));
  for (const bad of [null, {}, { event: 'x' }, ev({ type: 'tool_execution_update', toolCallId: 'nope', output: 'y' }), ev({ type: 'new_thing' })]) {
    assert.deepEqual(m.event(bad), []);
  }
  assert.equal(m.entries.length, 1);
});

test('an approval of a running tool call shows inside that call, above its result', () => {
  const m = new TranscriptModel();
  m.event(ev({ type: 'tool_execution_start', toolCallId: 'c9', toolName: 'bash', args: { command: 'rm -rf build' } }));
  const [host] = m.event(ev({ type: 'approval_requested', approvalId: 'a1', toolCallId: 'c9', toolName: 'bash', title: 'Run bash: rm -rf build' })) as ToolEntry[];
  assert.equal(host.kind, 'tool');
  assert.equal(m.requestApproval(request())[0], host, 'the request updates the same call');
  assert.equal(host.approval!.actions.length, 3);
  assert.deepEqual(m.pendingApprovals().map((a) => a.approvalId), ['a1']);
  assert.equal(m.withdrawn({ approvalId: 'a1', reason: 'timeout' })[0], host);
  assert.equal(host.approval!.outcome, 'Approval timed out after 2 s: denied');
  assert.deepEqual(m.entries.map((e) => e.kind), ['tool'], 'no separate entry');
});
