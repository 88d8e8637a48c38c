import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { LINE_CHARS, diffHtml, entryHtml, escapeHtml, markdownHtml, toolLine } from '../src/transcriptHtml';
import { ApprovalEntry, ToolEntry, TranscriptModel } from '../src/transcriptModel';

const tool = (over: Partial<ToolEntry>): ToolEntry => ({
  id: 'e1', kind: 'tool', toolCallId: 'c', name: 'bash', args: { command: 'ls' }, state: 'running', external: false, liveTail: '', ...over,
});
const approval = (over: Partial<ApprovalEntry>): ApprovalEntry => ({
  id: 'e2', kind: 'approval', approvalId: 'a1', toolCallId: 'c', toolName: 'bash', title: 'Run bash: rm -rf build',
  actions: [{ id: 'allowOnce', title: 'Allow once' }, { id: 'allowSession', title: 'Allow for this session' }, { id: 'deny', title: 'Deny' }],
  defaultAction: null, pending: true, ...over,
});

test('tool lines are readable: tool and subject, not JSON', () => {
  assert.equal(toolLine('edit', { path: 'textkit/slug.py', edits: [] }), 'edit textkit/slug.py');
  assert.equal(toolLine('bash', { command: 'python3 -m unittest -q' }), 'bash python3 -m unittest -q');
  assert.equal(toolLine('bash', { command: 'cd a\nmake' }), 'bash cd a …');
  assert.equal(toolLine('read', { path: 'a.py', offset: 10, limit: 5 }), 'read a.py:10+5');
  assert.equal(toolLine('grep', { pattern: 'TODO', path: 'src' }), 'grep TODO src');
  assert.equal(toolLine('write', {}), 'write');
  assert.equal(toolLine('mcp_thing', { q: 1 }), 'mcp_thing {"q":1}');
  assert.equal(toolLine('bash', { command: 'x'.repeat(500) }).length, LINE_CHARS + 1);
});

test('Markdown is rendered, raw HTML in it is escaped, script links are refused', () => {
  const html = markdownHtml('**bold** and `code`\n\n<script>alert(1)</script> <img src=x onerror=alert(1)>\n\n[x](javascript:alert(1))');
  assert.match(html, /<strong>bold<\/strong>/);
  assert.match(html, /<code>code<\/code>/);
  assert.ok(!html.includes('<script>') && !html.includes('<img'), html);
  assert.match(html, /&lt;script&gt;/);
  assert.ok(!html.includes('href="javascript:'), html);
});

test('a running command shows its live tail; a finished edit its diff with + and - lines', () => {
  const running = entryHtml(tool({ liveTail: 'a\n<b>\n' }));
  assert.match(running, /class="entry tool running"/);
  assert.match(running, /<pre class="live-tail">a\n&lt;b&gt;<\/pre>/);
  assert.match(running, /<summary>.*bash ls.*running/);
  const edit = entryHtml(tool({ name: 'edit', args: { path: 'g.py' }, state: 'done', result: 'Successfully replaced', diff: ' 1 def f():\n-2     return 1\n+2     return 2', liveTail: 'gone' }));
  assert.ok(!edit.includes('live-tail'), 'no live tail once done');
  assert.match(edit, /<span class="del">-2     return 1<\/span>/);
  assert.match(edit, /<span class="add">\+2     return 2<\/span>/);
  assert.match(edit, /<span class="ctx"> 1 def f\(\):<\/span>/);
  assert.match(edit, /<details><summary>.*edit g\.py.*<\/summary><div class="body">.*&quot;path&quot;: &quot;g\.py&quot;.*Successfully replaced/s);
});

