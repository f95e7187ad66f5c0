// Gunzip driven synchronously on the calling thread, through the native handle of a zlib stream
// (what Node's own gunzipSync loop uses, `_handle.writeSync` and `_writeState`; not a public API,
// hence `create` answering null when they are missing, and the stage then leaving the layer to
// the diff service). A stage worker (stage-worker.ts) inflates each received chunk at once: no
// round trip through libuv's thread pool per 256 KiB (two thread switches each, which on a busy
// machine are two waits for a CPU), and the output goes to one reused buffer instead of a fresh
// allocation per chunk. Multi-member gzip, the CRC and length checks are zlib's, as in a stream.
import { constants, createGunzip, type Gunzip } from 'node:zlib';

interface ZlibHandle {
  writeSync(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void;
  onerror: (message: string, errno: number, code?: string) => void;
}

const EMPTY = new Uint8Array(0);

export class SyncGunzip {
  private error: Error | null = null;
  private closed = false;

  private constructor(
    private readonly z: Gunzip,
    private readonly handle: ZlibHandle,
    private readonly state: Uint32Array,
    private readonly out: Buffer,
  ) {
    // Called synchronously from writeSync on corrupt input (instead of the stream's destroy).
    handle.onerror = (message, errno, code) => {
      this.error ??= Object.assign(new Error(message), { errno, ...(code ? { code } : {}) });
    };
  }

  /** A synchronous gunzip with `outSize` bytes of output per step; null when this Node lacks the handle API. */
  static create(outSize = 256 * 1024): SyncGunzip | null {
    const z = createGunzip() as Gunzip & { _handle?: ZlibHandle; _writeState?: Uint32Array };
    if (typeof z._handle?.writeSync !== 'function' || !(z._writeState instanceof Uint32Array)) {
      z.close();
      return null;
    }
    return new SyncGunzip(z, z._handle, z._writeState, Buffer.allocUnsafe(outSize));
  }

  /**
   * Inflates `input` (`final`: no more input follows; a stream cut short then throws). `onOut` gets
   * each piece of output, a view of the reused buffer: valid only until it returns.
   */
  write(input: Uint8Array, final: boolean, onOut: (b: Buffer) => void): void {
    if (this.closed) throw new Error('gunzip closed');
    const flush = final ? constants.Z_FINISH : constants.Z_NO_FLUSH;
    let inOff = 0;
    let inLen = input.byteLength;
    for (;;) {
      this.handle.writeSync(flush, inLen ? input : EMPTY, inLen ? inOff : 0, inLen, this.out, 0, this.out.length);
      if (this.error) throw this.error;
      const availOut = this.state[0]!;
      const availIn = this.state[1]!;
      const have = this.out.length - availOut;
      if (have > 0) onOut(this.out.subarray(0, have));
      inOff += inLen - availIn;
      inLen = availIn;
      // Output space left over: zlib took all it wanted (all the input, or the stream ended).
      if (availOut !== 0) return;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.z.close();
  }
}
