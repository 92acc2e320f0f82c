// Object names the API server generates (generateName).

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The 5-character random suffix generateName gets (apiserver's names.SimpleNameGenerator). */
export function randomSuffix(random: () => number = Math.random): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(random() * GENERATE_ALPHABET.length)];
  return s;
}
