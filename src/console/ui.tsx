// Small shared pieces of the views: a hook for a live subscription, an error line, a collapsible
// JSON tree (iterative render depth-limited by the data itself, which the API bounds), a button
// that runs an action and shows its failure.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export function useStore(subscribe: (fn: () => void) => () => void): number {
  const [v, setV] = useState(0);
  useEffect(() => subscribe(() => setV((n) => n + 1)), []);
  return v;
}

export function ErrorLine({ error }: { error: string }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function ActionButton(props: {
  label: string;
  run: () => Promise<unknown>;
  class?: string;
  disabled?: boolean;
  title?: string;
  onError: (m: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  return (
    <button
      type="button"
      class={props.class}
      disabled={busy || props.disabled}
      title={props.title}
      aria-label={props.title ?? props.label}
      onClick={async () => {
        setBusy(true);
        try {
          await props.run();
        } catch (err) {
          props.onError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      {props.label}
    </button>
  );
}

export function Tree({ value, name, open = false }: { value: unknown; name?: string; open?: boolean }): ComponentChildren {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as object);
    return (
      <details class="tree" open={open}>
        <summary>
          <span class="key">{name ?? ''}</span>{' '}
          <span class="dim">{Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`}</span>
        </summary>
        <div class="tree-children">
          {entries.map(([k, v]) => (
            <Tree key={k} name={k} value={v} />
          ))}
        </div>
      </details>
    );
  }
  return (
    <div class="leaf">
      <span class="key">{name}</span>: <span class={`v-${value === null ? 'null' : typeof value}`}>{JSON.stringify(value)}</span>
    </div>
  );
}

export function Field(props: { label: string; children: ComponentChildren }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
    </label>
  );
}
