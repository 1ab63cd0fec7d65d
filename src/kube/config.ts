// Where the Kubernetes credentials come from: an explicit kubeconfig, the pod's service account, or KUBECONFIG/~/.kube/config.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

const NO_CLUSTER = 'No Kubernetes cluster is configured: pass --kubeconfig, set KUBECONFIG, or run inside a pod.';

export type ConfigSource = { kind: 'file'; path: string } | { kind: 'in-cluster' } | { kind: 'default' };

/**
 * An explicit path wins (the user asked for it, as with kubectl --kubeconfig); inside a pod, the service account;
 * otherwise what kubectl would use.
 */
export function chooseConfigSource(
  kubeconfig: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  exists: (path: string) => boolean = existsSync,
): ConfigSource {
  if (kubeconfig) return { kind: 'file', path: kubeconfig };
  if (env.KUBERNETES_SERVICE_HOST && exists(`${serviceAccountDir}/token`)) return { kind: 'in-cluster' };
  return { kind: 'default' };
}

export function loadKubeConfig(options: { kubeconfig?: string | undefined; context?: string | undefined } = {}): KubeConfig {
  const source = chooseConfigSource(options.kubeconfig);
  const config = new KubeConfig();
  if (source.kind === 'file') {
    if (!existsSync(source.path)) throw new Error(`The kubeconfig ${source.path} does not exist.`);
    config.loadFromFile(source.path);
  } else if (source.kind === 'in-cluster') {
    config.loadFromCluster();
  } else {
    // With no KUBECONFIG, no ~/.kube/config and no pod, client-node's loadFromDefault falls back to an unauthenticated
    // http://localhost:8080 (kubernetes-client/javascript src/config.ts), whose first request then fails with a
    // sentence about skipTLSVerify that names nothing the user can do: say what is missing instead.
    const kubeconfigEnv = process.env.KUBECONFIG?.split(':').filter(Boolean) ?? [];
    if (kubeconfigEnv.length === 0 && !existsSync(join(homedir(), '.kube', 'config'))) throw new Error(NO_CLUSTER);
    config.loadFromDefault();
  }
  if (options.context) {
    if (!config.getContextObject(options.context)) {
      const known = config.getContexts().map((c) => c.name).join(', ') || 'none';
      throw new Error(`The kubeconfig has no context named ${options.context} (it has: ${known}).`);
    }
    config.setCurrentContext(options.context);
  }
  if (!config.getCurrentCluster()) throw new Error(NO_CLUSTER);
  return config;
}
