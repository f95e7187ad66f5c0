// A value already serialised as JSON, kept as its UTF-8 bytes: docker ps with thousands of
// containers hands the API layer entries cached this way, which it copies into the response as they
// are instead of building and encoding the whole text again on every request. Anything that
// serialises it the ordinary way (JSON.stringify) still gets the same value.
export class JsonText {
  readonly bytes: Buffer;

  constructor(text: string) {
    this.bytes = Buffer.from(text);
  }

  get text(): string {
    return this.bytes.toString('utf8');
  }

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
