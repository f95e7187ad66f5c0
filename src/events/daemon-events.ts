// The daemon's own events: `reload` after SIGHUP, with the reloadable settings as dockerd reports
// them (lists as JSON, booleans and numbers as text) and the host name as `name`.
import { hostname } from 'node:os';
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { EventPublisher } from './bus.ts';

export function reloadAttributes(c: DaemonConfig): Record<string, string> {
  return {
    debug: String(c.debug),
    'default-runtime': c['default-runtime'],
    features: JSON.stringify(c.features ?? {}),
    'insecure-registries': JSON.stringify(c['insecure-registries'] ?? []),
    labels: JSON.stringify(c.labels ?? []),
    'live-restore': String(c['live-restore']),
    'max-concurrent-downloads': String(c['max-concurrent-downloads']),
    'max-concurrent-uploads': String(c['max-concurrent-uploads']),
    'max-download-attempts': String(c['max-download-attempts']),
    'registry-mirrors': JSON.stringify(c['registry-mirrors'] ?? []),
    runtimes: Object.keys(c.runtimes ?? {})
      .sort()
      .join(' '),
    'shutdown-timeout': String(c['shutdown-timeout']),
    name: hostname(),
  };
}

export function publishDaemonEvent(events: EventPublisher, engineId: string, action: string, attributes: Record<string, string>): void {
  events.publish({
    Type: 'daemon',
    Action: action,
    Actor: { ID: engineId, Attributes: { ...attributes, name: attributes.name ?? hostname() } },
  });
}
