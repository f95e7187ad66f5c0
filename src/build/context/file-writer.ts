// Writing an archive entry's data to a file through one buffer per archive: incoming chunks are
// copied into it and dropped at once, and it is written when full (1 MiB) or at the entry's end.
// Before, the chunks themselves were kept until 1 MiB had arrived, i.e. across several socket
// reads: long enough for the young-generation collector to promote them, so that their off-heap
// memory waited for a full GC. Now memory per chunk is O(1) and nothing outlives its chunk; the
// copy costs a memcpy, far less than the write that follows.
import { writeSync } from 'node:fs';

const SIZE = 1 << 20;

export class EntryFileWriter {
  private readonly buf = Buffer.allocUnsafeSlow(SIZE);
  private fill = 0;

  /** Writes `body` to `fd` (from its current offset); returns the bytes written. */
  async write(fd: number, body: AsyncIterable<Buffer>): Promise<number> {
    let total = 0;
    this.fill = 0;
    for await (const chunk of body) {
      let off = 0;
      while (off < chunk.length) {
        const n = chunk.copy(this.buf, this.fill, off);
        this.fill += n;
        off += n;
        if (this.fill === SIZE) total += this.flush(fd);
      }
    }
    return total + this.flush(fd);
  }

  private flush(fd: number): number {
    const size = this.fill;
    let written = 0;
    while (written < size) written += writeSync(fd, this.buf, written, size - written);
    this.fill = 0;
    return size;
  }
}
