// What the embedded cluster checks before it stores a write, in the API server's order:
// the CRD's structural schema, then the validating webhook. The webhook is ephemera's own
// (functions/webhook), called in-process with a real AdmissionReview instead of over HTTP,
// so `kubectl apply` of an invalid EphemeralJob is refused with every field error, worded
// as the API server words a webhook denial. Like the schema check, the webhook call lets an
// update through that adds no error the stored object did not already have: objects seeded
// past validation (a state file, a recording) can still get their status and finalizers
// written by the controllers.
import { randomUUID } from 'node:crypto';
import { EJOB } from '../api/names.ts';
import { review } from '../webhook/review.ts';
import type { Status } from '../webhook/admission.ts';
import { crdFor } from './crds.ts';
import type { ResourceDef } from './resources.ts';
import { validateSchema } from './schema-validate.ts';
import { ApiError, invalidError } from './status.ts';
import type { KubeObject } from './store.ts';

/** The name the ValidatingWebhookConfigurations in infra/webhook give the webhook. */
export const WEBHOOK_NAME = 'ephemeraljobs.validate.ephemera.dev';

/** One write on its way to the store. */
export interface AdmissionRequest {
  def: ResourceDef;
  operation: 'CREATE' | 'UPDATE';
  object: KubeObject;
  oldObject?: KubeObject;
  /** '' for the main resource. */
  sub: string;
}

/** Checks a write; throws an ApiError (422) to refuse it. */
export type Admit = (req: AdmissionRequest) => void;

/** Schema validation for every custom resource, the webhook for EphemeralJobs. */
export const admit: Admit = (req) => {
  validateCustomResource(req);
  if (req.def.group === EJOB.group && req.def.kind === EJOB.kind && req.sub === '') callWebhook(req);
};

function validateCustomResource({ def, object, oldObject }: AdmissionRequest): void {
  const schema = crdFor(def)?.schema;
  if (!schema) return;
  const errs = oldObject ? validateSchema(schema, object, oldObject) : validateSchema(schema, object);
  if (errs.length > 0) throw invalidError(def.kind, def.group, object.metadata.name, errs);
}

function callWebhook(req: AdmissionRequest): void {
  const status = denial(req, req.operation, req.object, req.oldObject);
  if (!status) return;
  if (req.operation === 'UPDATE' && req.oldObject && !addsErrors(status, denial(req, 'CREATE', req.oldObject, undefined))) return;
  // apiserver's webhook errors.ToStatusErr: the webhook's status, its message prefixed.
  throw new ApiError({
    code: Math.max(status.code, 400),
    reason: status.reason ?? 'Invalid',
    message: `admission webhook ${JSON.stringify(WEBHOOK_NAME)} denied the request: ${status.message}`,
    ...(status.details ? { details: { ...status.details, causes: status.details.causes ?? [] } } : {}),
  });
}

/** The webhook's status when it denies, else undefined. */
function denial(req: AdmissionRequest, operation: 'CREATE' | 'UPDATE', object: KubeObject, oldObject: KubeObject | undefined): Status | undefined {
  const { def } = req;
  const answer = review({
    uid: randomUUID(),
    kind: { group: def.group, version: def.version, kind: def.kind },
    resource: { group: def.group, version: def.version, resource: def.resource },
    name: object.metadata.name,
    namespace: object.metadata.namespace ?? '',
    operation,
    object,
    ...(oldObject ? { oldObject } : {}),
  }).response;
  return answer.allowed ? undefined : (answer.status ?? { code: 400, message: 'denied without explanation' });
}

function addsErrors(now: Status, before: Status | undefined): boolean {
  const key = (c: { field: string; message: string }): string => `${c.field}\u0000${c.message}`;
  const old = new Set((before?.details?.causes ?? []).map(key));
  const causes = now.details?.causes ?? [];
  return causes.length === 0 || causes.some((c) => !old.has(key(c)));
}
