// The console's one modal dialog, for actions that need a value (tag an image, push which tag, scale
// a service, a new image, a container to connect): a form with labelled fields in a <dialog> opened
// with showModal (the page behind is inert), focus kept inside by Tab and Shift+Tab, Escape cancels,
// Enter submits. The action runs inside the dialog: its progress and the daemon's error message show
// there, and the dialog closes only when the action succeeded. Focus goes back to the opener.
import { useEffect, useRef, useState } from 'preact/hooks';
import { useStore } from './ui.tsx';

export interface DialogField {
  name: string;
  label: string;
  value?: string;
  type?: 'text' | 'number';
  /** A fixed choice: a select. */
  options?: string[];
  /** Suggestions for a free text field (a datalist). */
  suggestions?: string[];
  required?: boolean;
  min?: number;
  placeholder?: string;
}

export interface DialogSpec {
  title: string;
  fields: DialogField[];
  submit: string;
  /** Runs the action with the fields' values; `progress` shows a line in the dialog while it runs. */
  run: (values: Record<string, string>, progress: (text: string) => void) => Promise<unknown>;
}

let current: { spec: DialogSpec; opener: Element | null; key: number } | null = null;
let seq = 0;
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((fn) => fn());

export function openDialog(spec: DialogSpec): void {
  current = { spec, opener: document.activeElement, key: ++seq };
  changed();
}

let shown: HTMLDialogElement | null = null;

function closeDialog(): void {
  const opener = current?.opener;
  current = null;
  if (shown?.open) shown.close(); // the page behind is live again before the focus goes back to it
  shown = null;
  changed();
  if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
}

/** Rendered once by the page; shows the open dialog, if any. */
export function DialogHost() {
  useStore((fn) => {
    listeners.add(fn);
    return () => listeners.delete(fn);
  });
  return current ? <Modal key={current.key} n={current.key} spec={current.spec} /> : null;
}

const FOCUSABLE = 'input:not([disabled]), select:not([disabled]), textarea:not([disabled]), button:not([disabled])';

function Modal({ spec, n }: { spec: DialogSpec; n: number }) {
  const ref = useRef<HTMLDialogElement>(null);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(spec.fields.map((f) => [f.name, f.value ?? f.options?.[0] ?? ''])),
  );
  const [error, setError] = useState('');
  const [progress, setProgress] = useState('');
  const [busy, setBusy] = useState(false);
  const id = `dlg-${n}`;
  useEffect(() => {
    const el = ref.current!;
    el.showModal();
    shown = el;
    el.querySelector<HTMLElement>(FOCUSABLE)?.focus();
    // The browser closes a modal dialog itself on a second Escape without user activation: follow it.
    const onClose = () => current && closeDialog();
    el.addEventListener('close', onClose);
    return () => {
      el.removeEventListener('close', onClose);
      if (el.open) el.close();
    };
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Tab') return;
    const all = [...ref.current!.querySelectorAll<HTMLElement>(FOCUSABLE)];
    if (all.length === 0) return;
    const at = all.indexOf(document.activeElement as HTMLElement);
    const next = e.shiftKey ? (at <= 0 ? all.length - 1 : at - 1) : at < 0 || at === all.length - 1 ? 0 : at + 1;
    e.preventDefault();
    all[next]!.focus();
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError('');
    setProgress('');
    try {
      await spec.run(values, setProgress);
      closeDialog();
    } catch (err) {
      setError((err as Error).message);
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={ref}
      class="modal"
      aria-labelledby={`${id}-title`}
      onKeyDown={onKeyDown}
      onCancel={(e) => {
        e.preventDefault();
        closeDialog();
      }}
    >
      <form onSubmit={submit}>
        <h2 id={`${id}-title`}>{spec.title}</h2>
        {spec.fields.map((f) => (
          <label class="field" key={f.name}>
            <span>{f.label}</span>
            {f.options ? (
              <select value={values[f.name]} onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}>
                {f.options.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            ) : (
              <input
                type={f.type ?? 'text'}
                required={f.required}
                min={f.min}
                placeholder={f.placeholder}
                list={f.suggestions ? `${id}-${f.name}-list` : undefined}
                value={values[f.name]}
                onInput={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}
              />
            )}
            {f.suggestions && (
              <datalist id={`${id}-${f.name}-list`}>
                {f.suggestions.map((s) => (
                  <option key={s} value={s} />
                ))}
              </datalist>
            )}
          </label>
        ))}
        {progress && (
          <p class="dim" role="status">
            {progress}
          </p>
        )}
        {error && (
          <p class="error" role="alert" data-testid="dialog-error">
            {error}
          </p>
        )}
        <div class="buttons">
          <button type="button" onClick={closeDialog}>
            Cancel
          </button>
          <button type="submit" disabled={busy} aria-busy={busy}>
            {spec.submit}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** A button that opens a dialog (its spec made at the click, from the row's latest data). */
export function DialogButton(props: { label: string; title: string; disabled?: boolean; dialog: () => DialogSpec }) {
  return (
    <button type="button" aria-label={props.title} title={props.title} disabled={props.disabled} onClick={() => openDialog(props.dialog())}>
      {props.label}
    </button>
  );
}
