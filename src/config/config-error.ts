// A configuration mistake made by the user (bad flag, bad file, bad value). The loader turns it into
// an exit with a message; anything else thrown while loading is a bug and propagates.

export class ConfigError extends Error {
  /** True when the mistake is on the command line itself (unknown flag, stray argument): --help helps. */
  readonly usage: boolean;
  constructor(message: string, usage = false) {
    super(message);
    this.name = 'ConfigError';
    this.usage = usage;
  }
}
