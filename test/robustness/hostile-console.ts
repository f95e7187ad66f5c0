// Hostile cases for the web console's listener (`--console-addr`): its gate (Host, Origin,
// Sec-Fetch-Site, the session cookie), its static files (traversal, odd names and methods), the
// `/api/` passthrough (the API's own hostile cases with the prefix and the session added), and its
// websockets (the exec bridge, the stats bridge, the API's attach): bad handshakes, no session,
// and garbage, unmasked or oversized frames after a good one. Every answer must be a JSON 4xx, a
// page, or a 101, never a 5xx, a hang or a crash.
import { request as httpRequest } from 'node:http';
import type { HostileCase, Rng } from './hostile-gen.ts';

/** The console listener to aim at, and the session cookie its page sets. */
export interface ConsoleTarget {
  host: string;
  port: number;
  /** `engine_console=…` as the page's load set it. */
  cookie: string;
}

/** Loads the console's page once, as a browser would, for its session cookie. */
export function consoleSession(host: string, port: number): Promise<ConsoleTarget> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path: '/', headers: { Host: `${host}:${port}` } }, (res) => {
      res.resume();
      const cookie = (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!).find((c) => c.startsWith('engine_console='));
      if (res.statusCode !== 200 || !cookie) reject(new Error(`console page: ${res.statusCode}, no session cookie`));
      else resolve({ host, port, cookie });
    });
    req.on('error', reject);
    req.end();
  });
}

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

function raw(method: string, path: string, headers: string[], body = ''): Buffer {
  const head = [`${method} ${path} HTTP/1.1`, ...headers, 'Connection: close'];
  if (body) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`, 'latin1');
}

/** A masked client frame (the mask all zeros unless told), or a header claiming `claimed` bytes. */
function frame(opcode: number, payload: Buffer, opts: { masked?: boolean; claimed?: number } = {}): Buffer {
  const masked = opts.masked ?? true;
  const len = opts.claimed ?? payload.length;
  const head =
    len < 126
      ? Buffer.from([0x80 | opcode, (masked ? 0x80 : 0) | len])
      : len < 65536
        ? Buffer.from([0x80 | opcode, (masked ? 0x80 : 0) | 126, len >> 8, len & 255])
        : Buffer.concat([Buffer.from([0x80 | opcode, (masked ? 0x80 : 0) | 127]), bigLength(len)]);
  return Buffer.concat([head, masked ? Buffer.alloc(4) : Buffer.alloc(0), payload]);
}

function bigLength(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/**
 * The console's version of an API case: `/api` before its path, the console's Host and the
 * session cookie in its headers. Bytes that are not a request line (protocol garbage) go as they are.
 */
function throughConsole(api: HostileCase, t: ConsoleTarget): HostileCase {
  const text = api.bytes.toString('latin1');
  const m = /^([A-Z]+) (\/[^ \r\n]*) (HTTP\/1\.[01])\r\n/.exec(text);
  if (!m) return { ...api, name: `console: ${api.name}`, console: true };
  let rest = text.slice(m[0].length);
  const host = `Host: ${t.host}:${t.port}`;
  rest = /^Host:[^\r\n]*\r\n/im.test(rest) ? rest.replace(/^Host:[^\r\n]*\r\n/im, `${host}\r\n`) : `${host}\r\n${rest}`;
  return {
    ...api,
    name: `console /api: ${api.name}`,
    bytes: Buffer.from(`${m[1]} /api${m[2]} ${m[3]}\r\nCookie: ${t.cookie}\r\n${rest}`, 'latin1'),
    console: true,
  };
}

/** The i-th console case: `api` is the API case the passthrough cases wrap. */
export function consoleCase(rng: Rng, t: ConsoleTarget, api: () => HostileCase): HostileCase {
  const self = `${t.host}:${t.port}`;
  const good = [`Host: ${self}`, `Cookie: ${t.cookie}`];
  const pick = <T>(xs: readonly T[]) => rng.pick(xs);
  const apiPath = pick(['/api/v1.51/containers/json?all=1', '/api/_ping', '/api/v1.51/info', '/api/containers/hostile/json']);
  switch (rng.int(10)) {
    case 0: {
      const host = pick([
        '',
        'evil.example',
        `evil.example:${t.port}`,
        `localhost.evil.example:${t.port}`,
        `${t.host}:${t.port + 1}`,
        `${t.host}`,
        `${t.host}:${t.port}@evil.example`,
        `${t.host}:0${t.port}`,
        `[::1]:${t.port}`,
        `[::ffff:127.0.0.1]:${t.port}`,
        'h'.repeat(6000),
        `${t.host}:${t.port}\u0000x`,
      ]);
      const headers = host === '' ? [`Cookie: ${t.cookie}`] : [`Host: ${host}`, `Cookie: ${t.cookie}`];
      return {
        name: 'console: a Host that is not the listener',
        bytes: raw(pick(['GET', 'POST', 'HEAD']), pick([apiPath, '/']), headers),
        console: true,
      };
    }
    case 1: {
      const origin = pick([
        'http://evil.example',
        'null',
        `http://${self}/`,
        `http://${self}.evil.example`,
        `HTTP://${self.toUpperCase()}`,
        `https://${self}`,
        `http://${t.host}:${t.port + 1}`,
        '',
        'o'.repeat(9000),
      ]);
      return {
        name: 'console: a foreign or odd Origin',
        bytes: raw(pick(['GET', 'POST', 'DELETE']), apiPath, [...good, `Origin: ${origin}`]),
        console: true,
      };
    }
    case 2: {
      const site = pick(['cross-site', 'same-site', 'none', '', 'same-origin, cross-site', '\u00ff']);
      return {
        name: 'console: Sec-Fetch-Site other than same-origin',
        bytes: raw('GET', apiPath, [...good, `Sec-Fetch-Site: ${site}`]),
        console: true,
      };
    }
    case 3: {
      const value = t.cookie.slice('engine_console='.length);
      const cookie = pick([
        '',
        'engine_console=',
        `engine_console=${'A'.repeat(value.length)}`,
        `engine_console=${value}x`,
        `engine_console=${value.slice(1)}`,
        `engine_console=wrong; ${t.cookie}`,
        `${t.cookie}; engine_console=wrong`,
        'engine_console',
        `a=${'b'.repeat(7000)}; ${t.cookie}`,
        `engine_console=${'\u00e9'.repeat(43)}`,
        ';;;=;=',
      ]);
      const headers = cookie ? [`Host: ${self}`, `Cookie: ${cookie}`] : [`Host: ${self}`];
      return {
        name: 'console: a missing, wrong or odd session cookie',
        bytes: raw(pick(['GET', 'POST']), apiPath, headers),
        console: true,
      };
    }
    case 4: {
      const path = pick([
        '/../../../../etc/passwd',
        '/%2e%2e/%2e%2e/etc/passwd',
        '/..%2f..%2fetc%2fpasswd',
        '//etc/passwd',
        '/app.js/../../../etc/passwd',
        '/.gz',
        '/index.html.gz',
        '/app.js.gz',
        '/app.js%00.html',
        '/%00',
        '/.',
        '/..',
        '/\\..\\..\\etc\\passwd',
        '/' + 'a'.repeat(5000) + '.js',
        '/nope.js',
        '/index.html?x=' + 'q'.repeat(3000),
        '/apix/_ping',
        '/api/../index.html',
        '/api/%2e%2e/index.html',
        '/API/_ping',
        '*',
        'http://evil.example/',
      ]);
      return {
        name: 'console: a static path with traversal or an odd name',
        bytes: raw(pick(['GET', 'GET', 'HEAD']), path, [`Host: ${self}`, pick(['Accept-Encoding: gzip', 'Accept-Encoding: x'])]),
        console: true,
      };
    }
    case 5:
      return {
        name: 'console: a method static files do not take',
        bytes: raw(
          pick(['POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE']),
          pick(['/', '/index.html', '/app.js', '/x']),
          [`Host: ${self}`],
          pick(['', '{}']),
        ),
        console: true,
      };
    case 6:
    case 7:
      return throughConsole(api(), t);
    default:
      return websocketCase(rng, t);
  }
}

