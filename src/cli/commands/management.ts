// The management commands whose subcommands are the top-level commands again under docker's
// second names (`engine container ls` = `engine ps`, `engine image rm` = `engine rmi`), with the
// subcommands that exist only there (prune, system df). Entries are the other files' own, renamed.
import type { CommandSpec } from '../command-spec.ts';
import * as c from './containers.ts';
import * as img from './images.ts';
import * as pr from './prune.ts';
import * as r from './run.ts';
import * as sys from './system.ts';

/** A top-level entry listed under a management command: its own name, or a new one with aliases. */
function under(spec: CommandSpec, name = spec.name, aliases?: string[]): CommandSpec {
  const { group: _group, ...rest } = spec;
  return { ...rest, name, aliases };
}

const INSPECT_ONE = c.INSPECT_FLAGS.filter((f) => f.name !== 'type');

export const SPECS: CommandSpec[] = [
  {
    name: 'container',
    group: 'management',
    description: 'Manage containers',
    subcommands: [
      under(r.ATTACH),
      under(sys.CP),
      under(r.CREATE),
      under(r.EXEC),
      {
        name: 'inspect',
        description: 'Display detailed information on one or more containers',
        usage: '[OPTIONS] CONTAINER [CONTAINER...]',
        flags: INSPECT_ONE,
        run: (cli, argv) => c.inspect(cli, argv, 'container'),
      },
      under(c.KILL),
      under(c.LOGS),
      under(c.PS, 'ls', ['list', 'ps']),
      under(c.PAUSE),
      under(c.PORT),
      pr.CONTAINER_PRUNE,
      under(c.RENAME),
      under(c.RESTART),
      under(c.RM, 'rm', ['remove']),
      under(r.RUN),
      under(r.START),
      under(sys.STATS),
      under(c.STOP),
      under(c.TOP),
      under(c.UNPAUSE),
      under(c.WAIT),
    ],
  },
  {
    name: 'image',
    group: 'management',
    description: 'Manage images',
    subcommands: [
      under(img.BUILD),
      under(img.HISTORY),
      {
        name: 'inspect',
        description: 'Display detailed information on one or more images',
        usage: '[OPTIONS] IMAGE [IMAGE...]',
        flags: INSPECT_ONE,
        run: (cli, argv) => c.inspect(cli, argv, 'image'),
      },
      under(img.LOAD),
      under(img.IMAGES, 'ls', ['list']),
      pr.IMAGE_PRUNE,
      under(img.PULL),
      under(img.PUSH),
      under(img.RMI, 'rm', ['remove', 'rmi']),
      under(img.SAVE),
      under(img.TAG),
    ],
  },
  {
    name: 'system',
    group: 'management',
    description: 'Manage Engine',
    subcommands: [pr.DF, under(sys.EVENTS), under(sys.INFO), pr.SYSTEM_PRUNE, sys.DIAL_STDIO],
  },
];
