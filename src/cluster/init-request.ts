// The networking fields of `swarm init` (DataPathPort, DefaultAddrPool, SubnetSize) checked and
// defaulted as dockerd does; they are stored with the cluster for the overlay networks to come.
import { isIPv4 } from 'node:net';
import { invalidParameter } from '../errors.ts';
import type { SwarmInitRequest } from '../types/cluster.ts';

export const DEFAULT_DATA_PATH_PORT = 4789;

export function checkInitNetworking(req: SwarmInitRequest): { DataPathPort: number; DefaultAddrPool: string[]; SubnetSize: number } {
  const port = req.DataPathPort || DEFAULT_DATA_PATH_PORT;
  if (port < 1024 || port > 49151) throw invalidParameter(`datapath port ${port} is out of range: it must be between 1024 and 49151`);
  const pool = req.DefaultAddrPool?.length ? req.DefaultAddrPool : ['10.0.0.0/8'];
  const size = req.SubnetSize || 24;
  for (const cidr of pool) {
    const m = /^([0-9.]+)\/(\d+)$/.exec(cidr);
    if (!m || !isIPv4(m[1]!) || Number(m[2]) > 32)
      throw invalidParameter(`invalid default address pool ${JSON.stringify(cidr)}: an IPv4 CIDR is required`);
    if (Number(m[2]) > size) throw invalidParameter(`invalid SubnetSize ${size}: it must not be shorter than the pool ${cidr}`);
  }
  return { DataPathPort: port, DefaultAddrPool: pool, SubnetSize: size };
}
