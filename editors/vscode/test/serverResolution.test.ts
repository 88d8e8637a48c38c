import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  INSTALL_COMMANDS, checkServerInfo, compareVersions, isExecutableFile, resolveServer,
} from '../src/serverResolution';

/** A temp folder with real files: `bin1/pi-lsp` (not executable), `bin2/pi-lsp` (executable). */
function fixture() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pi-vscode-res-'));
  const dirs = ['bin1', 'bin2', 'empty'].map((d) => path.join(root, d));
  dirs.forEach((d) => fs.mkdirSync(d));
  fs.writeFileSync(path.join(dirs[0], 'pi-lsp'), '#!/bin/sh\n', { mode: 0o644 });
  fs.writeFileSync(path.join(dirs[1], 'pi-lsp'), '#!/bin/sh\n', { mode: 0o755 });
  fs.mkdirSync(path.join(dirs[2], 'pi-lsp')); // a directory named like the server
  return { root, bin1: dirs[0], bin2: dirs[1], empty: dirs[2] };
}

test('PATH is searched in order, skipping non-executables and directories', () => {
  const f = fixture();
  const envPath = ['', f.empty, f.bin1, f.bin2].join(path.delimiter);
  assert.deepEqual(resolveServer({ configuredPath: '', envPath }),
    { kind: 'found', command: path.join(f.bin2, 'pi-lsp'), source: 'PATH' });
});

test('the setting wins over PATH, with ~ expanded', () => {
  const f = fixture();
  const res = resolveServer({ configuredPath: '~/bin2/pi-lsp', envPath: f.bin2, home: f.root });
  assert.deepEqual(res, { kind: 'found', command: path.join(f.bin2, 'pi-lsp'), source: 'setting' });
});

test('a set but unusable setting is reported, never silently replaced by PATH', () => {
  const f = fixture();
  const res = resolveServer({ configuredPath: path.join(f.bin1, 'pi-lsp'), envPath: f.bin2 });
  assert.equal(res.kind, 'missing');
  assert.match((res as any).message, /pi\.server\.path is ".*bin1\/pi-lsp", which is not an executable file/);
  const wrongType = resolveServer({ configuredPath: 42, envPath: f.bin2 });
  assert.equal(wrongType.kind, 'missing');
  assert.match((wrongType as any).message, /must be a string, not 42/);
});

test('a blank setting means unset; nothing found gives the install commands', () => {
  const f = fixture();
  assert.equal(resolveServer({ configuredPath: '   ', envPath: f.bin2 }).kind, 'found');
  const res = resolveServer({ configuredPath: undefined, envPath: [f.bin1, f.empty].join(path.delimiter) });
  assert.equal(res.kind, 'missing');
  assert.deepEqual((res as any).installCommands, INSTALL_COMMANDS);
  assert.match((res as any).message, /pipx install \/path\/to\/pi-lsp.*uv tool install \/path\/to\/pi-lsp/);
  assert.equal(resolveServer({ configuredPath: '', envPath: undefined }).kind, 'missing');
});

test('isExecutableFile on real files', () => {
  const f = fixture();
  assert.equal(isExecutableFile(path.join(f.bin2, 'pi-lsp')), true);
  assert.equal(isExecutableFile(path.join(f.bin1, 'pi-lsp')), false);
  assert.equal(isExecutableFile(path.join(f.empty, 'pi-lsp')), false);
  assert.equal(isExecutableFile(path.join(f.root, 'nope')), false);
});

test('compareVersions orders numerically and ignores suffixes', () => {
  assert.ok(compareVersions('0.10.0', '0.9.9') > 0);
  assert.ok(compareVersions('0.1', '0.1.1') < 0);
  assert.equal(compareVersions('1.2.0-rc1', '1.2'), 0);
  assert.equal(compareVersions('0.1.0+local', '0.1.0'), 0);
});

test('checkServerInfo accepts pi-lsp at the minimum and names every other case', () => {
  assert.equal(checkServerInfo({ name: 'pi-lsp', version: '0.1.0' }, '0.1.0'), undefined);
  assert.equal(checkServerInfo({ name: 'pi-lsp', version: '1.0.0' }, '0.1.0'), undefined);
  assert.match(checkServerInfo({ name: 'pi-lsp', version: '0.0.9' }, '0.1.0')!, /0\.0\.9 is too old.*0\.1\.0/);
  assert.match(checkServerInfo({ name: 'pi-lsp' }, '0.1.0')!, /unknown version/);
  assert.match(checkServerInfo({ name: 'pylsp', version: '9' })!, /"pylsp", not pi-lsp/);
  assert.match(checkServerInfo(undefined)!, /without serverInfo/);
});
