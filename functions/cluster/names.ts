// What the API server makes up: uids, and the names generateName asks for.

import { createHash, randomUUID } from 'node:crypto';

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character random suffix generateName gets (apiserver's names.SimpleNameGenerator). */
export function randomSuffix(random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(random() * GENERATE_ALPHABET.length)];
  return s;
}

/** Where the API server's uids and generated names come from. */
export interface Ids {
  uid(): string;
  /** In [0, 1), for generateName's suffix. */
  random(): number;
}

/** A real API server's: random. */
export const randomIds: Ids = { uid: () => randomUUID(), random: Math.random };

/**
 * The same uids and names, in the same order, for the same seed: `ephemera invoke`'s
 * in-memory cluster, so one input and one --now print one document (review75 L1). Each uid
 * is the SHA-256 of the seed and a counter, cut to a version-4 UUID's shape.
 */
export function seededIds(seed: string): Ids {
  let n = 0;
  const next = (): Buffer => createHash('sha256').update(`${seed}/${n++}`).digest();
  return {
    uid: () => {
      const h = next().toString('hex');
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
    random: () => next().readUInt32BE(0) / 2 ** 32,
  };
}
