// The Kube contract against the client-node wrapper (the reference the lean client must equal).
import { createKube } from '../../functions/kube/client.ts';
import { kubeConfigFor } from '../../functions/kube/credentials.ts';
import { runKubeContract } from './contract.case.ts';

runKubeContract('client-node', (url, opts) => createKube(kubeConfigFor('test', url, undefined), opts));
