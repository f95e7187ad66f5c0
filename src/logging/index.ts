// Container log drivers: json-file (default, dockerd's format), local (compact binary), none, and
// log-driver plugins (plugin-driver.ts).

import { join } from 'node:path';
import { jsonCodec } from './format-json.ts';
import { localCodec } from './format-local.ts';
import { FileLogDriver } from './file-driver.ts';
import { NoneLogDriver } from './none.ts';
import { PluginLogDriver } from './plugin-driver.ts';
import { createGelfDriver } from './remote/gelf.ts';
import { createSyslogDriver } from './remote/syslog.ts';
import { createFluentdDriver } from './remote/fluentd.ts';
import { createJournaldDriver } from './remote/journald.ts';
import { extraAttributes, fileLogConfig, isBuiltinLogDriver, validateLogOptions } from './options.ts';
import type { LogDriver, LogDriverOptions } from './types.ts';

export type { LogAttachment, LogDriver, LogDriverOptions, LogInput, LogMessage, LogReadOptions, LogStream, LogStreams } from './types.ts';
export { attachInput } from './input.ts';
export type { LogPluginInfo, LogPluginTransport } from './types.ts';
export { isBuiltinLogDriver, LOG_DRIVERS, logAttrs, parseSize, validateLogOptions, type ContainerLogInfo } from './options.ts';
export { formatTimeNano, nowNano, parseTimeNano } from '../util/time.ts';
export { READ_NOT_SUPPORTED } from './none.ts';
export { LogMessages } from './reader.ts';

/** Where each driver keeps the current file (dockerd's paths). */
export function logFilePath(kind: string, dir: string, containerId: string): string {
  if (kind === 'json-file') return join(dir, `${containerId}-json.log`);
  if (kind === 'local') return join(dir, 'local-logs', 'container.log');
  return '';
}

/**
 * A driver for one container. Validates the options first (invalidParameter, dockerd's messages).
 * Nothing touches the disk until attach() or a read.
 */
export function createLogDriver(
  kind: string,
  opts: LogDriverOptions & { onError?: (err: unknown) => void; onDebug?: (msg: string) => void },
): LogDriver {
  if (opts.plugin && !isBuiltinLogDriver(kind)) {
    validateLogOptions(kind, opts.options, true);
    return new PluginLogDriver(kind, opts.plugin.transport, opts.plugin.info, opts.plugin.fifoDir, join(opts.dir, 'container-cached.log'));
  }
  validateLogOptions(kind, opts.options);
  if (kind === 'none') return new NoneLogDriver();
  if (kind === 'gelf') return createGelfDriver(opts);
  if (kind === 'syslog') return createSyslogDriver(opts);
  if (kind === 'fluentd') return createFluentdDriver(opts);
  if (kind === 'journald') return createJournaldDriver(opts);
  const config = fileLogConfig(kind, opts.options);
  const path = logFilePath(kind, opts.dir, opts.containerId);
  if (kind === 'local') return new FileLogDriver('local', path, localCodec, config, opts.onError);
  const attrs = extraAttributes(opts.containerId, opts.options, opts.attrs);
  return new FileLogDriver('json-file', path, jsonCodec(attrs), config, opts.onError);
}
