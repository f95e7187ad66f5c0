// A container record's JSON for the store without serialising its Config again on every state
// change: the Config of a container never changes after create (update touches HostConfig only),
// so a large one (50 000 labels, a 4 MiB label: 10–20 ms per JSON.stringify) is serialised once,
// in slices at create, and spliced into the record's text on each write. Records are immutable
// snapshots (the store hands out frozen ones), which is what makes keying the text by object safe.
import { knownJsonText, rememberJsonText, spliceJson, stringifyJsonSliced } from '../../util/json-sliced.ts';
import type { ContainerRecord } from './record.ts';

/** Texts shorter than this are not worth keeping. */
const KEEP_FROM = 64 * 1024;

/** Serialises the record's Config (and its Labels, for events and docker ps) in slices, ahead of the writes that need them. */
export async function prepareRecordText(rec: ContainerRecord): Promise<void> {
  const config = rec.Config;
  if (knownJsonText(config) !== undefined) return;
  const text = await stringifyJsonSliced(config);
  if (text === undefined || text.length < KEEP_FROM) return;
  rememberJsonText(config, text);
  const labels = config.Labels;
  if (labels) {
    const labelsText = await stringifyJsonSliced(labels);
    if (labelsText !== undefined && labelsText.length >= KEEP_FROM) rememberJsonText(labels, labelsText);
  }
}

/** JSON.stringify(rec), with a large Config's text reused (or made and kept now). */
export function recordText(rec: ContainerRecord): string {
  const config = rec.Config as object | undefined;
  if (!config || typeof config !== 'object') return JSON.stringify(rec);
  let text = knownJsonText(config);
  if (text === undefined) {
    text = JSON.stringify(config);
    if (text.length < KEEP_FROM) return JSON.stringify(rec);
    rememberJsonText(config, text);
  }
  return spliceJson(rec, 'Config', text);
}
