import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_API_KEY_ENV, Reader, SPECS, USER_SCOPE_KEYS, serverEnvironment, serverSettings } from '../src/settingsModel';

/** A reader over two scopes, like VS Code's inspect(): user values and workspace values. */
function reader(user: Record<string, unknown>, workspace: Record<string, unknown> = {}): Reader {
  return (key, scope) => {
    if (scope === 'every') {
      return [user[key], workspace[key]].filter((value) => value !== undefined);
    }
    return scope === 'user' ? user[key] : workspace[key] ?? user[key];
  };
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

/** package.json's `pi.*` settings (the keys below `pi.`) with their schemas. */
function manifestSettings(): Record<string, { default: unknown; scope?: string }> {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  const found: Record<string, { default: unknown; scope?: string }> = {};
  for (const [key, schema] of Object.entries(manifest.contributes.configuration.properties)) {
    found[key.replace(/^pi\./, '')] = schema as { default: unknown; scope?: string };
  }
  return found;
}

test('every package.json setting but server.* has a spec, and each spec accepts its default', () => {
  const manifest = manifestSettings();
  const offered = Object.keys(manifest).filter((key) => !key.startsWith('server.'));
  assert.deepEqual(SPECS.map((s) => s.key).sort(), offered.sort());
  for (const key of offered) {
    const { default: value } = manifest[key];
    const { settings, problems } = serverSettings(reader({ [key]: value }));
    assert.deepEqual(problems, [], key);
    if (value !== '') { // an empty string means unset
      let node: unknown = settings;
      for (const part of key.split('.')) {
        node = (node as Record<string, unknown>)[part];
      }
      assert.deepEqual(node, value, key);
    }
  }
  for (const key of USER_SCOPE_KEYS) {
    assert.ok(['application', 'machine'].includes(manifest[key].scope ?? ''), key);
  }
});

test('provider, tokens, thinking, compaction, changes, retries and nudges reach the server nested', () => {
  const given = {
    provider: 'anthropic', maxTokens: 4096, thinking: 2048, contextWindow: 200000,
    'compaction.enabled': false, 'compaction.reserveTokens': 1000, 'compaction.keepRecentTokens': 500,
    'bash.sandbox': 'required', 'changes.maxFileBytes': 1024, 'changes.confirmTimeoutSeconds': 1,
    maxRetries: 0, backoffInitialSeconds: 0, progressTimeoutSeconds: 5, externalSocket: false,
    'nudge.afterSeconds': 0, 'nudge.trailing': 1,
  };
  const { settings, problems } = serverSettings(reader(given));
  assert.deepEqual(problems, []);
  assert.deepEqual(settings, {
    provider: 'anthropic', maxTokens: 4096, thinking: 2048, contextWindow: 200000,
    compaction: { enabled: false, reserveTokens: 1000, keepRecentTokens: 500 },
    bash: { sandbox: 'required' }, changes: { maxFileBytes: 1024, confirmTimeoutSeconds: 1 },
    maxRetries: 0, backoffInitialSeconds: 0, progressTimeoutSeconds: 5, externalSocket: false,
    nudge: { afterSeconds: 0, trailing: 1 },
  });
});

test('the new settings reject what the server would, with the setting named', () => {
  const { settings, problems } = serverSettings(reader({
    provider: 'gemini', thinking: 500, maxTokens: 0, 'changes.maxTotalBytes': -1, 'compaction.enabled': 'yes',
    'bash.sandbox': 'sometimes', 'nudge.trailing': 1.5, connectTimeoutSeconds: 0, contextWindow: null,
  }));
  assert.deepEqual(settings, { contextWindow: null });
  assert.equal(problems.length, 8, problems.join('\n'));
  const joined = problems.join('\n');
  assert.match(joined, /pi\.provider: expected "openai" or "anthropic", got "gemini"/);
  assert.match(joined, /pi\.thinking: expected 0 or an integer >= 1024, got 500/);
  assert.match(joined, /pi\.changes\.maxTotalBytes: expected an integer >= 0, got -1/);
  assert.match(joined, /pi\.bash\.sandbox: expected "auto", "required" or "off", got "sometimes"/);
});

test('a workspace cannot choose the provider, turn the sandbox off or open the external socket', () => {
  const workspace = { provider: 'anthropic', 'bash.sandbox': 'off', externalSocket: true, maxTokens: 1000 };
  const { settings } = serverSettings(reader({ externalSocket: false }, workspace));
  assert.deepEqual(settings, { externalSocket: false, maxTokens: 1000 });
});

test('a workspace adds protected paths to the user\'s, never drops them; a bad list is left out', () => {
  const { settings, problems } = serverSettings(reader({ protectedPaths: ['secrets/**', '.env'] }, { protectedPaths: [] }));
  assert.deepEqual(problems, []);
  assert.deepEqual(settings, { protectedPaths: ['secrets/**', '.env'] });
  const both = serverSettings(reader({ protectedPaths: ['.env'] }, { protectedPaths: ['vendor/**', '.env'] }));
  assert.deepEqual(both.settings, { protectedPaths: ['.env', 'vendor/**'] });
  const bad = serverSettings(reader({ protectedPaths: ['.env'] }, { protectedPaths: 'vendor' }));
  assert.deepEqual(bad.settings, { protectedPaths: ['.env'] });
  assert.match(bad.problems.join('\n'), /pi\.protectedPaths: expected a list of glob patterns, got "vendor"; left out\./);
  assert.deepEqual(serverSettings(reader({})).settings, {});
});
