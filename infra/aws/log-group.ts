import { RemovalPolicy } from 'aws-cdk-lib';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

/** A function's log group, created by the stack (not on first write) so its retention is set. */
export function functionLogGroup(scope: Construct, id: string, retentionDays: number): LogGroup {
  return new LogGroup(scope, id, {
    retention: retentionDays as RetentionDays,
    // Logs outlive a `cdk destroy` only if asked; an uninstall should leave nothing billed.
    removalPolicy: RemovalPolicy.DESTROY,
  });
}
