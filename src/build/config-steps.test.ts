// Config-only instructions: their effect on the runtime config and the history text dockerd writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyConfigStep, exposedPorts, goQuoteList, nopCreatedBy } from './config-steps.ts';
import { parseDockerfile } from './dockerfile/parser.ts';
import type { RuntimeConfig } from './image-writer.ts';

const insts = (text: string) => parseDockerfile(`FROM scratch\n${text}`).stages[0]!.instructions;

test('ENV, LABEL, EXPOSE, USER, VOLUME, CMD, ENTRYPOINT, SHELL, STOPSIGNAL, ONBUILD set the config; comments as dockerd', () => {
  const cfg: RuntimeConfig = { Env: ['PATH=/bin', 'A=old'] };
  const comments = insts([
    'ENV A=1 B=two', 'LABEL x=y', 'EXPOSE 80 53/udp 8000-8001', 'USER app:app', 'VOLUME ["/data", "/logs"]',
    'CMD echo hi', 'ENTRYPOINT ["/init"]', 'SHELL ["/bin/bash", "-c"]', 'STOPSIGNAL SIGINT', 'ONBUILD RUN make', 'MAINTAINER me',
  ].join('\n')).map((i) => applyConfigStep(cfg, i));
  assert.deepEqual(comments, [
    'ENV A=1 B=two', 'LABEL x=y', 'EXPOSE 53/udp 80/tcp 8000/tcp 8001/tcp', 'USER app:app', 'VOLUME ["/data" "/logs"]',
    'CMD ["/bin/sh" "-c" "echo hi"]', 'ENTRYPOINT ["/init"]', 'SHELL ["/bin/bash" "-c"]', 'STOPSIGNAL SIGINT', 'ONBUILD RUN make', 'MAINTAINER me',
  ]);
  assert.deepEqual(cfg.Env, ['PATH=/bin', 'A=1', 'B=two']);
  assert.deepEqual(cfg.Labels, { x: 'y' });
  assert.deepEqual(Object.keys(cfg.ExposedPorts!), ['53/udp', '80/tcp', '8000/tcp', '8001/tcp']);
  assert.equal(cfg.User, 'app:app');
  assert.deepEqual(Object.keys(cfg.Volumes!), ['/data', '/logs']);
  assert.deepEqual(cfg.Cmd, ['/bin/sh', '-c', 'echo hi']);
  assert.deepEqual(cfg.Entrypoint, ['/init']);
  assert.deepEqual(cfg.Shell, ['/bin/bash', '-c']);
  assert.equal(cfg.StopSignal, 'SIGINT');
  assert.deepEqual(cfg.OnBuild, ['RUN make']);
  // After SHELL, shell forms use it.
  applyConfigStep(cfg, insts('CMD run-it')[0]!);
  assert.deepEqual(cfg.Cmd, ['/bin/bash', '-c', 'run-it']);
});

test('HEALTHCHECK sets and NONE disables; RUN/COPY are not config steps', () => {
  const cfg: RuntimeConfig = {};
  const [hc, none, run] = insts('HEALTHCHECK --interval=5s CMD true\nHEALTHCHECK NONE\nRUN x');
  assert.match(applyConfigStep(cfg, hc!)!, /^HEALTHCHECK &\{\["CMD-SHELL" "true"\] "5s"/);
  assert.deepEqual(cfg.Healthcheck, { Test: ['CMD-SHELL', 'true'], Interval: 5e9 });
  applyConfigStep(cfg, none!);
  assert.deepEqual(cfg.Healthcheck, { Test: ['NONE'] });
  assert.equal(applyConfigStep(cfg, run!), null);
});

test('history text and port specs', () => {
  assert.equal(nopCreatedBy(['/bin/sh', '-c'], 'ENV a=b'), '/bin/sh -c #(nop)  ENV a=b');
  assert.equal(goQuoteList(['a b', 'c"d']), '["a b" "c\\"d"]');
  assert.throws(() => exposedPorts(['http']), /invalid containerPort/);
  assert.deepEqual(exposedPorts(['127.0.0.1:80:8080/tcp'.split(':').slice(-1)[0]!]), ['8080/tcp']);
});
