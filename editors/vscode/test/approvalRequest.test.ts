import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { parseApprovalRequest } from '../src/approvalRequest';

const good = {
  approvalId: 'a1', sessionId: 's', toolCallId: 'c', toolName: 'bash', title: 'Run bash: make', message: 'pi: allow bash…?',
  actions: [{ id: 'allowOnce', title: 'Allow once' }, { id: 'allowSession', title: 'Allow for this session' }, { id: 'deny', title: 'Deny' }],
  defaultAction: null, timeoutMs: 120000,
};

test('a well-formed request is taken as sent', () => {
  assert.deepEqual(parseApprovalRequest(good), good);
  assert.equal(parseApprovalRequest({ ...good, defaultAction: 'allowOnce' })!.defaultAction, 'allowOnce');
});

test('nothing is preselected unless the default is a known action', () => {
  assert.equal(parseApprovalRequest({ ...good, defaultAction: 'yes' })!.defaultAction, null);
  assert.equal(parseApprovalRequest({ ...good, defaultAction: undefined })!.defaultAction, null);
});

test('unknown actions are dropped; malformed requests are refused (the caller denies)', () => {
  const mixed = parseApprovalRequest({ ...good, actions: [{ id: 'rm', title: 'Remove' }, { id: 'deny', title: 'Deny', extra: 1 }] });
  assert.deepEqual(mixed!.actions, [{ id: 'deny', title: 'Deny' }]);
  for (const bad of [null, 'x', [], { ...good, approvalId: 1 }, { ...good, timeoutMs: '5' }, { ...good, actions: [] },
    { ...good, actions: [{ id: 'rm', title: 'x' }] }, { ...good, title: undefined }]) {
    assert.equal(parseApprovalRequest(bad), undefined, JSON.stringify(bad));
  }
});
