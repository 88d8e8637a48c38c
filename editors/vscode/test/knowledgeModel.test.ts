import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  BoundExceeded, Converter, ExtensionInfo, KNOWLEDGE_CAPABILITIES, LANGUAGE_COMMANDS, Timers, UNNAMED_PROVIDER, UriCoalescer, bounded, hoverResult,
  languageExtensions, locationsResult, parseLanguageRequest, renameResult, serverNames, symbolsResult, withoutOwn,
} from '../src/knowledgeModel';

// Stand-ins for VS Code's Uri / Range / SymbolKind (VS Code's SymbolKind is 0-based, LSP's 1-based).
const uri = (path: string) => ({ toString: () => `file://${path}` });
const range = (l1: number, c1: number, l2: number, c2: number) => ({ s: [l1, c1], e: [l2, c2] });
const c: Converter = {
  asUri: (u) => (u as { toString(): string }).toString(),
  asRange: (r) => {
    const { s, e } = r as { s: number[]; e: number[] };
    return { start: { line: s[0], character: s[1] }, end: { line: e[0], character: e[1] } };
  },
  asSymbolKind: (k) => k + 1,
};
const lsp = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });

test('the capabilities name the five methods and each has its VS Code command', () => {
  assert.deepEqual(KNOWLEDGE_CAPABILITIES, {
    diagnostics: true,
    languageRequests: ['textDocument/definition', 'textDocument/references', 'textDocument/rename', 'textDocument/documentSymbol', 'textDocument/hover'],
  });
  assert.equal(LANGUAGE_COMMANDS['textDocument/rename'], 'vscode.executeDocumentRenameProvider');
});

test('a languageRequest is parsed into document, UTF-16 position and new name', () => {
  const doc = { uri: 'file:///w/a.py' };
  assert.deepEqual(parseLanguageRequest({ method: 'textDocument/definition', params: { textDocument: doc, position: { line: 3, character: 7 } } }),
    { method: 'textDocument/definition', command: 'vscode.executeDefinitionProvider', uri: 'file:///w/a.py', position: { line: 3, character: 7 } });
  assert.deepEqual(parseLanguageRequest({ method: 'textDocument/documentSymbol', params: { textDocument: doc } }),
    { method: 'textDocument/documentSymbol', command: 'vscode.executeDocumentSymbolProvider', uri: 'file:///w/a.py' });
  const rename = parseLanguageRequest({ method: 'textDocument/rename', params: { textDocument: doc, position: { line: 0, character: 0 }, newName: 'b' } });
  assert.equal(typeof rename === 'object' && rename.newName, 'b');
});

test('a malformed languageRequest gets a message saying what is wrong', () => {
  const doc = { uri: 'file:///w/a.py' };
  const cases: [unknown, RegExp][] = [
    [null, /needs \{method, params\}/],
    [{ method: 'textDocument/completion', params: {} }, /does not answer textDocument\/completion/],
    [{ method: 'textDocument/hover', params: { position: { line: 0, character: 0 } } }, /textDocument\.uri is missing/],
    [{ method: 'textDocument/hover', params: { textDocument: doc, position: { line: -1, character: 0 } } }, /integers >= 0/],
    [{ method: 'textDocument/hover', params: { textDocument: doc, position: { line: 1.5, character: 0 } } }, /integers >= 0/],
    [{ method: 'textDocument/references', params: { textDocument: doc } }, /params\.position/],
    [{ method: 'textDocument/rename', params: { textDocument: doc, position: { line: 0, character: 0 }, newName: '' } }, /newName/],
  ];
  for (const [params, message] of cases) {
    const parsed = parseLanguageRequest(params);
    assert.equal(typeof parsed, 'string', JSON.stringify(params));
    assert.match(parsed as string, message);
  }
});

const ext = (id: string, json: ExtensionInfo['packageJSON'], isActive = true): ExtensionInfo => ({ id, isActive, packageJSON: json });

test('the servers of a document are the code extensions activated by its language, never pi-lsp', () => {
  const all = [
    ext('pi-lsp.pi-lsp', { main: './dist/extension.js', activationEvents: ['onLanguage:python'] }),
    ext('vscode.python', { activationEvents: ['onLanguage:python'] }), // grammar only: no code
    ext('test.pylsp', { displayName: 'Python (pylsp)', main: 'x.js', activationEvents: ['onLanguage:python'] }),
    ext('test.any', { name: 'any', main: 'x.js', activationEvents: ['onLanguage'] }),
    ext('test.md', { main: 'x.js', activationEvents: ['onLanguage:markdown'] }),
    ext('test.svelte', { main: 'x.js', contributes: { languages: [{ id: 'svelte' }] } }), // implicit onLanguage:svelte
    ext('test.grammar', { contributes: { languages: [{ id: 'svelte' }] } }), // no code
  ];
  const python = languageExtensions('python', all, 'Pi-LSP.pi-lsp');
  assert.deepEqual(python.map((e) => e.id), ['test.pylsp']);
  assert.deepEqual(serverNames(python, false), ['Python (pylsp)']);
  assert.deepEqual(serverNames(languageExtensions('markdown', all, 'pi-lsp.pi-lsp'), true), ['test.md']);
  assert.deepEqual(languageExtensions('plaintext', all, 'pi-lsp.pi-lsp'), []);
  assert.deepEqual(languageExtensions('svelte', all, 'pi-lsp.pi-lsp').map((e) => e.id), ['test.svelte']);
});

