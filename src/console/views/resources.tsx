// Networks and volumes: list, inspect, create, remove, and which containers use each (networks:
// connect and disconnect a container). Lists are read again on their events.
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, onEvents, postJson } from '../api.ts';
import { containerStore, nameOf } from '../containers-store.ts';
import { DialogButton } from '../dialog.tsx';
import { ActionButton, ErrorLine, Field, Tree, useStore } from '../ui.tsx';

function useList<T>(path: string, type: string, pick: (v: unknown) => T[]) {
  const [items, setItems] = useState<T[]>([]);
  const [error, setError] = useState('');
  useEffect(() => {
    const load = () =>
      getJson<unknown>(path).then(
        (v) => setItems(pick(v)),
        (e: Error) => setError(e.message),
      );
    void load();
    return onEvents((e) => {
      if (e.Type === type) void load();
    });
  }, [path]);
  return { items, error, setError };
}

/** A stopped container's (dis)connection makes no event (as dockerd): the row is read again by hand. */
function reread(ref: string): void {
  const row = [...containerStore.rows.values()].find((c) => nameOf(c) === ref || c.Id.startsWith(ref));
  if (row) containerStore.refresh(row.Id);
}

interface Network {
  Id: string;
  Name: string;
  Driver: string;
  Scope: string;
  IPAM?: { Config?: Array<{ Subnet?: string }> };
}

export function NetworksView() {
  useStore((fn) => containerStore.subscribe(fn));
  const { items, error, setError } = useList<Network>('/networks', 'network', (v) =>
    (v as Network[]).sort((a, b) => a.Name.localeCompare(b.Name)),
  );
  const [inspect, setInspect] = useState<Record<string, unknown>>();
  const [name, setName] = useState('');
  const [driver, setDriver] = useState('bridge');
  const users = (n: Network) =>
    [...containerStore.rows.values()].filter((c) => c.NetworkSettings?.Networks && n.Name in c.NetworkSettings.Networks);
  return (
    <section aria-labelledby="networks-title">
      <h1 id="networks-title">Networks</h1>
      <form
        class="panel"
        aria-label="Create a network"
        onSubmit={(e) => {
          e.preventDefault();
          postJson('/networks/create', { Name: name.trim(), Driver: driver }).then(
            () => setName(''),
            (err: Error) => setError(err.message),
          );
        }}
      >
        <Field label="Name">
          <input required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Driver">
          <select value={driver} onChange={(e) => setDriver(e.currentTarget.value)}>
            <option>bridge</option>
            <option>overlay</option>
            <option>macvlan</option>
            <option>ipvlan</option>
          </select>
        </Field>
        <button type="submit">Create network</button>
      </form>
      <ErrorLine error={error} />
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Driver</th>
            <th scope="col">Scope</th>
            <th scope="col">Subnet</th>
            <th scope="col">Containers</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((n) => (
            <tr key={n.Id}>
              <td>{n.Name}</td>
              <td>{n.Driver}</td>
              <td>{n.Scope}</td>
              <td>{n.IPAM?.Config?.map((c) => c.Subnet).join(', ')}</td>
              <td>{users(n).map(nameOf).join(', ')}</td>
              <td class="actions">
                <ActionButton
                  label="Inspect"
                  title={`Inspect network ${n.Name}`}
                  onError={setError}
                  run={async () => setInspect(await getJson(`/networks/${n.Id}`))}
                />
                <DialogButton
                  label="Connect"
                  title={`Connect a container to ${n.Name}`}
                  dialog={() => ({
                    title: `Connect a container to ${n.Name}`,
                    fields: [
                      {
                        name: 'container',
                        label: 'Container (name or ID)',
                        required: true,
                        suggestions: [...containerStore.rows.values()].filter((c) => !users(n).includes(c)).map(nameOf),
                      },
                    ],
                    submit: 'Connect',
                    run: async ({ container }) => {
                      const c = container!.trim();
                      await call('POST', `/networks/${n.Id}/connect`, { Container: c });
                      reread(c);
                    },
                  })}
                />
                <DialogButton
                  label="Disconnect"
                  title={`Disconnect a container from ${n.Name}`}
                  disabled={users(n).length === 0}
                  dialog={() => ({
                    title: `Disconnect a container from ${n.Name}`,
                    fields: [{ name: 'container', label: 'Container', options: users(n).map(nameOf) }],
                    submit: 'Disconnect',
                    run: async ({ container }) => {
                      await call('POST', `/networks/${n.Id}/disconnect`, { Container: container });
                      reread(container!);
                    },
                  })}
                />
                <ActionButton
                  label="Remove"
                  title={`Remove network ${n.Name}`}
                  onError={setError}
                  run={() => call('DELETE', `/networks/${n.Id}`)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {inspect && <Tree value={inspect} name="network" open />}
    </section>
  );
}

interface Volume {
  Name: string;
  Driver: string;
  Mountpoint: string;
  CreatedAt?: string;
}

export function VolumesView() {
  useStore((fn) => containerStore.subscribe(fn));
  const { items, error, setError } = useList<Volume>('/volumes', 'volume', (v) =>
    ((v as { Volumes: Volume[] | null }).Volumes ?? []).sort((a, b) => a.Name.localeCompare(b.Name)),
  );
  const [inspect, setInspect] = useState<Record<string, unknown>>();
  const [name, setName] = useState('');
  const users = (v: Volume) =>
    [...containerStore.rows.values()].filter((c) => c.Mounts?.some((m) => m.Type === 'volume' && m.Name === v.Name));
  return (
    <section aria-labelledby="volumes-title">
      <h1 id="volumes-title">Volumes</h1>
      <form
        class="panel"
        aria-label="Create a volume"
        onSubmit={(e) => {
          e.preventDefault();
          postJson('/volumes/create', name.trim() ? { Name: name.trim() } : {}).then(
            () => setName(''),
            (err: Error) => setError(err.message),
          );
        }}
      >
        <Field label="Name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="(generated)" />
        </Field>
        <button type="submit">Create volume</button>
      </form>
      <ErrorLine error={error} />
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Driver</th>
            <th scope="col">Containers</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((v) => (
            <tr key={v.Name}>
              <td class="mono">{v.Name}</td>
              <td>{v.Driver}</td>
              <td>{users(v).map(nameOf).join(', ')}</td>
              <td class="actions">
                <ActionButton
                  label="Inspect"
                  title={`Inspect volume ${v.Name}`}
                  onError={setError}
                  run={async () => setInspect(await getJson(`/volumes/${encodeURIComponent(v.Name)}`))}
                />
                <ActionButton
                  label="Remove"
                  title={`Remove volume ${v.Name}`}
                  onError={setError}
                  run={() => call('DELETE', `/volumes/${encodeURIComponent(v.Name)}`)}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {inspect && <Tree value={inspect} name="volume" open />}
    </section>
  );
}
