// The Kube contract against the lean node:http(s) client.
import { createHttpsKube } from '../../functions/kube/https-kube.ts';
import { runKubeContract } from './contract.case.ts';

runKubeContract('node:https', (url, opts) => createHttpsKube({ server: url }, opts));
