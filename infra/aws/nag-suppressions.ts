// cdk-nag (AwsSolutions) findings accepted on purpose, each with the reason in code.
// Everything else the pack checks passes; a new finding fails `npm run synth` and the test.
import { Validations, type Stack } from 'aws-cdk-lib';

/** Findings accepted for every ephemera stack, with why (ids as cdk-nag v3 prints them). */
export const JUSTIFIED: { id: string; reason: string }[] = [
  {
    // The function's own log group only; its streams are created per execution environment
    // with names nobody can know in advance, so the stream part cannot be narrower.
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::<Logs6819BB44.Arn>:log-stream:*]',
    reason: 'Log streams of this function\'s own log group: stream names are made at run time by Lambda.',
  },
  {
    // Only with a VPC: Lambda creates and deletes the function's network interfaces, whose
    // ids do not exist before it does (creation is also narrowed to the given subnets and groups).
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:network-interface/*]',
    reason: 'Network interfaces Lambda creates for the function in the configured VPC: their ids are made at run time.',
  },
  {
    // Only with a VPC: ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets have no resource-level permissions.
    id: 'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
    reason: 'EC2 Describe calls Lambda needs in a VPC support no resource-level permissions; nothing else gets "*".',
  },
];

/** Acknowledge the justified findings on a stack (CDK's Validations API, cdk-nag v3). */
export function suppressJustified(stack: Stack): void {
  for (const j of JUSTIFIED) Validations.of(stack).acknowledge(j);
}
