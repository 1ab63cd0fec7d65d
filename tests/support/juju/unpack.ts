// Unzips a .charm into a folder with each file's mode, the way Juju unpacks a charm before running it.
import { chmodSync, createWriteStream, mkdirSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import yauzl from 'yauzl';

export async function unpackCharm(file: string, into: string): Promise<string[]> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true }, (error, opened) => (error ? reject(error) : resolve(opened))),
  );
  const names: string[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('error', reject);
    zip.on('end', () => resolve());
    zip.on('entry', (entry: yauzl.Entry) => {
      const target = join(into, normalize(entry.fileName));
      if (!target.startsWith(into)) return reject(new Error(`unsafe path in charm: ${entry.fileName}`));
      names.push(entry.fileName);
      if (entry.fileName.endsWith('/')) {
        mkdirSync(target, { recursive: true });
        return zip.readEntry();
      }
      mkdirSync(dirname(target), { recursive: true });
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const out = createWriteStream(target);
        out.on('close', () => {
          const mode = (entry.externalFileAttributes >>> 16) & 0o777;
          if (mode) chmodSync(target, mode);
          zip.readEntry();
        });
        stream.on('error', reject).pipe(out);
      });
    });
    zip.readEntry();
  });
  zip.close();
  return names;
}
