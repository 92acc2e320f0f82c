// The AWS list prices the cost model uses, and its parts that need no measurement: what a
// deployment costs a month whatever its traffic (alarms, the event source's queue polling)
// and what each Secrets Manager cluster secret adds. Pure, so tests and the README's example
// can compute them without running the bench (cost-model.bench.ts measures the rest).
import { CONNECTION_REFRESH_MS } from '../../functions/kube/credentials.ts';

/**
 * AWS public list prices, us-east-1, as published on the AWS pricing pages for Lambda,
 * SQS, CloudWatch and Secrets Manager; written down 2026-11-23 (long-standing rates, not
 * re-fetched from here: no network to AWS). Free tiers are ignored (a worst case).
 */
export const PRICES = {
  date: '2026-11-23',
  region: 'us-east-1',
  lambdaPerMillionRequests: 0.20,
  lambdaArmPerGbSecond: 0.0000133334,
  sqsStandardPerMillionRequests: 0.40,
  cloudwatchAlarmPerMonth: 0.10,
  /** A custom metric (a log metric filter's count), first 10,000: billed only in a month it publishes (a filter with no default value publishes nothing while no line matches). */
  cloudwatchMetricPerMonth: 0.30,
  logsIngestPerGb: 0.50,
  secretPerMonth: 0.40,
  secretsPerTenThousandCalls: 0.05,
} as const;

/** What the deployment is made of, as far as its monthly cost goes. */
export interface DeployedShape {
  alarms: number;
  metricFilters: number;
  /** The Lambda event source's long pollers (5, whatever the traffic). */
  idlePollers: number;
  pollWaitSeconds: number;
  /** reconciler.maxConcurrency: the most instances kept warm, each reading every secret again and again. */
  maxConcurrency: number;
}

const MONTH_MS = 30 * 24 * 3_600_000;

/**
 * A month's GetSecretValue calls for one cluster secret, at most: a warm instance reads it again
 * every CONNECTION_REFRESH_MS while it receives messages (functions/kube/credentials.ts), so
 * maxConcurrency instances kept warm all month make 8,640 reads each; cold starts and the read
 * after a 401 add a few. An instance that receives nothing reads nothing.
 */
export function secretReadsPerMonth(shape: Pick<DeployedShape, 'maxConcurrency'>): number {
  return shape.maxConcurrency * (MONTH_MS / CONNECTION_REFRESH_MS);
}

/** A month's cost with no traffic, and what each Secrets Manager cluster secret adds to it. */
export function monthlyCost(shape: DeployedShape): { alarms: number; metrics: number; sqsPolling: number; pollRequests: number; total: number; secret: { stored: number; reads: number; readCalls: number } } {
  const pollRequests = shape.idlePollers * (60 / shape.pollWaitSeconds) * MONTH_MS / 60_000;
  const alarms = shape.alarms * PRICES.cloudwatchAlarmPerMonth;
  // The filters publish only when a refused write or a redelivery is logged: nothing at idle.
  const metrics = 0;
  const sqsPolling = (pollRequests / 1_000_000) * PRICES.sqsStandardPerMillionRequests;
  const readCalls = secretReadsPerMonth(shape);
  return {
    alarms, metrics, sqsPolling, pollRequests, total: alarms + metrics + sqsPolling,
    secret: { stored: PRICES.secretPerMonth, reads: (readCalls / 10_000) * PRICES.secretsPerTenThousandCalls, readCalls },
  };
}

/** A dollar figure as the cost model prints it. */
export const usd = (x: number): string => `$${x.toFixed(x < 1 ? 3 : 2)}`;

/** The cost model's "idle per month" line. */
export function monthlyLine(shape: DeployedShape): string {
  const m = monthlyCost(shape);
  return `idle per month: ${shape.alarms} alarms ${usd(m.alarms)} + ${shape.metricFilters} log-metric-filter metrics ${usd(m.metrics)} (${usd(PRICES.cloudwatchMetricPerMonth)} each in a month one publishes: a line with its alarm value logged) + queue polling by ${shape.idlePollers} pollers (${m.pollRequests.toLocaleString('en-US')} requests) ${usd(m.sqsPolling)} = ${usd(m.total)}; `
    + `plus per Secrets Manager cluster secret ${usd(m.secret.stored)}, and while messages arrive up to ${usd(m.secret.reads)} for its reads (${shape.maxConcurrency} warm instances each read it every ${CONNECTION_REFRESH_MS / 60_000} minutes: ${m.secret.readCalls.toLocaleString('en-US')} GetSecretValue calls) = ${usd(m.secret.stored + m.secret.reads)} (EKS clusters: none)`;
}
