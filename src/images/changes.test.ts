import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyChanges, splitWords } from './changes.ts';
import { commitRuntimeConfig } from './commit.ts';

describe('Dockerfile changes', () => {
  test('CMD and ENTRYPOINT in exec and shell form', () => {
    assert.deepEqual(applyChanges({}, ['CMD ["echo","imported"]']).Cmd, ['echo', 'imported']);
    assert.deepEqual(applyChanges({}, ['cmd echo hi there']).Cmd, ['/bin/sh', '-c', 'echo hi there']);
    const e = applyChanges({ Cmd: ['sh'] }, ['ENTRYPOINT ["/bin/app"]']);
    assert.deepEqual(e.Entrypoint, ['/bin/app']);
    assert.equal(e.Cmd, null, 'an ENTRYPOINT drops the inherited CMD');
    const both = applyChanges({ Cmd: ['sh'] }, ['CMD ["x"]', 'ENTRYPOINT ["/bin/app"]']);
    assert.deepEqual(both.Cmd, ['x']);
  });

  test('ENV, LABEL (both forms, quotes, $VAR), EXPOSE, VOLUME, USER, WORKDIR, STOPSIGNAL', () => {
    const c = applyChanges({ Env: ['PATH=/bin', 'A=1'] }, [
      'ENV A=2 B="two words" C=$PATH:/x',
      'ENV D plain value',
      'LABEL com.example.x="y z" other=1',
      'EXPOSE 80 53/udp 8000-8001',
      'VOLUME ["/data", "/logs"]',
      'USER nobody',
      'WORKDIR /srv',
      'WORKDIR app',
      'STOPSIGNAL SIGINT',
      'ONBUILD run echo hi',
      'HEALTHCHECK --interval=5s --retries=2 CMD true',
    ]);
    assert.deepEqual(c.Env, ['PATH=/bin', 'A=2', 'B=two words', 'C=/bin:/x', 'D=plain value']);
    assert.deepEqual(c.Labels, { 'com.example.x': 'y z', other: '1' });
    assert.deepEqual(Object.keys(c.ExposedPorts!), ['80/tcp', '53/udp', '8000/tcp', '8001/tcp']);
    assert.deepEqual(Object.keys(c.Volumes!), ['/data', '/logs']);
    assert.equal(c.User, 'nobody');
    assert.equal(c.WorkingDir, '/srv/app');
    assert.equal(c.StopSignal, 'SIGINT');
    assert.deepEqual(c.OnBuild, ['RUN echo hi']);
    assert.deepEqual(c.Healthcheck, { Interval: 5e9, Retries: 2, Test: ['CMD-SHELL', 'true'] });
  });

  test('unknown instructions are refused', () => {
    assert.throws(
      () => applyChanges({}, ['RUN rm -rf /']),
      (e: Error & { status?: number }) => e.status === 400 && e.message === 'run is not a valid change command',
    );
    assert.throws(() => applyChanges({}, ['EXPOSE banana']), /invalid containerPort/);
  });

  test('word splitting', () => {
    assert.deepEqual(splitWords(`a "b c" 'd $X' \\"e`, ['X=1']), ['a', 'b c', 'd $X', '"e']);
    assert.deepEqual(splitWords('x=$X${X}y', ['X=1']), ['x=11y']);
  });
});

describe('commit config', () => {
  test('the body overrides the container config; Cmd and Entrypoint go together', () => {
    const container = { Cmd: ['sh', '-c', 'echo'], Env: ['A=1', 'PATH=/bin'], Labels: { a: '1' }, WorkingDir: '/w', Hostname: 'abc' };
    const plain = commitRuntimeConfig(container, null);
    assert.deepEqual(plain, { User: '', Env: ['A=1', 'PATH=/bin'], Cmd: ['sh', '-c', 'echo'], WorkingDir: '/w', Labels: { a: '1' } });
    const over = commitRuntimeConfig(container, { Entrypoint: ['/app'], Env: ['A=2'], Labels: { b: '2' } });
    assert.deepEqual(over.Entrypoint, ['/app']);
    assert.equal(over.Cmd, null);
    assert.deepEqual(over.Env, ['A=2', 'PATH=/bin']);
    assert.deepEqual(over.Labels, { a: '1', b: '2' });
  });

  test('body Env replaces the first entry of a name or is appended, later body entries winning', () => {
    const c = commitRuntimeConfig({ Env: ['A=1', 'B=2', 'A=3'] }, { Env: ['A=x', 'C=1', 'C=2', 'B=y'] });
    assert.deepEqual(c.Env, ['A=x', 'B=y', 'A=3', 'C=2']);
    const big = Array.from({ length: 131_072 }, (_v, i) => `V${i}=${i}`);
    const t = performance.now();
    const merged = commitRuntimeConfig({ Env: big }, { Env: big.map((e) => `${e}x`) });
    assert.equal(merged.Env!.length, big.length);
    assert.equal(merged.Env![131_071], 'V131071=131071x');
    // Quadratic, this took minutes; linear, tens of ms (room for a loaded machine).
    assert.ok(performance.now() - t < 5000, `${performance.now() - t} ms`);
  });
});
