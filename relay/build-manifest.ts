// Writes the one-file installs = their head + the EphemeralJob CRD, so each carries the
// same CRD as infra/crds: relay/manifest.yaml (relay for the AWS setup) and
// infra/kubernetes/all-in-cluster.yaml (no cloud). Run after changing any; a test checks.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const at = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const crd = readFileSync(at('../infra/crds/ephemeraljob.yaml'), 'utf8');
for (const [head, out] of [['./manifest.head.yaml', './manifest.yaml'], ['../infra/kubernetes/all-in-cluster.head.yaml', '../infra/kubernetes/all-in-cluster.yaml']] as const) {
  writeFileSync(at(out), `${readFileSync(at(head), 'utf8')}${crd}`);
}
