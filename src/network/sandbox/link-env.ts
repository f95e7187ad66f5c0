// The environment a legacy --link gives the linking container (dockerd's ALIAS_PORT_80_TCP_ADDR and
// friends): the linked container's address per exposed port (TCP first, consecutive ports also
// as a range), its name under the link, and its own environment as ALIAS_ENV_*.
import { parsePortKey, type ExposedPort } from '../ports/ports.ts';

export interface LinkTarget {
  /** The link's alias ("db" of --link mysql:db). */
  alias: string;
  /** The linking container's name, with its slash ("/web"). */
  parentName: string;
  childIp: string;
  childEnv: string[];
  /** The linked container's ExposedPorts keys ("5432/tcp"). */
  exposedPorts: string[];
}

function tcpFirst(a: ExposedPort, b: ExposedPort): number {
  if (a.proto === b.proto) return a.port - b.port;
  if (a.proto === 'tcp') return -1;
  if (b.proto === 'tcp') return 1;
  return a.proto < b.proto ? -1 : 1;
}

export function linkEnv(t: LinkTarget): string[] {
  const alias = t.alias.toUpperCase().replace(/-/g, '_');
  const ports = t.exposedPorts
    .flatMap((k) => {
      try {
        return [parsePortKey(k)];
      } catch {
        return []; // a key that does not parse was refused at create: it gives no variables
      }
    })
    .sort(tcpFirst);
  const env: string[] = [];
  const url = (p: ExposedPort) => `${p.proto}://${t.childIp}:${p.port}`;
  const prefixOf = (p: ExposedPort) => `${alias}_PORT_${p.port}_${p.proto.toUpperCase()}`;
  let start: ExposedPort | undefined;
  let end: ExposedPort | undefined;
  ports.forEach((p, i) => {
    if (i === 0) {
      start = end = p;
      env.push(`${alias}_PORT=${url(p)}`);
    }
    const prefix = prefixOf(p);
    env.push(`${prefix}=${url(p)}`, `${prefix}_ADDR=${t.childIp}`, `${prefix}_PORT=${p.port}`, `${prefix}_PROTO=${p.proto}`);
    // Consecutive ports of one protocol also show as a range, once it ends.
    if (i > 0 && p.port === end!.port + 1 && p.proto === end!.proto) {
      end = p;
      if (i < ports.length - 1) return;
    }
    if (start && end && (start.port !== end.port || start.proto !== end.proto)) {
      const rp = prefixOf(start);
      env.push(`${rp}_START=${url(start)}`, `${rp}_PORT_START=${start.port}`, `${rp}_END=${url(end)}`, `${rp}_PORT_END=${end.port}`);
    }
    start = end = p;
  });
  env.push(`${alias}_NAME=${t.parentName.replace(/\/$/, '')}/${t.alias}`);
  for (const v of t.childEnv) {
    const eq = v.indexOf('=');
    if (eq < 0) continue;
    const name = v.slice(0, eq);
    if (name === 'HOME' || name === 'PATH') continue;
    env.push(`${alias}_ENV_${name}=${v.slice(eq + 1)}`);
  }
  return env;
}