test('errors are marked; the end states read done, aborted, failed with the reason', () => {
  const failed = entryHtml(tool({ state: 'error', result: 'exit code 1: <boom>' }));
  assert.match(failed, /class="entry tool error"/);
  assert.match(failed, /<span class="state">failed<\/span>/);
  assert.match(failed, /<pre class="error-result">exit code 1: &lt;boom&gt;<\/pre>/);
  assert.match(entryHtml({ id: 'x', kind: 'end', state: 'done' }), /data-state="done">✔ Done</);
  assert.match(entryHtml({ id: 'x', kind: 'end', state: 'aborted' }), /■ Aborted/);
  assert.match(entryHtml({ id: 'x', kind: 'end', state: 'error', reason: '<401>' }), /✗ Failed: &lt;401&gt;/);
  assert.match(entryHtml({ id: 'x', kind: 'assistant', text: 'hi', error: 'rate <limited>' }), /error-line">✗ Model error: rate &lt;limited&gt;/);
  assert.match(entryHtml({ id: 'x', kind: 'note', text: '✗ gone', error: true }), /class="entry note error"/);
});

test('a pending approval has buttons, none preselected unless the server names a default; a decided one has none', () => {
  const pending = entryHtml(approval({}));
  assert.equal((pending.match(/<button /g) ?? []).length, 3);
  assert.ok(!pending.includes('data-default'), 'nothing preselected');
  assert.match(pending, /data-approval="a1" data-action="deny">Deny</);
  const readOnly = entryHtml(approval({ defaultAction: 'allowOnce' }));
  assert.equal((readOnly.match(/data-default="true"/g) ?? []).length, 1);
  assert.match(readOnly, /class="primary" data-approval="a1" data-action="allowOnce" data-default="true"/);
  const timedOut = entryHtml(approval({ pending: false, actions: [], outcome: 'Approval timed out after 2 s: denied', denied: true }));
  assert.ok(!timedOut.includes('<button'), timedOut);
  assert.match(timedOut, /class="entry approval denied"/);
  assert.match(timedOut, /<div class="outcome">Approval timed out after 2 s: denied<\/div>/);
});

test('diffHtml knows patches too; escapeHtml escapes the five characters', () => {
  assert.equal(diffHtml('--- a\n+++ a\n@@ -1 +1 @@\n-x\n+y\n'),
    '<pre class="diff"><span class="file">--- a</span>\n<span class="file">+++ a</span>\n<span class="hunk">@@ -1 +1 @@</span>\n<span class="del">-x</span>\n<span class="add">+y</span></pre>');
  assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
});

test('an approval inside its tool call comes before the call\'s result', () => {
  const html = entryHtml(tool({ state: 'error', result: 'needs the user\'s approval and was not run',
    approval: approval({ pending: false, actions: [], outcome: 'Approval timed out after 2 s: denied', denied: true }) }));
  const card = html.indexOf('class="approval denied"');
  assert.ok(card > html.indexOf('</details>') && card < html.indexOf('error-result'), html);
  assert.equal((html.match(/data-id=/g) ?? []).length, 1, 'only the entry itself carries data-id');
});

test('after a run that changed files, a link to review them', () => {
  assert.equal(entryHtml({ id: 'e9', kind: 'changes', files: 2 }),
    '<div class="entry changes" data-id="e9"><button type="button" class="link review-changes">2 files changed: review</button></div>');
  assert.match(entryHtml({ id: 'e9', kind: 'changes', files: 1 }), />1 file changed: review</);
});

test('steering and queued messages show as the user\'s, marked; a plain prompt is unmarked', () => {
  const m = new TranscriptModel();
  const [plain] = m.prompt('fix it');
  const [steering] = m.prompt('use <staging>', 'steer');
  const [queued] = m.prompt('then run the tests', 'followUp');
  assert.match(entryHtml(plain), /^<div class="entry prompt" data-id="[^"]+"><span class="who">You<\/span>/);
  assert.match(entryHtml(steering), /class="entry prompt steering"[^>]*data-delivery="steering"/);
  assert.match(entryHtml(steering), /You · steering \(sent with the next model request\)<\/span><div class="text">use &lt;staging&gt;<\/div>/);
  assert.match(entryHtml(queued), /class="entry prompt queued"[^>]*data-delivery="queued"/);
  assert.match(entryHtml(queued), /You · queued \(runs when this run ends\)/);
});

test('the language tools (issue 17) read as path:line and symbol', () => {
  assert.equal(toolLine('definition', { path: 'app.py', line: 3, symbol: 'greet' }), 'definition app.py:3 greet');
  assert.equal(toolLine('references', { path: 'app.py', line: 3, symbol: 'greet', occurrence: 2 }), 'references app.py:3 greet (#2)');
  assert.equal(toolLine('rename', { path: 'greeting.py', line: 1, symbol: 'greet', newName: 'welcome' }), 'rename greeting.py:1 greet → welcome');
  assert.equal(toolLine('hover', { path: 'app.py', line: 1, symbol: 'greet' }), 'hover app.py:1 greet');
  assert.equal(toolLine('symbols', { path: 'notes.txt' }), 'symbols notes.txt');
  assert.equal(toolLine('diagnostics', { path: 'app.py' }), 'diagnostics app.py');
  assert.equal(toolLine('diagnostics', {}), 'diagnostics workspace');
  assert.equal(toolLine('definition', {}), 'definition');
});
