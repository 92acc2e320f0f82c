// Which AWS partition a region belongs to, and that partition's DNS suffix: what an endpoint's
// host ends in (sts.<region>.<suffix>). A small table, not the SDK's partition data: that is
// exported only from an internal module that has already moved once (@aws-sdk/util-endpoints
// into @aws-sdk/core/client), and the Lambda resolves @aws-sdk/* from the runtime's own SDK,
// whatever version that is. The domains are aws-iam-authenticator's (pkg/endpoints/partitions.go
// GetSTSPartitionDomain at 81b1dab, the hosts its verifier accepts); the region patterns are the
// SDK's endpoint rules' partitions.json (regionRegex). test/kube/aws-partition.test.ts checks
// both against the installed SDK.

/** One partition: its id, the regions it holds, its DNS suffix. */
interface Partition {
  id: string;
  regions: RegExp;
  dnsSuffix: string;
}

/** The partitions other than `aws`, whose names begin like some of `aws`'s own (us-, eu-): matched first. */
const PARTITIONS: readonly Partition[] = [
  { id: 'aws-cn', regions: /^cn-\w+-\d+$/, dnsSuffix: 'amazonaws.com.cn' },
  { id: 'aws-us-gov', regions: /^us-gov-\w+-\d+$/, dnsSuffix: 'amazonaws.com' },
  { id: 'aws-iso', regions: /^us-iso-\w+-\d+$/, dnsSuffix: 'c2s.ic.gov' },
  { id: 'aws-iso-b', regions: /^us-isob-\w+-\d+$/, dnsSuffix: 'sc2s.sgov.gov' },
  { id: 'aws-iso-e', regions: /^eu-isoe-\w+-\d+$/, dnsSuffix: 'cloud.adc-e.uk' },
  { id: 'aws-iso-f', regions: /^us-isof-\w+-\d+$/, dnsSuffix: 'csp.hci.ic.gov' },
  { id: 'aws-eusc', regions: /^eusc-(de)-\w+-\d+$/, dnsSuffix: 'amazonaws.eu' },
];

const AWS: Partition = { id: 'aws', regions: /./, dnsSuffix: 'amazonaws.com' };

/** The partition of a region (`aws` for any region no other partition's pattern takes, as the SDK does). */
export function awsPartition(region: string): { id: string; dnsSuffix: string } {
  const p = PARTITIONS.find((x) => x.regions.test(region)) ?? AWS;
  return { id: p.id, dnsSuffix: p.dnsSuffix };
}
