// Writes relay/manifest.yaml = manifest.head.yaml + the EphemeralJob CRD, so the one-file
// install carries the same CRD as infra/crds (run after changing either; a test checks).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const at = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const crd = readFileSync(at('../infra/crds/ephemeraljob.yaml'), 'utf8');
writeFileSync(at('./manifest.yaml'), `${readFileSync(at('./manifest.head.yaml'), 'utf8')}${crd}`);
