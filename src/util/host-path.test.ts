import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { extendProcessPath, withSystemDirs } from './host-path.ts';

test("a plain user's PATH gets the sbin directories appended; the caller's order stays first", () => {
  // Debian's default user PATH (/etc/login.defs ENV_PATH).
  assert.equal(
    withSystemDirs('/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games'),
    '/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games:/usr/local/sbin:/usr/sbin:/sbin',
  );
  assert.equal(withSystemDirs('/opt/x/bin:/usr/sbin/:/sbin'), '/opt/x/bin:/usr/sbin/:/sbin:/usr/local/sbin:/usr/local/bin:/usr/bin:/bin');
  assert.equal(withSystemDirs(undefined), '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
  assert.equal(withSystemDirs('::/bin:'), '/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin');
  const full = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  assert.equal(withSystemDirs(full), full, 'nothing added twice');
});

test('a child of the extended process finds a tool of /usr/sbin by name', () => {
  const env: NodeJS.ProcessEnv = { PATH: '/usr/local/bin:/usr/bin:/bin' };
  assert.throws(() => execFileSync('/bin/sh', ['-c', 'command -v iptables-save'], { env }), 'not found without /usr/sbin');
  extendProcessPath(env);
  assert.match(execFileSync('/bin/sh', ['-c', 'command -v iptables-save'], { env }).toString(), /^\/usr\/sbin\/iptables-save\n$/);
});
