import * as z from 'zod';
import { ObjectMeta } from './meta.ts';

/** coordination.k8s.io/v1 Lease, the fields the lock uses. */
export const Lease = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: z.looseObject({
    holderIdentity: z.string().optional(),
    leaseDurationSeconds: z.number().optional(),
    acquireTime: z.union([z.string(), z.date()]).optional(),
    renewTime: z.union([z.string(), z.date()]).optional(),
    leaseTransitions: z.number().optional(),
  }).optional(),
});
export type Lease = z.infer<typeof Lease>;
