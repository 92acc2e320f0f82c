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
];

/** Acknowledge the justified findings on a stack (CDK's Validations API, cdk-nag v3). */
export function suppressJustified(stack: Stack): void {
  for (const j of JUSTIFIED) Validations.of(stack).acknowledge(j);
}
