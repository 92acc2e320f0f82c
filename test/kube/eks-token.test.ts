// The EKS token against SigV4 recomputed here with node:crypto only (the AWS
// "Signature Version 4" steps: canonical request → string to sign → HMAC chain), on a fixed
// clock and fixed credentials, so the signer library is checked, not trusted.
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { eksTokenSource, EKS_TOKEN_PREFIX, signEksToken } from '../../functions/kube/eks-token.ts';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzE+session/token==' };
const now = new Date('2026-11-23T12:34:56Z');

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const hmac = (key: string | Buffer, s: string): Buffer => createHmac('sha256', key).update(s).digest();
// RFC 3986 encoding as SigV4 wants it (encodeURIComponent leaves !'()* alone).
const enc = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function decode(token: string): URL {
  assert.ok(token.startsWith(EKS_TOKEN_PREFIX));
  const b64 = token.slice(EKS_TOKEN_PREFIX.length);
  assert.doesNotMatch(b64, /[=+/]/, 'base64url without padding, as aws-iam-authenticator writes it');
  return new URL(Buffer.from(b64, 'base64url').toString('utf8'));
}

/** The signature SigV4 gives this presigned URL with these credentials and headers. */
function expectedSignature(url: URL, headers: Record<string, string>, secret: string): string {
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  const canonicalQuery = params.map(([k, v]) => [enc(k), enc(v)]).sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join('&');
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]}\n`).join('');
  const canonicalRequest = ['GET', '/', canonicalQuery, canonicalHeaders, names.join(';'), sha256('')].join('\n');
  const date = url.searchParams.get('X-Amz-Date') ?? '';
  const scope = url.searchParams.get('X-Amz-Credential')?.split('/').slice(1).join('/') ?? '';
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonicalRequest)].join('\n');
  const [day, region, service] = scope.split('/');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day!), region!), service!), 'aws4_request');
  return hmac(key, stringToSign).toString('hex');
}

describe('EKS token (in-process aws eks get-token)', () => {
  test('is a presigned STS GetCallerIdentity URL whose SigV4 signature covers the cluster header', async () => {
    const { token, expiresAt } = await signEksToken({ cluster: 'prod-eu', region: 'eu-west-1', credentials, now });
    const url = decode(token);
    assert.equal(url.origin, 'https://sts.eu-west-1.amazonaws.com');
    assert.equal(url.pathname, '/');
    const q = Object.fromEntries(url.searchParams);
    assert.equal(q.Action, 'GetCallerIdentity');
    assert.equal(q.Version, '2011-06-15');
    assert.equal(q['X-Amz-Algorithm'], 'AWS4-HMAC-SHA256');
    assert.equal(q['X-Amz-Credential'], 'AKIDEXAMPLE/20261123/eu-west-1/sts/aws4_request');
    assert.equal(q['X-Amz-Date'], '20261123T123456Z');
    assert.equal(q['X-Amz-Expires'], '60');
    assert.equal(q['X-Amz-SignedHeaders'], 'host;x-k8s-aws-id');
    assert.equal(q['X-Amz-Security-Token'], credentials.sessionToken);
    const headers = { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'prod-eu' };
    assert.equal(q['X-Amz-Signature'], expectedSignature(url, headers, credentials.secretAccessKey));
    assert.notEqual(q['X-Amz-Signature'], expectedSignature(url, { ...headers, 'x-k8s-aws-id': 'other' }, credentials.secretAccessKey), 'bound to the cluster');
    assert.equal(expiresAt.toISOString(), '2026-11-23T12:49:56.000Z', 'STS honours it 15 minutes');
    assert.ok(token.length < 4096, 'the authenticator refuses tokens over 4 KiB');
  });

  test('a region of another partition signs for that partition\'s STS host, the host a signed header (review: eusc and the ISO partitions got ….amazonaws.com)', async () => {
    const hosts = {
      'cn-north-1': 'sts.cn-north-1.amazonaws.com.cn',
      'cn-northwest-1': 'sts.cn-northwest-1.amazonaws.com.cn',
      'us-gov-west-1': 'sts.us-gov-west-1.amazonaws.com',
      'eusc-de-east-1': 'sts.eusc-de-east-1.amazonaws.eu',
      'us-iso-east-1': 'sts.us-iso-east-1.c2s.ic.gov',
      'us-isob-east-1': 'sts.us-isob-east-1.sc2s.sgov.gov',
      'eu-isoe-west-1': 'sts.eu-isoe-west-1.cloud.adc-e.uk',
      'us-isof-south-1': 'sts.us-isof-south-1.csp.hci.ic.gov',
    };
    for (const [region, host] of Object.entries(hosts)) {
      const url = decode((await signEksToken({ cluster: 'prod', region, credentials, now })).token);
      assert.equal(url.origin, `https://${host}`, region);
      const q = Object.fromEntries(url.searchParams);
      assert.equal(q['X-Amz-Credential'], `AKIDEXAMPLE/20261123/${region}/sts/aws4_request`);
      assert.equal(q['X-Amz-SignedHeaders'], 'host;x-k8s-aws-id');
      const headers = { host, 'x-k8s-aws-id': 'prod' };
      assert.equal(q['X-Amz-Signature'], expectedSignature(url, headers, credentials.secretAccessKey), 'signed for that host');
      assert.notEqual(q['X-Amz-Signature'], expectedSignature(url, { ...headers, host: `sts.${region}.example` }, credentials.secretAccessKey), 'the host is signed');
    }
  });

  test('the token source signs once, re-signs after ten minutes, and after invalidate()', async () => {
    let t = now.getTime();
    let asked = 0;
    const source = eksTokenSource({ cluster: 'c', region: 'us-east-1', credentials: async () => (asked++, credentials), clock: () => new Date(t) });
    const a = await source.token();
    t += 9 * 60_000;
    assert.equal(await source.token(), a);
    t += 60_000;
    const b = await source.token();
    assert.notEqual(b, a);
    source.invalidate();
    t += 1000;
    assert.notEqual(await source.token(), b);
    assert.equal(asked, 3);
  });
});
