// The kubeconfig other programs (the charm, the CLI, kubectl) use to reach the cluster, in the format kubernetes/client-go
// reads (tools/clientcmd/api/v1/types.go: clusters, users with a bearer token, contexts with a namespace).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { stringify } from 'yaml';

/** `user` names the kubeconfig's user entry (the admin's by default); `namespace` is the context's */
export function kubeconfigYaml(server: string, caCert: string, token: string, name = 'embedded', user = `${name}-admin`, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server, 'certificate-authority-data': Buffer.from(caCert).toString('base64') } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name, context: { cluster: name, user, namespace } }],
    'current-context': name,
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, yaml: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  // it carries the bearer token: readable by its owner only
  await writeFile(path, yaml, { mode: 0o600 });
}
