// Docker Engine API wire type of an event, as GET /events streams it and the event log stores it
// (API < 1.52 clients also get the legacy status/id/from fields, added by the route).

export interface EventActor {
  ID: string;
  Attributes: Record<string, string>;
}

export interface EngineEvent {
  Type: string;
  Action: string;
  Actor: EventActor;
  scope: string;
  /** Seconds since the epoch. */
  time: number;
  /** Nanoseconds since the epoch; a bigint because it exceeds 2^53. */
  timeNano: bigint;
}
