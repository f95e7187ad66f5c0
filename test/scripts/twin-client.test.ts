// The twin run's pieces without a daemon: which docker command lines the `engine` CLI's command table
// takes (test/helpers/cli-client.ts, read from the real table and from a small one), the docker
// variables handed to engine under its names, and scripts/twin-report.mjs on a written record.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CommandSpec } from '../../src/cli/command-spec.ts';
import { findUpwards } from '../../src/util/find-upwards.ts';
import { engineEnv, engineTable, missingFromEngine } from '../helpers/cli-client.ts';

const SMALL: CommandSpec[] = [
  {
    name: 'run',
    description: 'Create and run a new container from an image',
    flags: [
      { name: 'interactive', short: 'i', kind: 'bool' },
      { name: 'tty', short: 't', kind: 'bool' },
      { name: 'env', short: 'e', kind: 'list' },
      { name: 'name', kind: 'string' },
    ],
    run: async () => 0,
  },
  {
    name: 'network',
    description: 'Manage networks',
    subcommands: [
      {
        name: 'ls',
        aliases: ['list'],
        description: 'List networks',
        flags: [{ name: 'quiet', short: 'q', kind: 'bool' }],
        run: async () => 0,
      },
    ],
  },
];

describe('twin client: what engine takes', () => {
  test('commands, subcommands (aliases too) and flags of the table pass; the first missing one is named', () => {
    assert.equal(missingFromEngine(['run', '-it', '--name', 'x', '-eA=1', 'busybox', 'sh', '--gpus'], SMALL), undefined);
    assert.equal(missingFromEngine(['run', '-e', 'A', '--name=x', 'busybox'], SMALL), undefined);
    assert.equal(missingFromEngine(['network', 'list', '-q'], SMALL), undefined);
    assert.equal(missingFromEngine(['network'], SMALL), undefined);
    assert.equal(missingFromEngine(['network', '--help'], SMALL), undefined);
    assert.equal(missingFromEngine(['run', '--help'], SMALL), undefined);
    assert.equal(missingFromEngine(['-H', 'unix:///x', 'run', 'busybox'], SMALL), undefined);
    assert.equal(missingFromEngine(['commit', 'x'], SMALL), 'commit');
    assert.equal(missingFromEngine(['network', 'prune', '-f'], SMALL), 'network prune');
    assert.equal(missingFromEngine(['run', '--gpus', 'all', 'busybox'], SMALL), 'run --gpus');
    assert.equal(missingFromEngine(['run', '-itd', 'busybox'], SMALL), 'run -d');
    assert.equal(missingFromEngine(['network', 'ls', '--filter', 'x'], SMALL), 'network ls --filter');
    assert.equal(missingFromEngine(['--bogus', 'ps'], SMALL), '--bogus');
  });

  test('the real table: engine has run, ps and network ls; `docker manifest` is not one of its commands', async () => {
    const table = await engineTable();
    assert.equal(missingFromEngine(['run', '-d', '--name', 'x', '-p', '80:80', 'busybox', 'top'], table), undefined);
    assert.equal(missingFromEngine(['ps', '-aq', '--filter', 'name=x'], table), undefined);
    assert.equal(missingFromEngine(['network', 'ls', '-q'], table), undefined);
    assert.equal(missingFromEngine(['manifest', 'inspect', 'x'], table), 'manifest');
  });

  test("docker's variables are handed to engine under its names", () => {
    const env = engineEnv({ DOCKER_HOST: 'unix:///s', DOCKER_CONFIG: '/c', DOCKER_API_VERSION: '1.41', PATH: '/bin' });
    assert.equal(env.ENGINE_HOST, 'unix:///s');
    assert.equal(env.ENGINE_CONFIG, '/c');
    assert.equal(env.ENGINE_API_VERSION, '1.41');
    assert.equal(env.ENGINE_TLS_VERIFY, undefined);
    assert.equal(env.PATH, '/bin');
  });
});

describe('twin report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-twin-report-test-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('counts the calls engine ran and groups the fallbacks by what engine lacked', () => {
    writeFileSync(join(dir, 'a.test.js.calls'), '.....');
    writeFileSync(join(dir, 'b.test.js.calls'), '..');
    const line = (test: string, missing: string) => JSON.stringify({ file: 'a.test.js', test, missing, args: [] });
    writeFileSync(join(dir, 'a.test.js.jsonl'), [line('t1', 'commit'), line('t2', 'commit'), line('t2', 'run --gpus')].join('\n') + '\n');
    const r = spawnSync(process.execPath, [findUpwards(import.meta.url, 'scripts/twin-report.mjs')!, dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^twin run: 7 CLI calls ran on engine, 3 fell back to the docker CLI\n/);
    assert.match(r.stdout, /engine lacks "commit": 2 call\(s\) in 2 test\(s\)\n {4}- a: t1\n {4}- a: t2\n/);
    assert.match(r.stdout, /engine lacks "run --gpus": 1 call\(s\) in 1 test\(s\)/);
  });
});
