// Which kubectl the tests that drive the real binary can count on (review81 M1/M2). Outside CI
// a missing or too old kubectl skips them with the reason; under CI (CI set, as .ci/run runs)
// they run and fail, so CI can never pass without running them.
import { spawnSync } from 'node:child_process';

/** The client's version, or undefined when no kubectl answers on PATH. */
export interface KubectlVersion { gitVersion: string; minor: number }

export function kubectlVersion(env: NodeJS.ProcessEnv = process.env): KubectlVersion | undefined {
  const r = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', env });
  if (r.status !== 0) return undefined;
  try {
    const { clientVersion } = JSON.parse(r.stdout) as { clientVersion?: { gitVersion?: string; major?: string; minor?: string } };
    const minor = clientVersion?.major === '1' ? Number.parseInt(clientVersion.minor ?? '', 10) : Number.NaN;
    return { gitVersion: clientVersion?.gitVersion ?? 'unknown', minor };
  } catch {
    return { gitVersion: 'unknown', minor: Number.NaN };
  }
}

export const inCi = (env: NodeJS.ProcessEnv = process.env): boolean => !!env.CI && env.CI !== 'false' && env.CI !== '0';

/**
 * Why kubectl cannot run a test that needs client 1.`minMinor` or later (0: any), or undefined
 * when it can. The message names the kubectl found, what is needed and, given `why`, why.
 */
export function kubectlShortfall(found: KubectlVersion | undefined, minMinor: number, why?: string): string | undefined {
  if (!found) return `kubectl is not installed${minMinor > 0 ? ` (1.${minMinor} or later is needed)` : ''}`;
  if (!(found.minor >= minMinor)) return `kubectl ${found.gitVersion} is older than 1.${minMinor}${why ? `: ${why}` : ''}`;
  return undefined;
}

/** node:test's `skip` option: the reason outside CI, false under CI (the test runs, and fails). */
export function skipOutsideCi(reason: string | undefined, env: NodeJS.ProcessEnv = process.env): string | false {
  if (reason === undefined || inCi(env)) return false;
  return `${reason}; README "Setup and test"`;
}
