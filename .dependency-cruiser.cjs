// The layers of docs/architecture.md, enforced by dependency-cruiser on every `npm test` (`npm run deps`).
// From the top: the edges (src/charm with src/juju, src/cli), the engines (backup, restore, guard, prune, and the steps
// volumes and controlplane), the catalogue (src/catalog), then persistence (src/store), knowledge (src/kubeflow), the
// Kubernetes client (src/kube) and the format (src/archive, a leaf), and the cross-cutting modules under them all.
// An import may only run down.
const ENGINES = '^src/(backup|restore|guard|prune|volumes|controlplane)/';
// src/service is the workload container's program: an edge like the charm and the CLI.
const EDGES = '^src/(charm|cli|juju|service)/';
const LOWER = '^src/(catalog|store|archive|kubeflow|kube|retry|errors|pebble|schedule|observability|workload)/|^src/[^/]+[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      comment: 'Modules that import each other cannot be read, tested or moved one at a time.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'archive-is-a-leaf',
      comment: 'src/archive encodes and decodes only: it reaches no store, catalogue, knowledge, engine or edge.',
      severity: 'error',
      from: { path: '^src/archive/' },
      to: { path: '^src/', pathNot: ['^src/archive/', '^src/errors/', '^src/kube/types[.]ts$'] },
    },
    {
      name: 'kubeflow-imports-no-archive',
      comment: 'The knowledge of Kubeflow holds for a live cluster as much as for an archive.',
      severity: 'error',
      from: { path: '^src/kubeflow/' },
      to: { path: '^src/(archive|catalog|store)/' },
    },
    {
      name: 'store-imports-no-catalog',
      comment: 'The catalogue (list, describe, latest, verify) reads through the store, never the other way.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/catalog/' },
    },
    {
      name: 'engines-import-no-edge',
      comment: 'Engines know nothing of Juju or argv: the charm and the CLI word their results.',
      severity: 'error',
      from: { path: ENGINES },
      to: { path: EDGES },
    },
    {
      name: 'lower-layers-import-no-engine',
      comment: 'The catalogue, the store, the format, the knowledge and the client serve every engine and import none.',
      severity: 'error',
      from: { path: LOWER },
      to: { path: `${ENGINES}|${EDGES}` },
    },
    {
      name: 'steps-import-no-engine',
      comment: 'The volume and control-plane steps are called by the backup and restore engines, whose types they do not import.',
      severity: 'error',
      from: { path: '^src/(volumes|controlplane)/' },
      to: { path: '^src/(backup|restore)/' },
    },
    {
      name: 'edges-import-each-other-not',
      comment: 'Neither the charm nor the CLI holds logic the other needs.',
      severity: 'error',
      from: { path: '^src/charm/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'charm-imports-no-service',
      comment: 'The charm pushes the service bundle into the workload container; the two share only lower modules.',
      severity: 'error',
      from: { path: '^src/(charm|juju)/' },
      to: { path: '^src/service/' },
    },
    {
      name: 'service-imports-no-charm',
      comment: 'The service runs without Juju: no hook tool, no dispatch; it reads the settings file the charm pushed.',
      severity: 'error',
      from: { path: '^src/service/' },
      to: { path: '^src/(charm|juju|cli)/' },
    },
    {
      name: 'cli-imports-no-charm',
      comment: 'Neither the charm nor the CLI holds logic the other needs.',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/(charm|juju)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // type-only imports count: a type that runs back up is a dependency all the same
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
