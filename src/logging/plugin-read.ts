// `docker logs` from a log-driver plugin's ReadLogs answer: its length-prefixed LogEntry messages
// decoded into LogMessages, filtered by stream and time again (the plugin should have, dockerd
// checks anyway); an entry past `until` ends the read.
import { internal } from '../errors.ts';
import { LogEntryDecoder } from './log-entry.ts';
import type { LogMessage, LogReadOptions } from './types.ts';

/** The messages of a ReadLogs answer; a decoding error fails the read unless it was aborted. */
export async function* pluginLogMessages(
  res: AsyncIterable<Buffer>,
  opts: LogReadOptions,
  aborted: AbortSignal,
): AsyncIterable<LogMessage> {
  const decoder = new LogEntryDecoder();
  try {
    for await (const chunk of res) {
      for (const e of decoder.push(chunk)) {
        const stream = e.source === 'stderr' ? 'stderr' : 'stdout';
        if (stream === 'stdout' ? !opts.stdout : !opts.stderr) continue;
        // The plugin should have filtered; dockerd checks again.
        if (opts.since !== undefined && e.timeNano < opts.since) continue;
        if (opts.until !== undefined && e.timeNano > opts.until) return;
        const partial = e.partial;
        yield { stream, line: partial ? e.line : Buffer.concat([e.line, Buffer.from('\n')]), timeNano: e.timeNano, partial };
      }
    }
  } catch (err) {
    if (!aborted.aborted) throw internal(`error decoding log message: ${(err as Error).message}`);
  }
}
