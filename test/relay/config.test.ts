// The relay's environment: what each variable becomes, and bad values named.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseEnv } from '../../functions/config.ts';
import { leaderLock, RelayConfig } from '../../relay/config.ts';

describe('RelayConfig', () => {
  test('the leader Lease follows EPHEMERA_LEASE_SECONDS and EPHEMERA_LEASE_SKEW_SECONDS (15 s and 5 s unset)', () => {
    const env = { EPHEMERA_RELAY_ID: 'relay-0', EPHEMERA_RELAY_LEASE_NAMESPACE: 'ops' };
    assert.deepEqual(leaderLock(parseEnv(RelayConfig, env)), { namespace: 'ops', holder: 'relay-0', leaseSeconds: 15, skewSeconds: 5 });
    const set = parseEnv(RelayConfig, { ...env, EPHEMERA_LEASE_SECONDS: '40', EPHEMERA_LEASE_SKEW_SECONDS: '2' });
    assert.deepEqual(leaderLock(set), { namespace: 'ops', holder: 'relay-0', leaseSeconds: 40, skewSeconds: 2 });
    assert.throws(() => parseEnv(RelayConfig, { EPHEMERA_LEASE_SECONDS: '0' }), (err: Error) => err instanceof ConfigError && /EPHEMERA_LEASE_SECONDS: /.test(err.message));
  });
});
