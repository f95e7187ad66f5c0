import assert from 'node:assert/strict';
import { test } from 'node:test';
import { linkEnv } from './link-env.ts';

test('link environment: per-port variables (TCP first), ranges of consecutive ports, name, child env', () => {
  const env = linkEnv({
    alias: 'my-db',
    parentName: '/web',
    childIp: '172.17.0.3',
    childEnv: ['PATH=/usr/bin', 'HOME=/root', 'POSTGRES_USER=app', 'EMPTY=', 'NOEQ'],
    exposedPorts: ['53/udp', '5433/tcp', '5432/tcp'],
  });
  assert.deepEqual(env, [
    'MY_DB_PORT=tcp://172.17.0.3:5432',
    'MY_DB_PORT_5432_TCP=tcp://172.17.0.3:5432',
    'MY_DB_PORT_5432_TCP_ADDR=172.17.0.3',
    'MY_DB_PORT_5432_TCP_PORT=5432',
    'MY_DB_PORT_5432_TCP_PROTO=tcp',
    'MY_DB_PORT_5433_TCP=tcp://172.17.0.3:5433',
    'MY_DB_PORT_5433_TCP_ADDR=172.17.0.3',
    'MY_DB_PORT_5433_TCP_PORT=5433',
    'MY_DB_PORT_5433_TCP_PROTO=tcp',
    // dockerd's order: a range is written when the next port breaks it, after that port's own variables.
    'MY_DB_PORT_53_UDP=udp://172.17.0.3:53',
    'MY_DB_PORT_53_UDP_ADDR=172.17.0.3',
    'MY_DB_PORT_53_UDP_PORT=53',
    'MY_DB_PORT_53_UDP_PROTO=udp',
    'MY_DB_PORT_5432_TCP_START=tcp://172.17.0.3:5432',
    'MY_DB_PORT_5432_TCP_PORT_START=5432',
    'MY_DB_PORT_5432_TCP_END=tcp://172.17.0.3:5433',
    'MY_DB_PORT_5432_TCP_PORT_END=5433',
    'MY_DB_NAME=/web/my-db',
    'MY_DB_ENV_POSTGRES_USER=app',
    'MY_DB_ENV_EMPTY=',
  ]);
  assert.deepEqual(linkEnv({ alias: 'x', parentName: '/p', childIp: '10.0.0.2', childEnv: [], exposedPorts: [] }), ['X_NAME=/p/x']);
});
