// The schema of engine.db as numbered steps. Append new steps; never edit a released one (databases
// in the field have already run it). PRAGMA user_version records the last step applied.
//
// Keyed JSON tables (kv_<name>, see kv.ts) are created on first use instead: their shape is fixed
// (key, JSON value), so they never need migrating.

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'containers and events',
    sql: `
      -- One row per container; data is the daemon's JSON record. name is stored without the
      -- leading '/' that the API shows.
      CREATE TABLE containers (
        id      TEXT PRIMARY KEY NOT NULL,
        name    TEXT NOT NULL UNIQUE,
        created INTEGER NOT NULL,
        data    TEXT NOT NULL
      ) STRICT;
      CREATE INDEX containers_created ON containers (created);

      -- AUTOINCREMENT: a sequence number is never reused after trimming, so a reader can resume
      -- from the last one it saw.
      CREATE TABLE events (
        seq        INTEGER PRIMARY KEY AUTOINCREMENT,
        time_nano  INTEGER NOT NULL,
        type       TEXT NOT NULL,
        action     TEXT NOT NULL,
        actor_id   TEXT NOT NULL,
        attributes TEXT NOT NULL,
        scope      TEXT NOT NULL
      ) STRICT;
      CREATE INDEX events_time ON events (time_nano);
    `,
  },
];
