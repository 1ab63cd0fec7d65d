// npm run check:kubectl — runs the real kubectl against the embedded cluster through the commands issue 3 names,
// printing each command's output, so anyone can see it behaves as on a real cluster.
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCluster } from '../tests/support/cluster/index.ts';

const found = await execa('kubectl', ['version', '--client'], { reject: false });
if (found.exitCode !== 0) {
  process.stderr.write('kubectl is not installed on this machine; check:kubectl needs the real kubectl on PATH.\n');
  process.exit(1);
}

const dir = await mkdtemp(join(tmpdir(), 'check-kubectl-'));
const cluster = await startCluster({ kubeconfigPath: join(dir, 'kubeconfig'), profiles: 2, seed: 7 });
let failures = 0;
try {
  const manifest = join(dir, 'objects.yaml');
  await writeFile(
    manifest,
    [
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: check-a\n  namespace: default\ndata:\n  greeting: hello\n',
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: check-b\n  namespace: default\ndata:\n  greeting: bonjour\n',
      'apiVersion: kubeflow.org/v1\nkind: Profile\nmetadata:\n  name: check-profile\nspec:\n  owner:\n    kind: User\n    name: check@example.com\n',
    ].join('---\n'),
  );
  const commands: string[][] = [
    ['api-resources'],
    ['get', 'profiles'],
    ['apply', '-f', manifest],
    ['apply', '-f', manifest],
    ['get', 'configmaps', '-A', '--chunk-size=2'],
    ['delete', '-f', manifest, '--timeout=30s'],
    ['get', 'profiles'],
  ];
  for (const args of commands) {
    const r = await execa('kubectl', ['--kubeconfig', cluster.kubeconfigPath, ...args], { reject: false, all: true });
    process.stdout.write(`$ kubectl ${args.join(' ')}   (exit ${r.exitCode})\n${r.all}\n\n`);
    if (r.exitCode !== 0) failures++;
  }
} finally {
  await cluster.stop();
  await rm(dir, { recursive: true, force: true });
}
if (failures > 0) {
  process.stderr.write(`${failures} kubectl command(s) failed against the embedded cluster.\n`);
  process.exit(1);
}