test('servers is empty only when no extension serves the language and no provider answered', () => {
  assert.deepEqual(serverNames([], false), []);
  assert.deepEqual(serverNames([], true), [UNNAMED_PROVIDER]);
  const inactive = [ext('test.slow', { name: 'slow', main: 'x', activationEvents: ['onLanguage:python'] }, false)];
  assert.deepEqual(serverNames(inactive, false), [], 'an extension that did not activate in time is not attached');
});

test('locations and links become LSP JSON, de-duplicated by uri and range, in order', () => {
  const result = locationsResult([
    { uri: uri('/w/a.py'), range: range(1, 4, 1, 9) },
    { uri: uri('/w/b.py'), range: range(0, 0, 0, 3) },
    { uri: uri('/w/a.py'), range: range(1, 4, 1, 9) },
    { targetUri: uri('/w/c.py'), targetRange: range(2, 0, 5, 0), targetSelectionRange: range(2, 4, 2, 8), originSelectionRange: range(9, 1, 9, 5) },
    { targetUri: uri('/w/c.py'), targetRange: range(2, 0, 5, 0), targetSelectionRange: range(2, 4, 2, 8) },
    { targetUri: uri('/w/d.py'), targetRange: range(7, 0, 7, 3) },
    'junk',
  ], c);
  assert.deepEqual(result, [
    { uri: 'file:///w/a.py', range: lsp(1, 4, 1, 9) },
    { uri: 'file:///w/b.py', range: lsp(0, 0, 0, 3) },
    { targetUri: 'file:///w/c.py', targetRange: lsp(2, 0, 5, 0), targetSelectionRange: lsp(2, 4, 2, 8), originSelectionRange: lsp(9, 1, 9, 5) },
    { targetUri: 'file:///w/d.py', targetRange: lsp(7, 0, 7, 3), targetSelectionRange: lsp(7, 0, 7, 3) },
  ]);
  assert.equal(locationsResult([], c), null);
  assert.equal(locationsResult(undefined, c), null);
});

test('document symbols keep their nesting; SymbolInformation stays flat; kinds become LSP kinds', () => {
  const method = { name: 'greet', detail: 'def greet(name)', kind: 5, range: range(3, 4, 4, 20), selectionRange: range(3, 8, 3, 13), children: [] };
  const cls = { name: 'Greeter', detail: '', kind: 4, range: range(2, 0, 4, 20), selectionRange: range(2, 6, 2, 13), children: [method], tags: [1] };
  assert.deepEqual(symbolsResult([cls], c), [{
    name: 'Greeter', kind: 5, range: lsp(2, 0, 4, 20), selectionRange: lsp(2, 6, 2, 13), tags: [1],
    children: [{ name: 'greet', kind: 6, detail: 'def greet(name)', range: lsp(3, 4, 4, 20), selectionRange: lsp(3, 8, 3, 13), children: [] }],
  }]);
  assert.deepEqual(symbolsResult([{ name: 'x', kind: 12, containerName: 'm', location: { uri: uri('/w/a.py'), range: range(0, 0, 0, 1) } }], c),
    [{ name: 'x', kind: 13, containerName: 'm', location: { uri: 'file:///w/a.py', range: lsp(0, 0, 0, 1) } }]);
  assert.equal(symbolsResult(undefined, c), null);
  assert.equal(symbolsResult([], c), null);
});

test('hover: the first hover with text, as Markdown', () => {
  const hovers = [
    { contents: [{ value: '' }] },
    { contents: [{ language: 'python', value: 'def greet(name)' }, { value: 'Say hello.' }, 'plain'], range: range(1, 4, 1, 9) },
    { contents: [{ value: 'second provider' }] },
  ];
  assert.deepEqual(hoverResult(hovers, c), {
    contents: { kind: 'markdown', value: '```python\ndef greet(name)\n```\n\nSay hello.\n\nplain' }, range: lsp(1, 4, 1, 9),
  });
  assert.equal(hoverResult([{ contents: [] }], c), null);
  assert.equal(hoverResult(undefined, c), null);
});

