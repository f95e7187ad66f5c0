// The console's page: a navigation bar and one view per hash route (#/containers, #/containers/<id>,
// #/images, …). Styles of xterm.js and uPlot are bundled with the console's own.
import '@xterm/xterm/css/xterm.css';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { DialogHost } from './dialog.tsx';
import { ClusterView } from './views/cluster.tsx';
import { ContainerView } from './views/container.tsx';
import { ContainersView } from './views/containers.tsx';
import { ImagesView } from './views/images.tsx';
import { OverviewView } from './views/overview.tsx';
import { NetworksView, VolumesView } from './views/resources.tsx';

const NAV = [
  ['overview', 'Overview'],
  ['containers', 'Containers'],
  ['images', 'Images'],
  ['networks', 'Networks'],
  ['volumes', 'Volumes'],
  ['cluster', 'Cluster'],
] as const;

function route(): string[] {
  return location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
}

function App() {
  const [parts, setParts] = useState(route());
  useEffect(() => {
    const on = () => setParts(route());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  const page = parts[0] ?? 'overview';
  let view;
  if (page === 'containers' && parts[1]) view = <ContainerView id={parts[1]} tab={parts[2] ?? 'logs'} />;
  else if (page === 'containers') view = <ContainersView />;
  else if (page === 'images') view = <ImagesView />;
  else if (page === 'networks') view = <NetworksView />;
  else if (page === 'volumes') view = <VolumesView />;
  else if (page === 'cluster') view = <ClusterView />;
  else view = <OverviewView />;
  return (
    <div class="shell">
      <nav aria-label="Sections">
        <span class="brand">engine</span>
        {NAV.map(([id, label]) => (
          <a key={id} href={`#/${id}`} aria-current={page === id ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <main>{view}</main>
      <DialogHost />
    </div>
  );
}

render(<App />, document.getElementById('app')!);
