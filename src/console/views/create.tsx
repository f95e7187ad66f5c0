// Create and run a container from an image with the common options: name, command, ports, env,
// volumes, network, restart policy, a terminal. POST /containers/create then /start.
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, postJson } from '../api.ts';
import { ErrorLine, Field } from '../ui.tsx';

function lines(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** "8080:80", "127.0.0.1:8080:80/udp", "80" → ExposedPorts and PortBindings. */
export function portBindings(specs: string[]) {
  const exposed: Record<string, object> = {};
  const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
  for (const spec of specs) {
    const [addr, proto = 'tcp'] = spec.split('/');
    const parts = addr!.split(':');
    const container = parts.pop()!;
    const hostPort = parts.pop() ?? '';
    const hostIp = parts.pop() ?? '';
    const key = `${container}/${proto}`;
    exposed[key] = {};
    (bindings[key] ??= []).push({ HostIp: hostIp, HostPort: hostPort });
  }
  return { exposed, bindings };
}

export function CreateForm({ onDone }: { onDone: () => void }) {
  const [f, setF] = useState({
    image: 'busybox',
    name: '',
    cmd: '',
    ports: '',
    env: '',
    volumes: '',
    network: 'bridge',
    restart: 'no',
    tty: false,
    start: true,
  });
  const [networks, setNetworks] = useState<string[]>(['bridge']);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    getJson<Array<{ Name: string }>>('/networks').then(
      (n) => setNetworks(n.map((x) => x.Name).sort()),
      (e: Error) => setError(e.message),
    );
  }, []);
  const set = (k: keyof typeof f) => (e: Event) => {
    const t = e.currentTarget as HTMLInputElement;
    setF({ ...f, [k]: t.type === 'checkbox' ? t.checked : t.value });
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      const { exposed, bindings } = portBindings(lines(f.ports));
      const cmd = f.cmd.trim()
        ? (f.cmd.trim().match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^(["'])(.*)\1$/, '$2'))
        : undefined;
      const body = {
        Image: f.image.trim(),
        ...(cmd ? { Cmd: cmd } : {}),
        Env: lines(f.env),
        ExposedPorts: exposed,
        Tty: f.tty,
        OpenStdin: f.tty,
        HostConfig: {
          PortBindings: bindings,
          Binds: lines(f.volumes),
          NetworkMode: f.network,
          RestartPolicy: { Name: f.restart },
        },
      };
      const q = f.name.trim() ? `?name=${encodeURIComponent(f.name.trim())}` : '';
      const created = await postJson<{ Id: string }>(`/containers/create${q}`, body);
      if (f.start) await call('POST', `/containers/${created!.Id}/start`);
      onDone();
      location.hash = `#/containers/${created!.Id}`;
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel create" onSubmit={submit} aria-label="Create a container">
      <Field label="Image">
        <input required value={f.image} onInput={set('image')} />
      </Field>
      <Field label="Name">
        <input value={f.name} onInput={set('name')} placeholder="(generated)" />
      </Field>
      <Field label="Command">
        <input value={f.cmd} onInput={set('cmd')} placeholder="(the image's)" />
      </Field>
      <Field label="Ports (host:container, one per line)">
        <textarea rows={2} value={f.ports} onInput={set('ports')} />
      </Field>
      <Field label="Environment (KEY=value, one per line)">
        <textarea rows={2} value={f.env} onInput={set('env')} />
      </Field>
      <Field label="Volumes (name-or-path:/dest, one per line)">
        <textarea rows={2} value={f.volumes} onInput={set('volumes')} />
      </Field>
      <Field label="Network">
        <select value={f.network} onChange={set('network')}>
          {networks.map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
      </Field>
      <Field label="Restart policy">
        <select value={f.restart} onChange={set('restart')}>
          {['no', 'on-failure', 'always', 'unless-stopped'].map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      </Field>
      <label class="check">
        <input type="checkbox" checked={f.tty} onChange={set('tty')} /> Terminal and open stdin
      </label>
      <label class="check">
        <input type="checkbox" checked={f.start} onChange={set('start')} /> Start it
      </label>
      <div>
        <button type="submit" disabled={busy}>
          {f.start ? 'Create and run' : 'Create'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      <ErrorLine error={error} />
    </form>
  );
}
