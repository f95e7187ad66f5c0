// Cluster (when this node is a manager): nodes with role, availability and state; services with
// their replicas and tasks' states, scale, update the image, roll back, service logs; secrets and
// configs by name only. Read again on node, service, secret and config events.
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, onEvents, postJson, streamBytes } from '../api.ts';
import { DialogButton } from '../dialog.tsx';
import { FrameDemux } from '../streams.ts';
import { ActionButton, ErrorLine } from '../ui.tsx';

interface Node {
  ID: string;
  Description: { Hostname: string };
  Spec: { Role: string; Availability: string };
  Status: { State: string; Addr?: string };
  ManagerStatus?: { Leader?: boolean };
}
interface Service {
  ID: string;
  Version: { Index: number };
  Spec: { Name: string; Mode: { Replicated?: { Replicas: number }; Global?: object }; TaskTemplate: { ContainerSpec: { Image: string } } };
}
interface Task {
  ID: string;
  ServiceID: string;
  Slot?: number;
  Status: { State: string; Err?: string };
  DesiredState: string;
}

export function ClusterView() {
  const [state, setState] = useState<string>();
  const [nodes, setNodes] = useState<Node[]>([]);
  const [services, setServices] = useState<Service[]>([]);
  const [tasks, setTasks] = useState<Task[]>([]);
  const [names, setNames] = useState<{ secrets: string[]; configs: string[] }>({ secrets: [], configs: [] });
  const [error, setError] = useState('');
  const [logs, setLogs] = useState<{ name: string; text: string }>();
  useEffect(() => {
    const load = async () => {
      try {
        const info = await getJson<{ Swarm: { LocalNodeState: string; ControlAvailable: boolean } }>('/info');
        setState(info.Swarm.ControlAvailable ? 'manager' : info.Swarm.LocalNodeState);
        if (!info.Swarm.ControlAvailable) return;
        const [n, s, t, sec, cfg] = await Promise.all([
          getJson<Node[]>('/nodes'),
          getJson<Service[]>('/services'),
          getJson<Task[]>('/tasks'),
          getJson<Array<{ Spec: { Name: string } }>>('/secrets'),
          getJson<Array<{ Spec: { Name: string } }>>('/configs'),
        ]);
        setNodes(n);
        setServices(s.sort((a, b) => a.Spec.Name.localeCompare(b.Spec.Name)));
        setTasks(t);
        setNames({ secrets: sec.map((x) => x.Spec.Name), configs: cfg.map((x) => x.Spec.Name) });
      } catch (err) {
        setError((err as Error).message);
      }
    };
    void load();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = onEvents((e) => {
      if (
        ['node', 'service', 'secret', 'config'].includes(e.Type) ||
        (e.Type === 'container' && e.Actor.Attributes?.['com.docker.swarm.task.id'])
      ) {
        clearTimeout(timer);
        timer = setTimeout(() => void load(), 200);
      }
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, []);

  const update = async (s: Service, change: (spec: Service['Spec']) => void, rollback = false) => {
    const full = await getJson<Service>(`/services/${s.ID}`);
    const spec = structuredClone(full.Spec);
    change(spec);
    await postJson(`/services/${s.ID}/update?version=${full.Version.Index}${rollback ? '&rollback=previous' : ''}`, spec);
  };
  const showLogs = (s: Service) => {
    const demux = new FrameDemux();
    const dec = new TextDecoder();
    let text = '';
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 5000);
    void streamBytes(
      'GET',
      `/services/${s.ID}/logs?stdout=1&stderr=1&tail=200`,
      (b) => {
        for (const f of demux.push(b)) text += dec.decode(f.data);
        setLogs({ name: s.Spec.Name, text });
      },
      abort.signal,
    ).catch((e: Error) => setError(e.message));
  };

  if (state === undefined) return <ErrorLine error={error} />;
  if (state !== 'manager')
    return (
      <section aria-labelledby="cluster-title">
        <h1 id="cluster-title">Cluster</h1>
        <p class="dim">This node is not a cluster manager (state: {state}).</p>
        <ActionButton
          label="Create a one-node cluster"
          run={() =>
            postJson('/swarm/init', { ListenAddr: '127.0.0.1:2377', AdvertiseAddr: '127.0.0.1:2377' }).then(() => location.reload())
          }
          onError={setError}
        />
        <ErrorLine error={error} />
      </section>
    );
  return (
    <section aria-labelledby="cluster-title">
      <h1 id="cluster-title">Cluster</h1>
      <ErrorLine error={error} />
      <table class="grid">
        <caption>Nodes</caption>
        <thead>
          <tr>
            <th scope="col">Host</th>
            <th scope="col">Role</th>
            <th scope="col">Availability</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.ID}>
              <td>
                {n.Description.Hostname} {n.ManagerStatus?.Leader ? '(leader)' : ''}
              </td>
              <td>{n.Spec.Role}</td>
              <td>{n.Spec.Availability}</td>
              <td>{n.Status.State}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <table class="grid">
        <caption>Services</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Image</th>
            <th scope="col">Replicas</th>
            <th scope="col">Tasks</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {services.map((s) => {
            const mine = tasks.filter((t) => t.ServiceID === s.ID && t.DesiredState === 'running');
            const running = mine.filter((t) => t.Status.State === 'running').length;
            const want = s.Spec.Mode.Replicated?.Replicas;
            return (
              <tr key={s.ID} data-service={s.Spec.Name}>
                <td>{s.Spec.Name}</td>
                <td class="mono">{s.Spec.TaskTemplate.ContainerSpec.Image.replace(/@sha256:.*/, '')}</td>
                <td data-testid="replicas">
                  {running}/{want ?? 'global'}
                </td>
                <td>{mine.map((t) => `${t.Slot ?? ''}:${t.Status.State}`).join(' ')}</td>
                <td class="actions">
                  {want !== undefined && (
                    <DialogButton
                      label="Scale"
                      title={`Scale ${s.Spec.Name}`}
                      dialog={() => ({
                        title: `Scale ${s.Spec.Name}`,
                        fields: [{ name: 'replicas', label: 'Replicas', type: 'number', min: 0, required: true, value: String(want) }],
                        submit: 'Scale',
                        run: async ({ replicas }) => {
                          const n = replicas!.trim();
                          if (!/^[0-9]+$/.test(n)) throw new Error(`replicas: want a whole number, not ${JSON.stringify(n)}`);
                          await update(s, (spec) => (spec.Mode.Replicated!.Replicas = Number(n)));
                        },
                      })}
                    />
                  )}
                  <DialogButton
                    label="Update image"
                    title={`Update the image of ${s.Spec.Name}`}
                    dialog={() => ({
                      title: `Update the image of ${s.Spec.Name}`,
                      fields: [
                        {
                          name: 'image',
                          label: 'Image',
                          required: true,
                          value: s.Spec.TaskTemplate.ContainerSpec.Image.replace(/@sha256:.*/, ''),
                        },
                      ],
                      submit: 'Update',
                      run: ({ image }) => update(s, (spec) => (spec.TaskTemplate.ContainerSpec.Image = image!.trim())),
                    })}
                  />
                  <ActionButton
                    label="Roll back"
                    title={`Roll back ${s.Spec.Name}`}
                    onError={setError}
                    run={() => update(s, () => undefined, true)}
                  />
                  <ActionButton label="Logs" title={`Logs of ${s.Spec.Name}`} onError={setError} run={async () => showLogs(s)} />
                  <ActionButton
                    label="Remove"
                    title={`Remove ${s.Spec.Name}`}
                    onError={setError}
                    run={() => call('DELETE', `/services/${s.ID}`)}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {logs && (
        <pre class="logs" role="log" aria-label={`Logs of ${logs.name}`}>
          {logs.text}
        </pre>
      )}
      <p>
        <b>Secrets:</b> {names.secrets.join(', ') || 'none'} · <b>Configs:</b> {names.configs.join(', ') || 'none'}
      </p>
    </section>
  );
}
