import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EngineError } from '../errors.ts';
import { defaultHosts, formatListenSpec, parseHostSpec, type ListenSpec } from './host-spec.ts';

const tcp = (host: string, port: number, prefix = ''): ListenSpec => ({ kind: 'tcp', host, port, prefix });

describe('parseHostSpec', () => {
  const valid: Array<[string, boolean, ListenSpec]> = [
    ['unix:///run/x/engine.sock', false, { kind: 'unix', path: '/run/x/engine.sock' }],
    ['unix://', false, { kind: 'unix', path: '/var/run/engine.sock' }],
    ['', false, { kind: 'unix', path: '/var/run/engine.sock' }],
    ['   ', true, { kind: 'unix', path: '/var/run/engine.sock' }],
    ['tcp://', false, tcp('127.0.0.1', 2375)],
    ['tcp://', true, tcp('127.0.0.1', 2376)],
    ['tcp://0.0.0.0', false, tcp('0.0.0.0', 2375)],
    ['tcp://0.0.0.0', true, tcp('0.0.0.0', 2376)],
    ['tcp://10.1.2.3:4243', true, tcp('10.1.2.3', 4243)],
    ['tcp://:7777', false, tcp('127.0.0.1', 7777)],
    ['tcp://localhost:2375/engine', false, tcp('localhost', 2375, '/engine')],
    ['tcp://localhost:2375/a/b/', false, tcp('localhost', 2375, '/a/b')],
    ['tcp://localhost:2375/', false, tcp('localhost', 2375, '')],
    ['tcp://host.example.com', false, tcp('host.example.com', 2375)],
    ['tcp://[::1]:2375', false, tcp('::1', 2375)],
    ['tcp://[::1]', true, tcp('::1', 2376)],
    ['tcp://[::1]:', false, tcp('::1', 2375)],
    ['tcp://[fe80::1]:80/p', false, tcp('fe80::1', 80, '/p')],
    ['tcp://127.0.0.1:0', false, tcp('127.0.0.1', 0)],
    ['somehost', false, tcp('somehost', 2375)],
    ['somehost:1234', false, tcp('somehost', 1234)],
    [':1234', false, tcp('127.0.0.1', 1234)],
    ['1.2.3.4', true, tcp('1.2.3.4', 2376)],
    ['fd://', false, { kind: 'fd', name: '' }],
    ['fd://*', false, { kind: 'fd', name: '' }],
    ['fd://3', false, { kind: 'fd', name: '3' }],
  ];
  for (const [input, tls, expected] of valid) {
    it(`parses ${JSON.stringify(input)}${tls ? ' with TLS' : ''}`, () => {
      assert.deepEqual(parseHostSpec(input, tls), expected);
    });
  }

  it('makes a relative unix path absolute', () => {
    assert.deepEqual(parseHostSpec('unix://rel/engine.sock', false), { kind: 'unix', path: `${process.cwd()}/rel/engine.sock` });
  });

  const invalid: Array<[string, RegExp]> = [
    ['ssh://user@host', /unsupported protocol "ssh"/],
    ['npipe:////./pipe/engine', /unsupported protocol "npipe"/],
    ['http://localhost:2375', /unsupported protocol "http"/],
    ['tcp://localhost:port', /invalid port "port"/],
    ['tcp://localhost:65536', /invalid port "65536"/],
    ['tcp://localhost:-1', /invalid port/],
    [':abc', /invalid port "abc"/],
    ['tcp://tcp://localhost', /expected tcp/],
    ['unix://unix:///x', /expected unix/],
    ['tcp://::1:2375', /IPv6 addresses must be written in brackets/],
    ['tcp://[::1', /missing "]"/],
    ['tcp://[1.2.3.4]:80', /not an IPv6 address/],
    ['tcp://[::1]x', /unexpected text/],
    ['tcp://user@host:2375', /no user/],
    ['tcp://bad host:1', /no user, query, fragment or spaces/],
    ['tcp://bad!host:1', /not a valid host name/],
    ['fd://abc', /must be a number/],
  ];
  for (const [input, message] of invalid) {
    it(`refuses ${JSON.stringify(input)}`, () => {
      assert.throws(
        () => parseHostSpec(input, false),
        (err: unknown) =>
          err instanceof EngineError && err.code === 'INVALID_PARAMETER' && message.test(err.message) && err.message.includes(input),
      );
    });
  }
});

describe('defaultHosts and formatListenSpec', () => {
  it('defaults to the unix socket', () => {
    assert.deepEqual(defaultHosts(), ['unix:///var/run/engine.sock']);
    assert.deepEqual(parseHostSpec(defaultHosts()[0]!, false), { kind: 'unix', path: '/var/run/engine.sock' });
  });

  it('formats specs back to URLs that parse to the same spec', () => {
    for (const input of ['unix:///a/b.sock', 'tcp://[::1]:2375/p', 'tcp://1.2.3.4:5', 'fd://', 'fd://4']) {
      const spec = parseHostSpec(input, false);
      assert.equal(formatListenSpec(spec), input);
      assert.deepEqual(parseHostSpec(formatListenSpec(spec), false), spec);
    }
  });
});
