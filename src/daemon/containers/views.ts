// What clients see of a container record: the inspect document and the list entry. Every field a
// client reads is present with the right type (lists are [] not null where dockerd sends []).
import type { ContainerRecord } from './record.ts';
import { hostConfigView } from './host-config-view.ts';
import { parseLink } from './create/links.ts';
import { humanStatus } from './record.ts';
import type { NetworkView } from '../../network/container-contract.ts';
import { JsonText } from '../../util/json-text.ts';
import { knownJsonText, spliceJson } from '../../util/json-sliced.ts';
import type { ContainerInspectView, ContainerSummaryView } from '../../types/container-views.ts';

export function inspectView(
  rec: ContainerRecord,
  net: NetworkView,
  execIds: string[],
  size?: { rw: number; rootFs: number },
): ContainerInspectView {
  return {
    Id: rec.Id,
    Created: rec.Created,
    Path: rec.Path,
    Args: rec.Args,
    State: rec.State,
    Image: rec.Image,
    ResolvConfPath: rec.ResolvConfPath,
    HostnamePath: rec.HostnamePath,
    HostsPath: rec.HostsPath,
    LogPath: rec.LogPath,
    Name: rec.Name,
    RestartCount: rec.RestartCount,
    Driver: rec.Driver,
    Platform: rec.Platform,
    MountLabel: rec.MountLabel,
    ProcessLabel: rec.ProcessLabel,
    AppArmorProfile: rec.AppArmorProfile,
    ExecIDs: execIds.length ? execIds : null,
    HostConfig: hostConfigView({ ...rec.HostConfig, Links: inspectLinks(rec) }),
    GraphDriver: { Name: rec.Driver, Data: null },
    ...(size ? { SizeRw: size.rw, SizeRootFs: size.rootFs } : {}),
    Mounts: rec.Mounts,
    Config: rec.Config,
    NetworkSettings: net.settings,
  };
}

/** dockerd's list Command: Path, then the args with those holding a space in single quotes. */
function commandLine(rec: ContainerRecord): string {
  if (rec.Args.length === 0) return rec.Path;
  return `${rec.Path} ${rec.Args.map((a) => (a.includes(' ') ? `'${a}'` : a)).join(' ')}`;
}

export function summaryView(
  rec: ContainerRecord,
  net: NetworkView,
  size?: { rw: number; rootFs: number },
  status = humanStatus(rec.State),
): ContainerSummaryView {
  return {
    Id: rec.Id,
    Names: [rec.Name],
    Image: rec.ImageRef,
    ImageID: rec.Image,
    Command: commandLine(rec),
    Created: Math.floor(Date.parse(rec.Created) / 1000),
    Ports: net.ports,
    ...(size ? { SizeRw: size.rw, SizeRootFs: size.rootFs } : {}),
    Labels: rec.Config.Labels ?? {},
    State: rec.State.Status,
    Status: status,
    HostConfig: {
      NetworkMode: rec.HostConfig.NetworkMode ?? 'bridge',
      ...(rec.HostConfig.Annotations ? { Annotations: rec.HostConfig.Annotations } : {}),
    },
    NetworkSettings: { Networks: net.summaryNetworks },
    Mounts: rec.Mounts,
  };
}

/**
 * HostConfig.Links as dockerd's inspect shows them: the registered link names, "/<other>:/<this
 * container>/<alias>", or null (none, or on a user-defined network, where links are DNS aliases).
 */
function inspectLinks(rec: ContainerRecord): string[] | null {
  const mode = rec.HostConfig.NetworkMode ?? 'default';
  const legacy = ['default', 'bridge'].includes(mode);
  const links = legacy ? (rec.HostConfig.Links ?? []) : [];
  if (!links.length) return null;
  const self = rec.Name.startsWith('/') ? rec.Name : `/${rec.Name}`;
  return links.map((l) => {
    const { name, alias } = parseLink(l);
    return `/${name}:${self}/${alias}`;
  });
}

/** A list entry's JSON and what it was built from. */
interface CachedSummary {
  inputs: unknown[];
  json: JsonText;
}

const summaries = new WeakMap<ContainerRecord, CachedSummary>();

/**
 * summaryView (without sizes) as JSON text, built again only when something it shows may have
 * changed: the record's fields are compared by identity (those replaced, never changed in place:
 * Args, Labels, Mounts…) or value, the state through the status text itself, the networks through
 * `netGeneration` (moved by every write of the network layer's facts about this container).
 */
export function summaryJson(rec: ContainerRecord, netGeneration: string, net: () => NetworkView): JsonText {
  const status = humanStatus(rec.State);
  const hc = rec.HostConfig;
  const inputs = [
    netGeneration,
    status,
    rec.State.Status,
    rec.State.Running,
    rec.Name,
    rec.Id,
    rec.ImageRef,
    rec.Image,
    rec.Path,
    rec.Args,
    rec.Created,
    rec.Config.Labels,
    rec.Config.ExposedPorts,
    hc,
    hc.NetworkMode,
    hc.PortBindings,
    hc.Annotations,
    rec.Mounts,
    rec.Internal.netnsPath,
  ];
  const cached = summaries.get(rec);
  if (cached && cached.inputs.length === inputs.length && cached.inputs.every((v, i) => v === inputs[i])) return cached.json;
  // Large labels' text is made once (record-text.ts), not on every change of the container's state.
  const labels = rec.Config.Labels;
  const labelsText = labels ? knownJsonText(labels) : undefined;
  const view = summaryView(rec, net(), undefined, status);
  const json = new JsonText(labelsText === undefined ? JSON.stringify(view) : spliceJson(view, 'Labels', labelsText));
  summaries.set(rec, { inputs, json });
  return json;
}
