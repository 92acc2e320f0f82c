// The partition table against the installed AWS SDK's own partition data (its endpoint rules'
// partitions.json): the same partition and DNS suffix for a region of each partition, and for
// the regions the SDK names. A newer SDK that adds a partition shows up here first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partition } from '@aws-sdk/core/client';
import { awsPartition } from '../../functions/kube/aws-partition.ts';

const regions = ['us-east-1', 'eu-west-1', 'ap-southeast-7', 'mx-central-1', 'cn-north-1', 'cn-northwest-1', 'us-gov-west-1', 'us-gov-east-1', 'eusc-de-east-1', 'us-iso-east-1', 'us-iso-west-1', 'us-isob-east-1', 'eu-isoe-west-1', 'us-isof-south-1', 'us-isof-east-1'];

test('each region\'s partition and DNS suffix are the SDK\'s', () => {
  for (const region of regions) {
    const sdk = partition(region);
    assert.deepEqual(awsPartition(region), { id: sdk.name, dnsSuffix: sdk.dnsSuffix }, region);
  }
});

test('the partitions aws-iam-authenticator knows, by their STS domain (pkg/endpoints/partitions.go)', () => {
  assert.deepEqual(Object.fromEntries(['us-east-1', 'cn-north-1', 'us-gov-west-1', 'us-iso-east-1', 'us-isob-east-1', 'eu-isoe-west-1', 'us-isof-south-1', 'eusc-de-east-1'].map((r) => [awsPartition(r).id, awsPartition(r).dnsSuffix])), {
    aws: 'amazonaws.com',
    'aws-cn': 'amazonaws.com.cn',
    'aws-us-gov': 'amazonaws.com',
    'aws-iso': 'c2s.ic.gov',
    'aws-iso-b': 'sc2s.sgov.gov',
    'aws-iso-e': 'cloud.adc-e.uk',
    'aws-iso-f': 'csp.hci.ic.gov',
    'aws-eusc': 'amazonaws.eu',
  });
});
