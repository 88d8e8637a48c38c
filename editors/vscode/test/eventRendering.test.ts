import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { LIMITS, TranscriptRenderer, cut, resultText } from '../src/eventRendering';

const ev = (event: Record<string, unknown>, sessionId = 's1') => ({ sessionId, event });
const text = (t: string) => ev({ type: 'message_update', delta: { type: 'text', text: t } });
const assistantEnd = (extra: Record<string, unknown> = {}) =>
  ev({ type: 'message_end', message: { role: 'assistant', content: [], ...extra } });

function renderAll(r: TranscriptRenderer, events: unknown[]): string {
  return events.map((e) => r.render(e)).join('');
}

test('a whole run: streamed text, a tool call with its result, the end', () => {
  const r = new TranscriptRenderer();
  const out = renderAll(r, [
    ev({ type: 'agent_start' }),
    ev({ type: 'turn_start' }),
    ev({ type: 'message_start', message: { role: 'user', content: [{ type: 'text', text: 'fix it' }] } }),
    text('Reading '), text('the file.'),
    ev({ type: 'message_update', delta: { type: 'toolCall', index: 0, id: 'c1', name: 'read', arguments: '{"pa' } }),
    ev({ type: 'message_update', delta: { type: 'thinking', thinking: 'hidden' } }),
    assistantEnd(),
    ev({ type: 'tool_execution_start', toolCallId: 'c1', toolName: 'read', args: { path: 'a.py' } }),
    ev({ type: 'tool_execution_end', toolCallId: 'c1', toolName: 'read', isError: false,
      result: { content: [{ type: 'text', text: 'line1\nline2' }] } }),
    ev({ type: 'turn_end', message: {}, toolResults: [] }),
    ev({ type: 'agent_end', stopReason: 'stop' }),
  ]);
  assert.equal(out, [
    '── Pi run started (session s1) ──',
    'Reading the file.',
    '▶ read {"path":"a.py"}',
    '✔ read',
    '    line1',
    '    line2',
    '── Pi run done ──',
    '',
    '',
  ].join('\n'));
  assert.deepEqual(r.toolCalls, [{ id: 'c1', name: 'read', sessionId: 's1', args: { path: 'a.py' }, status: 'done', result: 'line1\nline2' }]);
  assert.deepEqual(r.runs, [{ sessionId: 's1', running: false, stopReason: 'stop', errorMessage: undefined }]);
});

test('errors: a failed tool, a model error, an aborted and a failed run', () => {
  const r = new TranscriptRenderer();
  r.render(ev({ type: 'agent_start' }));
  r.render(ev({ type: 'tool_execution_start', toolCallId: 'e1', toolName: 'edit', args: {} }));
  const failed = r.render(ev({ type: 'tool_execution_end', toolCallId: 'e1', toolName: 'edit', isError: true,
    result: { content: [{ type: 'text', text: 'Could not find the exact text' }] } }));
  assert.equal(failed, '✗ edit failed\n    Could not find the exact text\n');
  assert.equal(r.toolCalls[0].status, 'error');
  assert.equal(r.render(assistantEnd({ stopReason: 'error', errorMessage: '429 rate limited' })), '✗ model error: 429 rate limited\n');
  assert.equal(r.render(ev({ type: 'agent_end', stopReason: 'aborted' })), '── Pi run aborted ──\n\n');
  r.render(ev({ type: 'agent_start' }));
  assert.equal(r.render(ev({ type: 'agent_end', stopReason: 'error', errorMessage: 'boom' })), '── Pi run ended: error: boom ──\n\n');
  assert.deepEqual(r.runs.map((x) => [x.running, x.stopReason]), [[false, 'aborted'], [false, 'error']]);
});

test('an event after streamed text starts on a new line; a note too', () => {
  const r = new TranscriptRenderer();
  assert.equal(r.render(text('partial')), 'partial');
  assert.equal(r.note('💾 saved a.py'), '\n💾 saved a.py\n');
  assert.equal(r.render(text('line\n')), 'line\n');
  assert.equal(r.render(ev({ type: 'pi_approval_request', toolName: 'bash', scope: 'rm -rf build', reason: 'not read-only' })),
    '? approval asked for bash: rm -rf build (not read-only)\n');
  assert.equal(r.render(ev({ type: 'approval_requested', approvalId: 'a', toolName: 'bash', title: 'Run bash: rm -rf build' })),
    '? approval asked: Run bash: rm -rf build\n');
  assert.equal(r.render(ev({ type: 'approval_resolved', approvalId: 'a', toolName: 'bash', decision: 'deny', scope: null, by: 'timeout' })),
    '⛔ approval denied (by timeout): bash\n');
});

test('long results, arguments and updates are bounded', () => {
  const r = new TranscriptRenderer();
  const big = Array.from({ length: 50 }, (_, i) => `row ${i} ${'x'.repeat(500)}`).join('\n');
  r.render(ev({ type: 'tool_execution_start', toolCallId: 'b', toolName: 'bash', args: { command: 'y'.repeat(5000) } }));
  const start = r.toolCalls[0];
  assert.equal(start.status, 'running');
  const update = r.render(ev({ type: 'tool_execution_update', toolCallId: 'b', toolName: 'bash', output: 'z'.repeat(10000) }));
  assert.ok(update.length < LIMITS.updateChars + 100, String(update.length));
  assert.ok(update.startsWith('  │ zzz'));
  const end = r.render(ev({ type: 'tool_execution_end', toolCallId: 'b', toolName: 'bash', isError: false, result: { content: [{ type: 'text', text: big }] } }));
  const lines = end.trimEnd().split('\n');
  assert.equal(lines.length, 1 + LIMITS.resultLines + 1);
  assert.equal(lines[lines.length - 1], `    … (${50 - LIMITS.resultLines} more lines)`);
  assert.ok(lines.every((l) => l.length <= LIMITS.lineChars + 40));
  assert.ok(r.toolCalls[0].result!.length < 4100);
});

test('external calls are marked; unknown and malformed events do not break the transcript', () => {
  const r = new TranscriptRenderer();
  assert.equal(r.render(ev({ type: 'tool_execution_start', toolCallId: 'x', toolName: 'ls', args: {} }, 'external')), '[external] ▶ ls {}\n');
  assert.equal(r.render(ev({ type: 'something_new' })), '');
  assert.match(r.render({ nope: 1 }), /ignored a malformed pi\/event/);
  assert.match(r.render(null), /ignored a malformed pi\/event/);
  // an end without a start still records the call
  r.render(ev({ type: 'tool_execution_end', toolCallId: 'y', toolName: 'grep', isError: false, result: {} }));
  assert.deepEqual(r.toolCalls.map((c) => [c.name, c.status]), [['ls', 'running'], ['grep', 'done']]);
});

test('resultText and cut', () => {
  assert.equal(resultText({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: '…' }, { type: 'text', text: 'b' }] }), 'a\n[image]\nb');
  assert.equal(resultText('nope'), '');
  assert.equal(cut('abcdef', 3), 'abc… (+3 chars)');
  assert.equal(cut('abc', 3), 'abc');
});
