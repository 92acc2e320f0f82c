import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** One alarm: metric ≥ threshold over one period (or each of `periods` in a row), notifying the topic when given. */
export interface AlarmSpec {
  id: string;
  metric: IMetric;
  threshold: number;
  description: string;
  /** Consecutive periods that must all reach the threshold (default 1): for what matters only when it lasts. */
  periods?: number;
}

/** Create the alarms, all wired to the optional SNS topic. */
export function alarms(scope: Construct, specs: AlarmSpec[], topicArn: string | undefined): Alarm[] {
  const topic = topicArn ? Topic.fromTopicArn(scope, 'AlarmTopic', topicArn) : undefined;
  return specs.map((s) => {
    const alarm = new Alarm(scope, s.id, {
      metric: s.metric,
      threshold: s.threshold,
      // M of N with M = N (CloudWatch's default when datapointsToAlarm is unset): every one of them.
      evaluationPeriods: s.periods ?? 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // No data = nothing happened (an idle queue, no invocations): not an alarm.
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: s.description,
    });
    if (topic) {
      alarm.addAlarmAction(new SnsAction(topic));
      alarm.addOkAction(new SnsAction(topic));
    }
    return alarm;
  });
}

/** The period every alarm looks at. */
export const ALARM_PERIOD = Duration.minutes(5);
