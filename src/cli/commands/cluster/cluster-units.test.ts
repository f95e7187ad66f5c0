// Unit tests of the cluster families' pure parts: --publish and --network specs, the natural sort
// and image shortening of task tables, Go durations, references, and the compose → stack
// conversion (scoped names, namespace labels, the default network, YAML 1.1 octal modes,
// interpolation, restart policies, config targets).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { splitReference } from '../containers-extra.ts';
import { goJson, tabwrite } from '../family-output.ts';
import { goDuration } from './service-pretty.ts';
import { parseNetwork, parsePublish, withLatest } from './service-spec.ts';
import { convertFileObjects, convertNetworks, convertServices, interpolate, loadCompose, Namespace } from './stack-compose.ts';
import { familiarImage, naturalLess } from './tasks.ts';

describe('service flags', () => {
  test('--publish short and long forms, ranges', () => {
    assert.deepEqual(parsePublish('8080:80'), [{ Protocol: 'tcp', TargetPort: 80, PublishedPort: 8080, PublishMode: 'ingress' }]);
    assert.deepEqual(parsePublish('53/udp'), [{ Protocol: 'udp', TargetPort: 53, PublishMode: 'ingress' }]);
    assert.deepEqual(
      parsePublish('8000-8001:80-81').map((p) => `${p.PublishedPort}->${p.TargetPort}`),
      ['8000->80', '8001->81'],
    );
    assert.deepEqual(parsePublish('published=9,target=10,protocol=udp,mode=host'), [
      { Protocol: 'udp', PublishMode: 'host', PublishedPort: 9, TargetPort: 10 },
    ]);
    assert.throws(() => parsePublish('published=9'), /missing mandatory field "target"/);
  });
  test('--network with aliases and driver options', () => {
    assert.deepEqual(parseNetwork('back'), { Target: 'back' });
    assert.deepEqual(parseNetwork('name=back,alias=a,alias=b,driver-opt=k=v'), {
      Target: 'back',
      Aliases: ['a', 'b'],
      DriverOpts: { k: 'v' },
    });
  });
  test('images and references', () => {
    assert.equal(withLatest('busybox'), 'busybox:latest');
    assert.equal(withLatest('localhost:5000/x'), 'localhost:5000/x:latest');
    assert.equal(withLatest('busybox@sha256:ab'), 'busybox@sha256:ab');
    assert.equal(familiarImage('docker.io/library/busybox:latest@sha256:0123abcd'), 'busybox:latest');
    assert.deepEqual(splitReference('localhost:5000/app:v2'), { repo: 'localhost:5000/app', tag: 'v2' });
    assert.deepEqual(splitReference('localhost:5000/app'), { repo: 'localhost:5000/app' });
  });
  test('natural order and Go durations', () => {
    assert.ok(naturalLess('web.2', 'web.10'));
    assert.ok(!naturalLess('web.10', 'web.2'));
    assert.ok(naturalLess('a', 'b'));
    assert.deepEqual([5e9, 90e9, 5e8, 0, 3723e9].map(goDuration), ['5s', '1m30s', '500ms', '0s', '1h2m3s']);
  });
});

describe('output as the docker CLI writes it', () => {
  test('tabwriter: min width 10, padding 3, empty tab-ended cells keep their padding, the last cell unpadded', () => {
    assert.equal(
      tabwrite(['ID\tNAME\tPORTS', 'abc\tweb\t', 'abcdefghijkl\tx\t*:80->80/tcp']),
      'ID             NAME      PORTS\nabc            web       \nabcdefghijkl   x         *:80->80/tcp\n',
    );
  });
  test("JSON with Go's escapes of <, > and &", () => {
    assert.equal(goJson({ Ports: '*:80->80/tcp', A: 'a&b<c' }), '{"Ports":"*:80-\\u003e80/tcp","A":"a\\u0026b\\u003cc"}');
  });
});

