// The container and network actions timed for metrics, by backend method, under dockerd's action names.
export const CONTAINER_ACTIONS = {
  create: 'create',
  start: 'start',
  stop: 'stop',
  restart: 'restart',
  kill: 'kill',
  remove: 'delete',
  pause: 'pause',
  unpause: 'unpause',
  rename: 'rename',
  update: 'update',
  wait: 'wait',
  inspect: 'inspect',
  list: 'list',
} as const;

export const NETWORK_ACTIONS = { create: 'create', remove: 'delete', connect: 'connect', disconnect: 'disconnect' } as const;
