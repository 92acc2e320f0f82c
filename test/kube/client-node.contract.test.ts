// The Kube contract against the client-node typed-API implementation (the reference the
// lean client must equal), and against createKube: a client-node KubeConfig driving the lean client.
import { KubeConfig } from '@kubernetes/client-node';
import { createKube } from '../../functions/kube/client.ts';
import { createClientNodeKube } from './client-node-kube.ts';
import { runKubeContract } from './contract.case.ts';

function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'test', server, skipTLSVerify: true }, { name: 'test' });
  return kc;
}

runKubeContract('client-node typed APIs (reference)', (url, opts) => createClientNodeKube(kubeConfig(url), opts));
runKubeContract('createKube (KubeConfig → lean client)', (url, opts) => createKube(kubeConfig(url), opts));
