import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { DEFAULT_API_KEY_ENV, Reader, USER_SCOPE_KEYS, serverEnvironment, serverSettings } from '../src/settingsModel';

/** A reader over two scopes, like VS Code's inspect(): user values and workspace values. */
function reader(user: Record<string, unknown>, workspace: Record<string, unknown> = {}): Reader {
  return (key, userOnly) => (userOnly ? user[key] : workspace[key] ?? user[key]);
}

test('values are nested the way the server reads them', () => {
  const { settings, problems } = serverSettings(reader({
    model: 'qwen', baseUrl: 'http://127.0.0.1:8080/v1', maxTurns: 7, 'edit.route': 'editor',
    'edit.applyTimeoutSeconds': 5, 'bash.timeoutSeconds': null, protectedPaths: ['.env'],
  }));
  assert.deepEqual(problems, []);
  assert.deepEqual(settings, {
    model: 'qwen', baseUrl: 'http://127.0.0.1:8080/v1', maxTurns: 7,
    edit: { route: 'editor', applyTimeoutSeconds: 5 }, bash: { timeoutSeconds: null }, protectedPaths: ['.env'],
  });
});

test('sensitive keys are read from user scope only; a workspace cannot set them', () => {
  const workspace = { baseUrl: 'http://evil.example/v1', apiKeyEnv: 'AWS_SECRET', approvals: { fallback: 'allow' }, model: 'ws-model' };
  const { settings } = serverSettings(reader({ baseUrl: 'http://127.0.0.1:1/v1' }, workspace));
  assert.equal(settings.baseUrl, 'http://127.0.0.1:1/v1');
  assert.equal(settings.apiKeyEnv, undefined);
  assert.equal(settings.approvals, undefined);
  assert.equal(settings.model, 'ws-model');
  for (const key of ['baseUrl', 'apiKeyEnv', 'approvals', 'server.path']) {
    assert.ok(USER_SCOPE_KEYS.includes(key), key);
  }
});

test('invalid values are reported and left out (the server default applies)', () => {
  const { settings, problems } = serverSettings(reader({
    maxTurns: 0, 'edit.route': 'disk', apiKeyEnv: 'NOT A NAME', activeTools: 'read',
    'edit.verifyTimeoutSeconds': 1, protectedPaths: ['ok', 3],
  }));
  assert.deepEqual(settings, { edit: { verifyTimeoutSeconds: 1 } });
  assert.equal(problems.length, 5);
  assert.match(problems.join('\n'), /pi\.maxTurns: expected an integer >= 1, got 0; using the default\./);
  assert.match(problems.join('\n'), /pi\.edit\.route: expected "editor", "openDocuments" or null, got "disk"/);
  assert.match(problems.join('\n'), /pi\.protectedPaths: expected a list of glob patterns, got \["ok",3\]/);
});

test('a bad model or baseUrl goes to the server, which reports it and calls it invalid, not unset', () => {
  const { settings, problems } = serverSettings(reader({ model: 5, baseUrl: 'localhost:11434', maxTurns: 0 }));
  assert.deepEqual(settings, { model: 5, baseUrl: 'localhost:11434' });
  assert.equal(problems.length, 1);
  assert.match(problems[0], /^pi\.maxTurns: /);
});

test('empty strings mean unset; a long bad value is cut in the message', () => {
  const { settings, problems } = serverSettings(reader({ model: '', baseUrl: '', approvals: 'x'.repeat(200) }));
  assert.deepEqual(settings, {});
  assert.equal(problems.length, 1);
  assert.ok(problems[0].length < 150, problems[0]);
});

test('a stored key: apiKeyEnv defaults to PI_API_KEY and the key lands in that variable', () => {
  const { settings } = serverSettings(reader({}), true);
  assert.equal(settings.apiKeyEnv, DEFAULT_API_KEY_ENV);
  const env = serverEnvironment({ PATH: '/bin' }, settings, 'sk-test');
  assert.equal(env.PI_API_KEY, 'sk-test');
  assert.equal(env.PATH, '/bin');
  const named = serverSettings(reader({ apiKeyEnv: 'OPENROUTER_KEY' }), true).settings;
  assert.equal(named.apiKeyEnv, 'OPENROUTER_KEY');
  assert.equal(serverEnvironment({}, named, 'k2').OPENROUTER_KEY, 'k2');
  assert.deepEqual(serverEnvironment({ A: '1' }, {}, undefined), { A: '1' });
});

test('the diagnostics and language-server settings (issue 17) reach the server nested; bad ones are reported', () => {
  const { settings, problems } = serverSettings(reader({
    'diagnostics.afterEdit': false, 'diagnostics.settleSeconds': 4, 'diagnostics.quietSeconds': 0.2, 'diagnostics.maxItems': 5,
    'languageServer.timeoutSeconds': 3,
  }));
  assert.deepEqual(problems, []);
  assert.deepEqual(settings, { diagnostics: { afterEdit: false, settleSeconds: 4, quietSeconds: 0.2, maxItems: 5 }, languageServer: { timeoutSeconds: 3 } });
  const bad = serverSettings(reader({ 'diagnostics.afterEdit': 'no', 'diagnostics.maxItems': 0, 'languageServer.timeoutSeconds': 0 }));
  assert.deepEqual(bad.settings, {});
  assert.equal(bad.problems.length, 3);
  assert.match(bad.problems.join('\n'), /pi\.diagnostics\.afterEdit: expected true or false, got "no"/);
});