test('rename: the edit per file as LSP changes; an edit that changes nothing is null', () => {
  const entries = [
    [uri('/w/a.py'), [{ range: range(0, 4, 0, 9), newText: 'hello' }, { range: range(5, 0, 5, 5), newText: 'hello' }]],
    [uri('/w/b.py'), []],
    [uri('/w/c.py'), [{ range: range(1, 0, 1, 5), newText: 'hello' }]],
  ] as const;
  assert.deepEqual(renameResult(entries, c), {
    changes: {
      'file:///w/a.py': [{ range: lsp(0, 4, 0, 9), newText: 'hello' }, { range: lsp(5, 0, 5, 5), newText: 'hello' }],
      'file:///w/c.py': [{ range: lsp(1, 0, 1, 5), newText: 'hello' }],
    },
  });
  assert.equal(renameResult([], c), null);
  assert.equal(renameResult(undefined, c), null);
});

test("pi-lsp's own diagnostics are taken out as a multiset", () => {
  const key = (d: { m: string }) => d.m;
  const all = [{ m: 'a' }, { m: 'pi' }, { m: 'b' }, { m: 'pi' }];
  assert.deepEqual(withoutOwn(all, [{ m: 'pi' }], key), [{ m: 'a' }, { m: 'b' }, { m: 'pi' }]);
  assert.deepEqual(withoutOwn(all, [], key), all);
  assert.deepEqual(withoutOwn(all, [{ m: 'pi' }, { m: 'pi' }, { m: 'zz' }], key), [{ m: 'a' }, { m: 'b' }]);
});

test('diagnostics changes are coalesced: one notification per window, each uri once, at most delay after the first', () => {
  const pending: { fn: () => void; ms: number }[] = [];
  const timers: Timers = {
    set: (fn, ms) => { const t = { fn, ms }; pending.push(t); return t; },
    clear: (h) => { pending.splice(pending.indexOf(h as never), 1); },
  };
  const sent: string[][] = [];
  const coalescer = new UriCoalescer((uris) => sent.push(uris), 50, timers);
  coalescer.add([]);
  assert.equal(pending.length, 0, 'nothing to send: no timer');
  coalescer.add(['file:///a', 'file:///b']);
  coalescer.add(['file:///a', 'file:///c']);
  assert.equal(pending.length, 1);
  assert.equal(pending[0].ms, 50);
  pending.shift()!.fn();
  assert.deepEqual(sent, [['file:///a', 'file:///b', 'file:///c']]);
  coalescer.add(['file:///a']);
  assert.equal(pending.length, 1, 'a new window starts with the next change');
  coalescer.dispose();
  assert.equal(pending.length, 0);
  assert.equal(sent.length, 1, 'disposed: what was pending is dropped');
});

test('the coalescer dates each uri with the newest version given, undated when one change was', () => {
  const pending: { fn: () => void }[] = [];
  const timers: Timers = { set: (fn) => { const t = { fn }; pending.push(t); return t; }, clear: (h) => { pending.splice(pending.indexOf(h as never), 1); } };
  const sent: [string[], Record<string, number> | undefined][] = [];
  const coalescer = new UriCoalescer((uris, versions) => sent.push([uris, versions]), 50, timers);
  const versions = new Map([['file:///a', 3], ['file:///b', 7]]);
  coalescer.add(['file:///a', 'file:///b', 'file:///c'], (u) => versions.get(u));
  versions.set('file:///a', 4);
  versions.delete('file:///b');
  coalescer.add(['file:///a', 'file:///b'], (u) => versions.get(u));
  pending.shift()!.fn();
  assert.deepEqual(sent, [[['file:///a', 'file:///b', 'file:///c'], { 'file:///a': 4 }]]);
  coalescer.add(['file:///c']);
  pending.shift()!.fn();
  assert.deepEqual(sent[1], [['file:///c'], undefined], 'no version known: no versions field');
});

test('a provider that never answers: cancelled by pi-lsp or out of time, never a hang', async () => {
  const never = new Promise<number>(() => {});
  const listeners: (() => void)[] = [];
  const token = { isCancellationRequested: false, onCancellationRequested: (l: () => void) => { listeners.push(l); return { dispose: () => listeners.splice(listeners.indexOf(l), 1) }; } };
  const pending: { fn: () => void }[] = [];
  const timers: Timers = { set: (fn) => { const t = { fn }; pending.push(t); return t; }, clear: (h) => { pending.splice(pending.indexOf(h as never), 1); } };

  const cancelled = bounded(never, token, 30000, timers);
  listeners[0]();
  await assert.rejects(cancelled, (e: unknown) => e instanceof BoundExceeded && e.cancelled && /cancelled by pi-lsp/.test(e.message));
  assert.equal(listeners.length, 0, 'the listener is removed');
  assert.equal(pending.length, 0, 'the timer is cleared');

  const late = bounded(never, token, 30000, timers);
  pending[0].fn();
  await assert.rejects(late, (e: unknown) => e instanceof BoundExceeded && !e.cancelled && /within 30 s/.test(e.message));

  await assert.rejects(bounded(never, { ...token, isCancellationRequested: true }, 30000, timers), (e: unknown) => e instanceof BoundExceeded && e.cancelled);
  assert.equal(await bounded(Promise.resolve(7), token, 30000, timers), 7);
  assert.equal(pending.length, 0);
});
