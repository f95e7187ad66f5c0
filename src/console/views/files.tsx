// Files of a container through the archive API: browse a directory (GET .../archive, a tar whose
// headers are read and contents skipped; the listing stops at MAX_ENTRIES), download a path as a
// tar (GET .../archive), upload files into the directory (PUT .../archive with a tar made here).
import { useEffect, useState } from 'preact/hooks';
import { API, call, streamBytes } from '../api.ts';
import { bytes } from '../format.ts';
import { TarLister, writeTar, type TarEntry } from '../tar.ts';
import { ErrorLine } from '../ui.tsx';

const MAX_ENTRIES = 20000;

function join(dir: string, name: string): string {
  return (dir.endsWith('/') ? dir : dir + '/') + name;
}

export function FilesTab({ id }: { id: string }) {
  const [dir, setDir] = useState('/');
  const [goTo, setGoTo] = useState('/');
  useEffect(() => setGoTo(dir), [dir]);
  const [entries, setEntries] = useState<TarEntry[]>([]);
  const [truncated, setTruncated] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    const lister = new TarLister();
    const children = new Map<string, TarEntry>();
    let seen = 0;
    let root: string | undefined;
    setBusy(true);
    setError('');
    setTruncated(false);
    streamBytes(
      'GET',
      `/containers/${id}/archive?path=${encodeURIComponent(dir)}`,
      (chunk) => {
        for (const e of lister.push(chunk)) {
          seen++;
          const name = e.name.replace(/^\.?\/+/, '').replace(/^\.$/, '');
          if (root === undefined && dir === '/') root = ''; // the root's archive has no entry of its own
          if (root === undefined) {
            root = name; // the directory itself comes first, named by its base name
            continue;
          }
          const rel = root ? name.slice(root.length + 1) : name;
          if (!rel) continue;
          const top = rel.split('/')[0]!;
          if (!children.has(top))
            children.set(top, rel === top ? { ...e, name: top } : { name: top, type: 'dir', size: 0, mode: 0, mtime: 0, linkname: '' });
        }
        if (seen > MAX_ENTRIES || lister.ended) {
          setTruncated(!lister.ended);
          abort.abort();
        }
      },
      abort.signal,
    )
      .then(() =>
        setEntries(
          [...children.values()].sort((a, b) => (a.type === 'dir' ? 0 : 1) - (b.type === 'dir' ? 0 : 1) || a.name.localeCompare(b.name)),
        ),
      )
      .catch((e: Error) => setError(e.message))
      .finally(() => setBusy(false));
    return () => abort.abort();
  }, [id, dir, version]);

  const upload = async (files: FileList | null) => {
    if (!files?.length) return;
    setError('');
    try {
      const tar = writeTar(
        await Promise.all(
          [...files].map(async (f) => ({ name: f.name, data: new Uint8Array(await f.arrayBuffer()), mtime: f.lastModified / 1000 })),
        ),
      );
      await call('PUT', `/containers/${id}/archive?path=${encodeURIComponent(dir)}`, tar, { 'Content-Type': 'application/x-tar' });
      setVersion(version + 1);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const up = dir === '/' ? '/' : dir.replace(/\/[^/]+\/?$/, '') || '/';
  return (
    <div>
      <div class="toolbar">
        <button type="button" onClick={() => setDir(up)} disabled={dir === '/'} aria-label="Parent directory">
          ↑ Up
        </button>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (goTo.startsWith('/')) setDir(goTo.length > 1 ? goTo.replace(/\/+$/, '') : goTo);
          }}
        >
          <input aria-label="Directory path" value={goTo} onInput={(e) => setGoTo(e.currentTarget.value)} class="mono" />
          <button type="submit">Go</button>
        </form>
        <code data-testid="files-dir">{dir}</code>
        <a class="button" href={`${API}/containers/${id}/archive?path=${encodeURIComponent(dir)}`} download>
          Download this directory (tar)
        </a>
        <label class="button">
          Upload files here
          <input
            type="file"
            multiple
            class="visually-hidden"
            aria-label="Upload files into this directory"
            onChange={(e) => void upload(e.currentTarget.files)}
          />
        </label>
        {busy && <span class="dim">reading…</span>}
      </div>
      <ErrorLine error={error} />
      {truncated && <p class="dim">Only the first {MAX_ENTRIES} entries under this directory were read.</p>}
      <table class="grid small">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col">Mode</th>
            <th scope="col">Modified</th>
            <th scope="col">Download</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.name}>
              <td>
                {e.type === 'dir' ? (
                  <a href="#" onClick={(ev) => (ev.preventDefault(), setDir(join(dir, e.name)))}>
                    {e.name}/
                  </a>
                ) : (
                  <span>
                    {e.name}
                    {e.type === 'symlink' ? ` → ${e.linkname}` : ''}
                  </span>
                )}
              </td>
              <td>{e.type === 'file' ? bytes(e.size) : ''}</td>
              <td>{e.mode ? e.mode.toString(8) : ''}</td>
              <td>{e.mtime ? new Date(e.mtime * 1000).toLocaleString() : ''}</td>
              <td>
                <a
                  href={`${API}/containers/${id}/archive?path=${encodeURIComponent(join(dir, e.name))}`}
                  download
                  aria-label={`Download ${e.name}`}
                >
                  tar
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
