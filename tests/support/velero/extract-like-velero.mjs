// Extracts a gzipped backup tarball the way Velero's restore does, then catalogues it the way Velero's parser does,
// and prints the catalogue as JSON on stdout. Plain JavaScript on purpose: the tests spawn it as an unprivileged user
// (Velero's image runs as uid 65532), who has no business with the test runner's loader or caches.
//
// Followed, behaviour by behaviour (not copied):
// - vmware-tanzu/velero pkg/archive/extractor.go (readBackup): a fresh temp folder; each entry's target is the folder
//   joined with the entry name, refused when it does not start with the folder; a directory entry is created with
//   its own mode; a regular file first has its parent created with the FILE's mode (MkdirAll, so every missing
//   ancestor gets that mode too), then is created and filled; every other entry type is passed over.
// - vmware-tanzu/velero pkg/archive/parser.go (Parse): only `resources/` is read; per resource folder, the files of
//   `cluster/` and of each `namespaces/<ns>/` are the items (name without `.json`); other subfolders of a resource
//   folder (the version folders) are not looked at; files where a folder is expected are passed over.
//
// Usage: node extract-like-velero.mjs <tarball.tar.gz> <parent folder to extract under>
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { createGunzip } from 'node:zlib';
import { createReadStream } from 'node:fs';
import tar from 'tar-stream';

const [tarball, parent] = process.argv.slice(2);

async function extract() {
  const dir = mkdtempSync(join(parent, 'velero-restore-'));
  const entries = createReadStream(tarball).pipe(createGunzip()).pipe(tar.extract());
  for await (const entry of entries) {
    const { name, type, mode } = entry.header;
    const target = join(dir, name);
    if (!normalize(target).startsWith(resolve(dir))) throw new Error(`invalid archive path "${name}": escapes target directory`);
    if (type === 'directory') {
      mkdirSync(target, { recursive: true, mode });
      entry.resume();
    } else if (type === 'file') {
      mkdirSync(dirname(target), { recursive: true, mode });
      const chunks = [];
      for await (const chunk of entry) chunks.push(chunk);
      writeFileSync(target, Buffer.concat(chunks));
    } else entry.resume();
  }
  return dir;
}

function isDir(path) {
  try {
    return statSync(path).isDirectory();
  } catch (error) {
    if (error.code === 'ENOENT') return false;
    throw error;
  }
}

function itemsIn(folder) {
  const items = {};
  for (const file of readdirSync(folder, { withFileTypes: true })) {
    if (file.isDirectory()) continue;
    items[file.name.replace(/\.json$/, '')] = JSON.parse(readFileSync(join(folder, file.name), 'utf8'));
  }
  return items;
}

function parse(dir) {
  const resourcesDir = join(dir, 'resources');
  if (!isDir(resourcesDir)) throw new Error(`directory "${resourcesDir}" does not exist`);
  const catalogue = {};
  for (const resource of readdirSync(resourcesDir, { withFileTypes: true })) {
    if (!resource.isDirectory()) continue;
    const byNamespace = {};
    const cluster = join(resourcesDir, resource.name, 'cluster');
    if (isDir(cluster)) byNamespace[''] = itemsIn(cluster);
    const namespaces = join(resourcesDir, resource.name, 'namespaces');
    if (isDir(namespaces)) {
      for (const ns of readdirSync(namespaces, { withFileTypes: true })) {
        if (ns.isDirectory()) byNamespace[ns.name] = itemsIn(join(namespaces, ns.name));
      }
    }
    catalogue[resource.name] = byNamespace;
  }
  return catalogue;
}

try {
  const dir = await extract();
  process.stdout.write(JSON.stringify({ ok: true, uid: process.getuid(), dir, catalogue: parse(dir) }));
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, uid: process.getuid(), code: error.code, message: error.message }));
}
