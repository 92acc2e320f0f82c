// Builders for webhook tests: a valid job to override with spread, and AdmissionReviews.
import type { FieldError } from '../../functions/webhook/field-errors.ts';
import { formatFieldError } from '../../functions/webhook/field-errors.ts';

export const PATH = '/validate-apps-kruise-io-v1alpha1-ephemeraljob';

export type Json = Record<string, unknown>;

/** A container that passes every rule. */
export function container(overrides: Json = {}): Json {
  return {
    name: 'debug',
    image: 'busybox:1.36',
    imagePullPolicy: 'IfNotPresent',
    terminationMessagePolicy: 'File',
    targetContainerName: 'app',
    command: ['pidof', 'helloworld'],
    ...overrides,
  };
}

/** A spec that passes every rule. */
export function spec(overrides: Json = {}): Json {
  return {
    selector: { matchLabels: { app: 'helloworld' } },
    replicas: 3,
    parallelism: 2,
    template: { ephemeralContainers: [container()] },
    ...overrides,
  };
}

/** An EphemeralJob object around a spec. */
export function job(specValue: unknown = spec(), name = 'ejob-demo'): Json {
  return { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'EphemeralJob', metadata: { name, namespace: 'default' }, spec: specValue };
}

/** An AdmissionReview request as the API server sends it. */
export function admissionReview(request: Json): Json {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'EphemeralJob' },
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'ephemeraljobs' },
      name: 'ejob-demo',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'admin', groups: ['system:authenticated'] },
      object: job(),
      dryRun: false,
      ...request,
    },
  };
}

/** Errors as `path: body` lines, the form assertions compare. */
export function lines(errors: readonly FieldError[]): string[] {
  return errors.map(formatFieldError);
}
