// A map keyed by a file's identity (device, inode) for the walks that keep hard links as links
// (build context checksum and copy, layer tars): numbers as keys, one inner map per device, not a
// `${dev}:${ino}` string per file. A fresh string per entry cost ~60 bytes of heap per file while
// the map lived, and the walks fill it with every file of a tree whose files all have a second
// name (a context COPYed twice, an upper directory of links to the context).
export class InodeMap<V> {
  private readonly byDev = new Map<number, Map<number, V>>();

  get(st: { dev: number; ino: number }): V | undefined {
    return this.byDev.get(st.dev)?.get(st.ino);
  }

  set(st: { dev: number; ino: number }, value: V): void {
    let inner = this.byDev.get(st.dev);
    if (!inner) this.byDev.set(st.dev, (inner = new Map()));
    inner.set(st.ino, value);
  }

  get size(): number {
    let n = 0;
    for (const m of this.byDev.values()) n += m.size;
    return n;
  }
}