describe('compose → stack', () => {
  const file = `
version: "3.8"
services:
  web:
    image: busybox
    command: sh -c "echo hi"
    environment:
      B: "2"
      A: \${A_VALUE:-one}
    networks: [back]
    secrets: [token]
    configs: [{ source: conf, mode: 0440 }]
    restart: on-failure:3
    deploy: { replicas: 2, labels: { l: v } }
  worker:
    image: busybox
networks:
  back: { driver: overlay, attachable: true }
  outside: { external: true, name: shared }
secrets:
  token: { external: true }
configs:
  conf: { file: ./conf.txt }
`;
  const ns = new Namespace('app');
  let compose: Record<string, unknown> = {};
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-stack-unit-'));
    await writeFile(join(dir, 'conf.txt'), 'x=1');
    compose = await loadCompose([{ path: 'f.yml', text: file }], { A_VALUE: undefined });
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('networks: declared and default ones scoped and labelled; external ones only when used', () => {
    const { create, external } = convertNetworks(ns, compose);
    assert.deepEqual(
      create.map((n) => [n.name, n.spec.Driver, n.spec.Attachable, n.spec.Labels['com.docker.stack.namespace']]),
      [
        ['app_back', 'overlay', true, 'app'],
        ['app_default', 'overlay', false, 'app'],
      ],
    );
    assert.deepEqual(external, []);
  });

  test('services: scoped names, sorted environment, alias, references, restart policy, octal mode', () => {
    const ids = {
      secrets: new Map([['token', { id: 'S1', name: 'token' }]]),
      configs: new Map([['conf', { id: 'C1', name: 'app_conf' }]]),
    };
    const specs = convertServices(ns, compose, '/tmp', new Map([['app_back', 'N1']]), ids);
    const web = specs.get('web')!;
    assert.equal(web.Name, 'app_web');
    assert.deepEqual(web.Labels, { l: 'v', 'com.docker.stack.image': 'busybox', 'com.docker.stack.namespace': 'app' });
    const c = web.TaskTemplate.ContainerSpec;
    assert.deepEqual(c.Args, ['sh', '-c', 'echo hi']);
    assert.deepEqual(c.Env, ['A=one', 'B=2']);
    assert.deepEqual(web.TaskTemplate.Networks, [{ Target: 'N1', Aliases: ['web'] }]);
    assert.deepEqual(c.Secrets, [{ File: { Name: 'token', UID: '0', GID: '0', Mode: 0o444 }, SecretID: 'S1', SecretName: 'token' }]);
    assert.deepEqual(c.Configs, [{ File: { Name: '/conf', UID: '0', GID: '0', Mode: 0o440 }, ConfigID: 'C1', ConfigName: 'app_conf' }]);
    assert.deepEqual(web.TaskTemplate.RestartPolicy, { Condition: 'on-failure', MaxAttempts: 3 });
    assert.deepEqual(web.Mode, { Replicated: { Replicas: 2 } });
    assert.deepEqual(specs.get('worker')!.TaskTemplate.Networks, [{ Target: 'app_default', Aliases: ['worker'] }]);
  });

  test('secrets and configs: external names kept, content read; `content` is no compose v3 key', async () => {
    assert.deepEqual(convertFileObjects(ns, compose, 'secrets', dir), [{ key: 'token', name: 'token', external: true }]);
    const [conf] = convertFileObjects(ns, compose, 'configs', dir);
    assert.equal(conf!.name, 'app_conf');
    assert.equal(Buffer.from(conf!.spec!.Data, 'base64').toString(), 'x=1');
    await assert.rejects(
      loadCompose([{ path: 'f.yml', text: file.replace('file: ./conf.txt', 'content: "x=1"') }], {}),
      /^Error: configs\.conf Additional property content is not allowed$/,
    );
  });

  test('interpolation: defaults, $$ and unset variables', async () => {
    assert.equal(interpolate('${X:-d} ${Y-e} $$ ${Z}', { Y: '' }), 'd  $ ');
    await assert.rejects(loadCompose([{ path: 'f', text: 'version: "3"' }], {}), /no services/);
  });
});
