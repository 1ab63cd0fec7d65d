// Kubernetes credentials the way kubectl finds them: --kubeconfig, then KUBECONFIG, then ~/.kube/config (or the pod's
// service account), with --context choosing a context.
import type { KubeClient } from '../kube/client.ts';
import type { OptionTable, Values } from './usage.ts';
import { positiveInteger, stringValue, UsageError } from './usage.ts';
import { describe } from '../errors/index.ts';

export const kubeOptions: OptionTable = {
  kubeconfig: { type: 'string', placeholder: '<path>', description: 'kubeconfig file to use', default: '$KUBECONFIG, else ~/.kube/config, else the pod\'s service account', env: ['KUBECONFIG'] },
  context: { type: 'string', placeholder: '<name>', description: 'kubeconfig context to use', default: 'the current context' },
  'api-concurrency': { type: 'string', placeholder: '<n>', description: 'Kubernetes API requests in flight at once', default: '8' },
};

export async function kubeClientFrom(values: Values): Promise<KubeClient> {
  const concurrency = positiveInteger(values, 'api-concurrency', 8, 256);
  const kubeconfig = stringValue(values, 'kubeconfig');
  const context = stringValue(values, 'context');
  try {
    // KUBECONFIG (with its ':'-separated list) is read by client-node's loadFromDefault, as kubectl does.
    const { KubeClient } = await import('../kube/client.ts');
    return await KubeClient.load({ ...(kubeconfig ? { kubeconfig } : {}), ...(context ? { context } : {}), concurrency });
  } catch (error) {
    const message = describe(error);
    // Not finding or not parsing the kubeconfig is the caller's input, not a failed operation.
    throw new UsageError(/[.!]$/.test(message) ? message : `${message}.`);
  }
}
