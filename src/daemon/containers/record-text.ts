// A container record's JSON for the store without serialising its Config again on every state
// change: the Config of a container never changes after create (update touches HostConfig only),
// so a large one (50 000 labels, a 4 MiB label: 10–20 ms per JSON.stringify) is serialised once,
// in slices at create, and spliced into the record's text on each write. Records are immutable
// snapshots (the store hands out frozen ones), which is what makes keying the text by object safe.
import { randomBytes } from 'node:crypto';
import { rememberLabelsText } from '../../events/actors.ts';
import { stringifyJsonSliced } from '../../util/json-sliced.ts';
import type { ContainerRecord } from './record.ts';

/** Config text by Config object, kept only for large ones. */
const configTexts = new WeakMap<object, string>();
/** Configs serialised to fewer characters than this are not worth keeping. */
const KEEP_FROM = 64 * 1024;
/** Stands for the Config in the record's own serialisation; unguessable, so no field can hold it. */
const MARK = `"config-${randomBytes(16).toString('hex')}"`;

/** Serialises the record's Config (and its Labels, for events) in slices, ahead of the writes that need them. */
export async function prepareRecordText(rec: ContainerRecord): Promise<void> {
  const config = rec.Config;
  if (configTexts.has(config)) return;
  const text = await stringifyJsonSliced(config);
  if (text !== undefined && text.length >= KEEP_FROM) configTexts.set(config, text);
  const labels = config.Labels;
  if (labels && text !== undefined && text.length >= KEEP_FROM) {
    const labelsText = await stringifyJsonSliced(labels);
    if (labelsText !== undefined && labelsText.length >= KEEP_FROM) rememberLabelsText(labels, labelsText);
  }
}

/** JSON.stringify(rec), with a large Config's text reused (or made and kept now). */
export function recordText(rec: ContainerRecord): string {
  const config = rec.Config as object | undefined;
  if (!config || typeof config !== 'object') return JSON.stringify(rec);
  let text = configTexts.get(config);
  if (text === undefined) {
    text = JSON.stringify(config);
    if (text.length < KEEP_FROM) return JSON.stringify(rec);
    configTexts.set(config, text);
  }
  const outer = JSON.stringify({ ...rec, Config: JSON.parse(MARK) as string });
  const at = outer.indexOf(MARK);
  return outer.slice(0, at) + text + outer.slice(at + MARK.length);
}