/** Websocket upgrades: the exec bridge, the stats bridge, the API's attach, and paths that have none. */
function websocketCase(rng: Rng, t: ConsoleTarget): HostileCase {
  const self = `${t.host}:${t.port}`;
  const path = rng.pick([
    '/api/v1.51/exec/nope/start',
    '/api/exec/' + 'e'.repeat(3000) + '/start',
    '/api/v1.51/containers/hostile/stats?stream=1',
    '/api/v1.51/containers/hostile/stats?stream=0',
    '/api/containers/nope/stats',
    '/api/v1.51/containers/' + 'x'.repeat(5000) + '/stats',
    '/api/v1.51/containers/..%2F..%2Fhostile/stats',
    '/api/v1.51/containers/hostile/attach/ws?stream=1&stdout=1',
    '/api/v1.99/containers/hostile/stats',
    '/api/_ping',
    '/',
    '/app.js',
  ]);
  // One thing wrong at a time (or nothing: the upgrade is accepted and the frames after it count).
  const wrong = rng.int(9);
  const key = wrong === 0 ? rng.pick(['', 'short', 'x'.repeat(500), '====']) : KEY;
  const headers = [
    wrong === 1 ? `Host: ${rng.pick(['evil.example', `${t.host}:${t.port + 1}`])}` : `Host: ${self}`,
    ...(wrong === 2 ? [] : [`Cookie: ${t.cookie}`]),
    ...(wrong === 3 ? [`Origin: ${rng.pick(['http://evil.example', 'null'])}`] : []),
    `Upgrade: ${wrong === 4 ? rng.pick(['tcp', 'h2c', '', 'websocket, tcp']) : 'websocket'}`,
    'Connection: Upgrade',
    ...(key ? [`Sec-WebSocket-Key: ${key}`] : []),
    `Sec-WebSocket-Version: ${rng.pick(['13', '13', '8', 'x'])}`,
  ];
  const method = wrong === 5 ? rng.pick(['POST', 'PUT', 'DELETE']) : 'GET';
  const after = rng.pick([
    Buffer.alloc(0),
    frame(0x1, Buffer.from('hello')),
    frame(0x2, Buffer.from('ls\n'), { masked: false }),
    frame(0x2, Buffer.alloc(0), { claimed: 2 ** 40 }),
    frame(0x2, Buffer.alloc(0), { claimed: 70_000 }),
    frame(0x9, Buffer.from('ping')),
    frame(0x9, Buffer.alloc(200)),
    frame(0x8, Buffer.from([0x03, 0xe8])),
    frame(0x0, Buffer.from('continuation first')),
    Buffer.from(Array.from({ length: 64 }, () => rng.int(256))),
  ]);
  const head = `${method} ${path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`;
  return {
    name: `console: websocket upgrade (${path
      .split('?')[0]!
      .replace(/[ex]{20,}/, '…')
      .slice(0, 60)})`,
    bytes: Buffer.concat([Buffer.from(head, 'latin1'), after]),
    console: true,
    // An accepted websocket streams until the client goes: the client goes after a moment.
    abortAfterMs: 1500,
  };
}
