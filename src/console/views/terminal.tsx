// A terminal in the container: `sh` exec'd with a TTY, in xterm.js, over the console listener's
// websocket to POST /exec/{id}/start; the terminal's size follows the window (POST /exec/{id}/resize).
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, execWebsocket } from '../api.ts';
import { ErrorLine } from '../ui.tsx';

export function TerminalTab({ id, running }: { id: string; running: boolean }) {
  const el = useRef<HTMLDivElement>(null);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('connecting');
  useEffect(() => {
    if (!running) return;
    const term = new Terminal({ cursorBlink: true, fontSize: 14, convertEol: false, screenReaderMode: false });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el.current!);
    term.textarea?.setAttribute('aria-label', 'Terminal input');
    fit.fit();
    let ws: WebSocket | undefined;
    let execId = '';
    let disposed = false;
    const resize = () => {
      fit.fit();
      if (execId && ws?.readyState === WebSocket.OPEN)
        void call('POST', `/exec/${execId}/resize?h=${term.rows}&w=${term.cols}`).catch(() => undefined); // the shell may have just exited: nothing to resize
    };
    execWebsocket(id, ['sh']).then(
      (r) => {
        if (disposed) return r.ws.close();
        ws = r.ws;
        execId = r.execId;
        const enc = new TextEncoder();
        ws.onopen = () => {
          setStatus('connected');
          resize();
          term.focus();
        };
        ws.onmessage = (m) => term.write(new Uint8Array(m.data as ArrayBuffer));
        ws.onclose = () => setStatus('closed');
        ws.onerror = () => setError('the terminal connection failed');
        term.onData((d) => ws?.readyState === WebSocket.OPEN && ws.send(enc.encode(d)));
      },
      (e: Error) => setError(e.message),
    );
    const ro = new ResizeObserver(resize);
    ro.observe(el.current!);
    return () => {
      disposed = true;
      ro.disconnect();
      ws?.close();
      term.dispose();
    };
  }, [id, running]);
  if (!running) return <p class="dim">The container is not running.</p>;
  return (
    <div>
      <p class="dim" data-testid="terminal-status">
        sh: {status}
      </p>
      <ErrorLine error={error} />
      <div class="term-box" ref={el} />
    </div>
  );
}
