import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { beforeText, changedFileCount, fileRows, filesChangedAfter, hunkRows, parseChangeSet, splitLines } from '../src/changesModel';

// A pi/changes result as the daemon sends it: two.py had "one" and "five" edited (ONE, FIVE), the user
// then typed a line at the top, so the applied hunks moved down one line (currentStart).
const wire = {
  sessionId: 's1', turn: null, currentTurn: 3,
  files: [
    {
      path: '/ws/src/two.py', state: 'modified', binary: false, restorable: true, current: 'changed',
      toolCalls: [{ toolCallId: 'c1', toolName: 'edit', turn: '2' }, { toolCallId: 'c2', toolName: 'edit', turn: '3' }],
      hunks: [
        { id: 'h1', oldStart: 0, oldLines: 1, newStart: 0, newLines: 1, oldText: 'one\n', newText: 'ONE\n', status: 'applied', currentStart: 1 },
        { id: 'h2', oldStart: 4, oldLines: 1, newStart: 4, newLines: 1, oldText: 'five\n', newText: 'FIVE\n', status: 'kept', currentStart: 5 },
      ],
    },
    { path: '/ws/made.txt', state: 'created', binary: false, restorable: true, current: 'agent', toolCalls: [{ toolName: 'write' }], hunks: [] },
    { path: '/ws/gone.txt', state: 'deleted', binary: false, restorable: true, current: 'reverted', toolCalls: [{ toolName: 'bash' }], hunks: [] },
  ],
};

test('the pi/changes result is parsed and checked', () => {
  const set = parseChangeSet(wire);
  assert.equal(set.sessionId, 's1');
  assert.equal(set.currentTurn, 3);
  assert.equal(set.currentPrompt, undefined); // no prompt recorded (the session external)
  assert.equal(parseChangeSet({ ...wire, currentPrompt: 2 }).currentPrompt, 2);
  assert.equal(parseChangeSet({ ...wire, currentPrompt: 0 }).currentPrompt, undefined);
  assert.deepEqual(set.files.map((f) => f.toolNames), [['edit'], ['write'], ['bash']]);
  assert.equal(set.files[0].hunks[0].currentStart, 1);
  assert.throws(() => parseChangeSet({ sessionId: 's', files: [{ path: 1 }] }), /files\[0\]\.path: expected a string/);
  const bad = structuredClone(wire);
  bad.files[0].hunks[0].status = 'gone';
  assert.throws(() => parseChangeSet(bad), /unknown status "gone"/);
  assert.throws(() => parseChangeSet(null), /result: expected an object/);
});

test('file rows: name, folder relative to the workspace, what happened, whether Undo applies', () => {
  const rows = fileRows(parseChangeSet(wire), '/ws');
  assert.deepEqual(rows.map((r) => [r.label, r.description, r.contextValue, r.hasChildren]), [
    ['two.py', 'src  modified · 2 hunks', 'piChangeFile.undoable', true],
    ['made.txt', 'created', 'piChangeFile.undoable', false],
    ['gone.txt', 'deleted · reverted', 'piChangeFile.done', false],
  ]);
  assert.equal(rows[0].id, 'file:/ws/src/two.py');
  assert.match(rows[0].tooltip, /modified by edit/);
});

test('hunk rows: where the lines are now (1-based), the first changed line, the status', () => {
  const [file] = parseChangeSet(wire).files;
  const rows = hunkRows(file);
  assert.deepEqual(rows.map((r) => [r.label, r.description, r.contextValue, r.hunkId]), [
    ['~ line 2: ONE', 'applied', 'piChangeHunk.applied', 'h1'],
    ['~ line 6: FIVE', 'kept', 'piChangeHunk.kept', 'h2'],
  ]);
  const inserted = hunkRows({ ...file, hunks: [{ ...file.hunks[0], oldLines: 0, oldText: '', newLines: 2, newText: 'a\nb\n', currentStart: 3 }] });
  assert.equal(inserted[0].label, '+ lines 4-5: a');
  const removed = hunkRows({ ...file, hunks: [{ ...file.hunks[0], newLines: 0, newText: '', currentStart: 3 }] });
  assert.equal(removed[0].label, '− after line 3: one');
});

test('the before text puts the old lines back where the located hunks are now', () => {
  const [file, created] = parseChangeSet(wire).files;
  const current = '# user\nONE\ntwo\nthree\nfour\nFIVE\n';
  assert.equal(beforeText(file, current), '# user\none\ntwo\nthree\nfour\nfive\n');
  // a changed hunk cannot be located: it stays as it is now; a reverted one is already back
  const changed = { ...file, hunks: [{ ...file.hunks[0], status: 'changed' as const, currentStart: undefined }, { ...file.hunks[1], status: 'reverted' as const }] };
  assert.equal(beforeText(changed, 'ONE!\ntwo\n'), 'ONE!\ntwo\n');
  assert.equal(beforeText(created, 'anything\n'), '');
  // a hunk that removed lines (newLines 0) gets them back at its position
  const deletion = { ...file, hunks: [{ id: 'd', oldStart: 1, oldLines: 2, newStart: 1, newLines: 0, oldText: 'b\nc\n', newText: '', status: 'applied' as const, currentStart: 1 }] };
  assert.equal(beforeText(deletion, 'a\nd\n'), 'a\nb\nc\nd\n');
});

test('lines split where the server splits them (CRLF is one ending, a form feed is one too)', () => {
  assert.deepEqual(splitLines('a\r\nb\rc\fd\ne'), ['a\r\n', 'b\r', 'c\f', 'd\n', 'e']);
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(splitLines('x\n'), ['x\n']);
});

test('the transcript counts the files still as the agent left them', () => {
  assert.equal(changedFileCount(parseChangeSet(wire)), 2);
});

test('the files a prompt changed are those with a call after the turn the previous prompt ended at', () => {
  const set = parseChangeSet(wire); // made.txt and gone.txt have no turn: not counted
  assert.deepEqual(set.files[0].turns, [2, 3]);
  assert.deepEqual(filesChangedAfter(set, 2).map((f) => f.path), ['/ws/src/two.py']);
  assert.deepEqual(filesChangedAfter(set, 3), []);
});
