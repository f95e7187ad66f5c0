// Container names: Docker's rule for user-given names, and generated "adjective_scientist" names.
import { randomInt } from 'node:crypto';
import { invalidParameter } from '../../errors.ts';

const VALID_NAME = /^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

/** Returns the name with its leading slash, or throws the 400 dockerd gives. */
export function normalizeName(name: string): string {
  if (!VALID_NAME.test(name)) throw invalidParameter(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
  return name.startsWith('/') ? name : `/${name}`;
}

// Our own word lists: moods and a few dozen scientists and engineers.
const LEFT = [
  'admiring',
  'bold',
  'brave',
  'calm',
  'clever',
  'eager',
  'elated',
  'epic',
  'fervent',
  'focused',
  'gallant',
  'gifted',
  'happy',
  'hopeful',
  'jolly',
  'keen',
  'kind',
  'laughing',
  'lucid',
  'modest',
  'nifty',
  'optimistic',
  'peaceful',
  'practical',
  'quirky',
  'relaxed',
  'serene',
  'sharp',
  'stoic',
  'tender',
  'upbeat',
  'vibrant',
  'wizardly',
  'zealous',
];
const RIGHT = [
  'agnesi',
  'babbage',
  'bohr',
  'curie',
  'darwin',
  'dijkstra',
  'einstein',
  'euler',
  'faraday',
  'fermat',
  'feynman',
  'gauss',
  'goldberg',
  'hamilton',
  'hopper',
  'hypatia',
  'kepler',
  'knuth',
  'lamarr',
  'lovelace',
  'maxwell',
  'meitner',
  'newton',
  'noether',
  'pascal',
  'ritchie',
  'shannon',
  'thompson',
  'torvalds',
  'turing',
  'wozniak',
  'yalow',
];

/** A fresh name; `taken` tells whether a candidate is in use (a number is appended after clashes). */
export function generateName(taken: (name: string) => boolean): string {
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = `${LEFT[randomInt(LEFT.length)]}_${RIGHT[randomInt(RIGHT.length)]}`;
    const name = attempt < 10 ? base : `${base}${randomInt(10)}`;
    if (!taken(`/${name}`)) return `/${name}`;
  }
  return `/${LEFT[randomInt(LEFT.length)]}_${RIGHT[randomInt(RIGHT.length)]}_${randomInt(1_000_000)}`;
}
