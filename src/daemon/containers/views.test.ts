// docker ps entries as cached JSON text (summaryJson): the same document as summaryView's, key order
// included, served from the cache while nothing shown changed and rebuilt when something did.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { standInNetworkView } from './queries.ts';
import { initialState, type ContainerRecord } from './record.ts';
import { summaryJson, summaryView } from './views.ts';

function rec(): ContainerRecord {
  return {
    Id: 'a'.repeat(64),
    Name: '/web',
    Created: '2030-01-01T00:00:01.123456789Z',
    Path: 'sh',
    Args: ['-c', 'echo "hi there"'],
    Image: 'sha256:busybox',
    ImageRef: 'busybox:latest',
    State: { ...initialState(), Status: 'exited', ExitCode: 3, FinishedAt: new Date(Date.now() - 90_000).toISOString() },
    Config: { Labels: { tier: 'front', 'com.example/ünïcode': 'x"y' } },
    HostConfig: { NetworkMode: 'mynet', Annotations: { 'io.k': 'v' } },
    Mounts: [{ Type: 'volume', Name: 'data', Source: '/v/data', Destination: '/data', Mode: '', RW: true, Propagation: '' }],
    Internal: {},
  } as unknown as ContainerRecord;
}

/** summaryJson with a counting view builder: how often the entry was built again. */
function listed(r: ContainerRecord, gen = '1.1') {
  let builds = 0;
  const text = summaryJson(r, gen, () => {
    builds++;
    return standInNetworkView(r);
  }).text;
  return { text, builds, view: JSON.stringify(summaryView(r, standInNetworkView(r))) };
}

test('summaryJson is summaryView, in the same key order; JSON.stringify of it gives the same value', () => {
  const r = rec();
  const a = listed(r);
  assert.equal(a.text, a.view);
  assert.match(JSON.parse(a.text).Status, /^Exited \(3\) About a minute ago$/);
  const bare = { ...rec(), Config: {}, HostConfig: {} } as unknown as ContainerRecord;
  const b = listed(bare);
  assert.equal(b.text, b.view);
  assert.deepEqual(JSON.parse(b.text).Labels, {});
  assert.equal(JSON.stringify([summaryJson(bare, '', () => standInNetworkView(bare))]), `[${b.view}]`);
});

test('summaryJson serves the cache while nothing changed and rebuilds on every change it shows', () => {
  const r = rec();
  assert.equal(listed(r).builds, 1);
  assert.equal(listed(r).builds, 0);
  const changes: Array<[string, () => void]> = [
    ['rename', () => (r.Name = '/renamed')],
    ['start', () => Object.assign(r.State, { Status: 'running', Running: true, StartedAt: new Date(Date.now() - 600_000).toISOString() })],
    ['new labels', () => (r.Config = { ...r.Config, Labels: { only: 'this' } })],
    ['network facts written', () => undefined],
    ['image gone, ID shown', () => (r.ImageRef = 'sha256:busybox')],
  ];
  let gen = 1;
  for (const [what, change] of changes) {
    change();
    const g = what === 'network facts written' ? `1.${++gen}` : `1.${gen}`;
    const after = listed(r, g);
    assert.equal(after.builds, 1, what);
    assert.equal(after.text, after.view, what);
    assert.equal(listed(r, g).builds, 0, `${what}, listed again`);
  }
  assert.equal(JSON.parse(listed(r, `1.${gen}`).text).Names[0], '/renamed');
});
