// engined's own OCI spec for a `true` container with network none, taken from its containerd, so the
// floor can also run with exactly what engined hands to runc (default seccomp profile, masked
// paths, device rules, cgroup namespace, /etc bind mounts…). What differs per container is swapped.

import { copyFile, mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { api } from '../lib/http.ts';
import type { Engined } from '../targets/engined.ts';
import { createContainer } from './api-lifecycle.ts';

export type SpecFor = (id: string) => unknown;

/** Starts a throwaway `sleep` container in engined, reads its spec from containerd, removes it. */
export async function captureEnginedSpec(engined: Engined, workDir: string): Promise<SpecFor> {
  const id = await createContainer(engined, ['sleep', '60']);
  let spec: any;
  const etcDir = join(workDir, 'etc');
  await mkdir(etcDir, { recursive: true });
  try {
    await api(engined.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    const client = new SupervisorClient(engined.containerdSocket, { namespace: 'engine' });
    try {
      const rec = await client.containers.get(id);
      spec = JSON.parse(Buffer.from(rec.spec!.value).toString('utf8'));
    } finally {
      client.close();
    }
    // The /etc files engined bind-mounts live in the container's dir: keep copies.
    for (const m of spec.mounts as { type: string; source: string }[]) {
      if (m.type === 'bind' && m.source.includes(id)) {
        const copy = join(etcDir, basename(m.source));
        await copyFile(m.source, copy);
        m.source = copy;
      }
    }
  } finally {
    await api(engined.socket, 'DELETE', `/containers/${id}?force=1`, undefined, [204]);
  }
  const template = JSON.stringify(spec);
  return (cid: string) => {
    const s = JSON.parse(template);
    s.process.args = ['true'];
    s.hostname = cid.slice(0, 12);
    s.process.env = (s.process.env as string[]).map((e) => (e.startsWith('HOSTNAME=') ? `HOSTNAME=${s.hostname}` : e));
    // A fresh network namespace from runc instead of engined's bind-mounted one.
    s.linux.namespaces = (s.linux.namespaces as { type: string; path?: string }[]).map((n) =>
      n.type === 'network' ? { type: 'network' } : n,
    );
    s.linux.cgroupsPath = `/bench-floor/${cid}`;
    return s;
  };
}
