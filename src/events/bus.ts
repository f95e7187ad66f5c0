// The daemon's event bus: every service publishes here; GET /events subscribes. Each event is
// written to the persistent EventLog before any subscriber sees it, so a client that saw an event
// can always find it again with --since, also after a crash or restart.
import type { EngineEvent } from '../types/events.ts';
import { storedAttributesText, wallClockNanos, type EventInput, type EventLog } from '../store/events.ts';
import type { Logger } from '../util/log.ts';

/** What a publisher hands in: `{Type, Action, Actor: {ID, Attributes}}`. */
export type EventMessage = EventInput;

/** The narrow interface other services depend on (easy to stub in tests). */
export interface EventPublisher {
  /** Hands msg.Actor.Attributes over: the publisher must not change it afterwards. */
  publish(msg: EventMessage): void;
}

export type EventListener = (ev: EngineEvent) => void;

export class EventBus implements EventPublisher {
  private readonly listeners = new Map<EventListener, (() => void) | undefined>();
  private closed = false;
  private readonly log: EventLog | undefined;
  private readonly logger: Logger | undefined;
  private lastNano = 0n;

  constructor(deps: { log?: EventLog; logger?: Logger } = {}) {
    this.log = deps.log;
    this.logger = deps.logger;
  }

  /**
   * Persists then delivers one event. Never throws: an event that cannot be stored is still
   * delivered live (and logged), since failing the operation that caused it would be worse.
   */
  publish(msg: EventMessage): void {
    // The bus takes the Attributes object over (every publisher builds a fresh one): copying it
    // again cost ~100 ms per event for a container with 200 000 labels.
    const input: EventInput = {
      ...msg,
      // An Actor carrying its attributes as text (actorWithText) is kept: reading them would build the map.
      Actor:
        msg.Actor && storedAttributesText(msg.Actor) !== undefined
          ? msg.Actor
          : { ID: msg.Actor?.ID ?? '', Attributes: msg.Actor?.Attributes ?? {} },
      timeNano: msg.timeNano ?? this.nextNano(),
    };
    let ev: EngineEvent;
    try {
      ev = this.log ? this.log.append(input) : complete(input);
    } catch (err) {
      this.logger?.warn(`event not persisted: ${(err as Error).message}`, { type: msg.Type, action: msg.Action });
      ev = complete(input);
    }
    for (const fn of [...this.listeners.keys()]) {
      try {
        fn(ev);
      } catch (err) {
        this.logger?.warn(`event listener failed: ${(err as Error).message}`);
      }
    }
  }

  /**
   * Live events from now on; returns the unsubscribe function. `onClose` runs when the bus closes
   * (daemon shutdown), so long-lived streams end instead of holding the shutdown up.
   */
  subscribe(fn: EventListener, onClose?: () => void): () => void {
    if (this.closed) {
      onClose?.();
      return () => undefined;
    }
    this.listeners.set(fn, onClose);
    return () => void this.listeners.delete(fn);
  }

  /** Ends every subscription (their onClose runs); later publishes are still stored. */
  close(): void {
    this.closed = true;
    const ending = [...this.listeners.values()];
    this.listeners.clear();
    for (const onClose of ending) onClose?.();
  }

  /**
   * Stored events in [sinceNano, untilNano], in publish order (empty without a log): the events
   * stored by now, read lazily (see EventLog.replay).
   */
  history(sinceNano: bigint, untilNano?: bigint): Iterable<EngineEvent> {
    return this.log ? this.log.replay(sinceNano, untilNano) : [];
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  /** Strictly increasing timestamps keep replay order equal to publish order for same-ns bursts. */
  private nextNano(): bigint {
    let now = wallClockNanos();
    if (now <= this.lastNano) now = this.lastNano + 1n;
    this.lastNano = now;
    return now;
  }
}

function complete(input: EventInput): EngineEvent {
  const timeNano = input.timeNano ?? wallClockNanos();
  return {
    Type: input.Type,
    Action: input.Action,
    Actor: input.Actor,
    scope: input.scope ?? 'local',
    time: Number(timeNano / 1_000_000_000n),
    timeNano,
  };
}
