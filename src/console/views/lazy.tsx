// Views behind import(): xterm.js and uPlot are loaded only when a terminal or a chart is opened,
// so the first page the console shows parses a fraction of the bundle.
import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export function lazyView<P extends object>(load: () => Promise<FunctionComponent<P>>): FunctionComponent<P> {
  let loaded: FunctionComponent<P> | undefined;
  return (props: P) => {
    const [View, setView] = useState<FunctionComponent<P> | undefined>(() => loaded);
    const [error, setError] = useState('');
    useEffect(() => {
      if (!loaded)
        load().then(
          (v) => setView(() => (loaded = v)),
          (e: Error) => setError(e.message),
        );
    }, []);
    if (error) return <p class="error">{error}</p>;
    return View ? <View {...props} /> : <p class="dim">loading…</p>;
  };
}
