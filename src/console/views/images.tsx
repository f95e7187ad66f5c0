// Images: the list with sizes and the containers using each; pull with one progress bar per layer
// (POST /images/create streamed); tag, push, remove, history; build from a Dockerfile and files
// uploaded from the browser (POST /build with a tar made here), its log streaming.
import { useEffect, useState } from 'preact/hooks';
import { call, getJson, onEvents, streamJson } from '../api.ts';
import { containerStore } from '../containers-store.ts';
import { ago, bytes, shortId } from '../format.ts';
import { DialogButton } from '../dialog.tsx';
import { writeTar } from '../tar.ts';
import { ActionButton, ErrorLine, Field, useStore } from '../ui.tsx';

interface ImageRow {
  Id: string;
  RepoTags: string[] | null;
  Size: number;
  Created: number;
}
interface Progress {
  id?: string;
  status?: string;
  progress?: string;
  progressDetail?: { current?: number; total?: number };
  error?: string;
  errorDetail?: { message?: string };
  stream?: string;
  aux?: { ID?: string };
}
const NO_AUTH = btoa('{}');

export function ImagesView() {
  useStore((fn) => containerStore.subscribe(fn));
  const [images, setImages] = useState<ImageRow[]>([]);
  const [error, setError] = useState('');
  const [history, setHistory] = useState<{ id: string; rows: Array<{ CreatedBy: string; Size: number; Created: number }> }>();
  useEffect(() => {
    const load = () => getJson<ImageRow[]>('/images/json').then(setImages, (e: Error) => setError(e.message));
    void load();
    return onEvents((e) => {
      if (e.Type === 'image') void load();
    });
  }, []);
  const users = new Map<string, number>();
  for (const c of containerStore.rows.values()) users.set(c.ImageID, (users.get(c.ImageID) ?? 0) + 1);
  return (
    <section aria-labelledby="images-title">
      <h1 id="images-title">Images</h1>
      <PullForm />
      <BuildForm />
      <ErrorLine error={error} />
      <table class="grid">
        <thead>
          <tr>
            <th scope="col">Tags</th>
            <th scope="col">ID</th>
            <th scope="col">Size</th>
            <th scope="col">Created</th>
            <th scope="col">Containers</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {images.map((im) => {
            const tag = im.RepoTags?.[0] ?? shortId(im.Id);
            return (
              <tr key={im.Id} data-image={tag}>
                <td>{(im.RepoTags ?? ['<none>']).join(', ')}</td>
                <td>{shortId(im.Id)}</td>
                <td>{bytes(im.Size)}</td>
                <td>{ago(im.Created)}</td>
                <td>{users.get(im.Id) ?? 0}</td>
                <td class="actions">
                  <ActionButton
                    label="History"
                    title={`History of ${tag}`}
                    onError={setError}
                    run={async () => setHistory({ id: tag, rows: await getJson(`/images/${encodeURIComponent(im.Id)}/history`) })}
                  />
                  <DialogButton
                    label="Tag"
                    title={`Tag ${tag}`}
                    dialog={() => ({
                      title: `Tag ${tag}`,
                      fields: [{ name: 'to', label: 'New tag (repository:tag)', required: true, placeholder: 'registry/repo:tag' }],
                      submit: 'Tag',
                      run: async ({ to }) => {
                        const ref = to!.trim();
                        const cut = ref.lastIndexOf(':') > ref.lastIndexOf('/') ? ref.lastIndexOf(':') : -1;
                        const q =
                          cut > 0
                            ? `repo=${encodeURIComponent(ref.slice(0, cut))}&tag=${encodeURIComponent(ref.slice(cut + 1))}`
                            : `repo=${encodeURIComponent(ref)}`;
                        await call('POST', `/images/${encodeURIComponent(im.Id)}/tag?${q}`);
                      },
                    })}
                  />
                  <DialogButton
                    label="Push"
                    title={`Push ${tag}`}
                    disabled={!im.RepoTags?.length}
                    dialog={() => ({
                      title: `Push ${tag}`,
                      fields: [{ name: 'ref', label: 'Tag to push', options: im.RepoTags ?? [] }],
                      submit: 'Push',
                      run: async ({ ref }, progress) => {
                        let failed = '';
                        await streamJson<Progress>(
                          'POST',
                          `/images/${encodeURIComponent(ref!)}/push`,
                          (m) => {
                            failed ||= m.errorDetail?.message ?? m.error ?? '';
                            if (m.status) progress(`${m.id ? `${m.id}: ` : ''}${m.status}`);
                          },
                          new AbortController().signal,
                          undefined,
                          { 'X-Registry-Auth': NO_AUTH },
                        );
                        if (failed) throw new Error(failed);
                      },
                    })}
                  />
                  <ActionButton
                    label="Remove"
                    title={`Remove ${tag}`}
                    onError={setError}
                    run={() => call('DELETE', `/images/${encodeURIComponent(im.RepoTags?.[0] ?? im.Id)}`)}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {history && (
        <table class="grid small">
          <caption>History of {history.id}</caption>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Created by</th>
              <th scope="col">Size</th>
            </tr>
          </thead>
          <tbody>
            {history.rows.map((h, i) => (
              <tr key={i}>
                <td>{ago(h.Created)}</td>
                <td class="mono">{h.CreatedBy}</td>
                <td>{bytes(h.Size)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function PullForm() {
  const [ref, setRef] = useState('');
  const [layers, setLayers] = useState<Map<string, Progress>>(new Map());
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const pull = async (e: Event) => {
    e.preventDefault();
    const r = ref.trim();
    if (!r) return;
    setBusy(true);
    setError('');
    setStatus('');
    const map = new Map<string, Progress>();
    setLayers(map);
    const at = r.lastIndexOf('@');
    const colon = r.lastIndexOf(':');
    const [image, tag] = at > 0 ? [r, ''] : colon > r.lastIndexOf('/') ? [r.slice(0, colon), r.slice(colon + 1)] : [r, 'latest'];
    try {
      await streamJson<Progress>(
        'POST',
        `/images/create?fromImage=${encodeURIComponent(image)}${tag ? `&tag=${encodeURIComponent(tag)}` : ''}`,
        (m) => {
          if (m.error) setError(m.errorDetail?.message ?? m.error);
          else if (m.id && m.status && !m.status.startsWith('Pulling from')) {
            map.set(m.id, { ...map.get(m.id), ...m });
            setLayers(new Map(map));
          } else if (m.status) setStatus(m.status);
        },
        new AbortController().signal,
        undefined,
        { 'X-Registry-Auth': NO_AUTH },
      );
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={pull} aria-label="Pull an image">
      <Field label="Pull image">
        <input value={ref} onInput={(e) => setRef(e.currentTarget.value)} placeholder="registry/repo:tag" />
      </Field>
      <button type="submit" disabled={busy}>
        Pull
      </button>
      <ErrorLine error={error} />
      {layers.size > 0 && (
        <ul class="layers" aria-label="Layers">
          {[...layers.entries()].map(([id, p]) => {
            const d = p.progressDetail ?? {};
            const done = /complete|already exists/i.test(p.status ?? '');
            const max = d.total ?? 1;
            return (
              <li key={id} data-layer={id}>
                <code>{id}</code>
                <progress max={max} value={done ? max : (d.current ?? 0)} aria-label={`Layer ${id}: ${p.status ?? ''}`} />
                <span class="dim">{p.status}</span>
              </li>
            );
          })}
        </ul>
      )}
      {status && (
        <p class="dim" data-testid="pull-status">
          {status}
        </p>
      )}
    </form>
  );
}

function BuildForm() {
  const [open, setOpen] = useState(false);
  const [dockerfile, setDockerfile] = useState('FROM busybox\nRUN echo built > /built.txt\n');
  const [tag, setTag] = useState('');
  const [files, setFiles] = useState<FileList | null>(null);
  const [log, setLog] = useState('');
  const [busy, setBusy] = useState(false);
  const build = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setLog('');
    try {
      const enc = new TextEncoder();
      const entries = [{ name: 'Dockerfile', data: enc.encode(dockerfile) }];
      for (const f of files ?? [])
        entries.push({
          name: (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name,
          data: new Uint8Array(await f.arrayBuffer()),
        });
      let text = '';
      await streamJson<Progress>(
        'POST',
        `/build?rm=1${tag.trim() ? `&t=${encodeURIComponent(tag.trim())}` : ''}`,
        (m) => {
          text += m.stream ?? (m.error ? `ERROR: ${m.error}\n` : m.aux?.ID ? `${m.aux.ID}\n` : m.status ? `${m.status}\n` : '');
          setLog(text);
        },
        new AbortController().signal,
        writeTar(entries),
        { 'Content-Type': 'application/x-tar' },
      );
    } catch (err) {
      setLog((l) => `${l}ERROR: ${(err as Error).message}\n`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="panel">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        Build an image…
      </button>
      {open && (
        <form onSubmit={build} aria-label="Build an image">
          <Field label="Dockerfile">
            <textarea rows={5} value={dockerfile} onInput={(e) => setDockerfile(e.currentTarget.value)} class="mono" />
          </Field>
          <Field label="Context files">
            <input type="file" multiple onChange={(e) => setFiles(e.currentTarget.files)} />
          </Field>
          <Field label="Tag">
            <input value={tag} onInput={(e) => setTag(e.currentTarget.value)} placeholder="name:tag" />
          </Field>
          <button type="submit" disabled={busy}>
            Build
          </button>
          {log && (
            <pre class="logs" role="log" aria-label="Build log">
              {log}
            </pre>
          )}
        </form>
      )}
    </div>
  );
}
