// The full snapshot id from the short one restic's backup summary gives (src/volumes/restic/snapshot-id.ts), against a
// listing of the bucket: restic names each snapshot file `<repository>/snapshots/<id>`, the SHA-256 of its content in
// hex (restic/restic internal/backend/layout_default.go, internal/repository/repository.go). No simulated behaviour:
// the listing is given as a plain list of keys.
import { expect } from 'chai';
import { resolveSnapshotId, type SnapshotLister } from '../../src/volumes/restic/snapshot-id.ts';

const id = (first: string) => `${first}${'0123456789abcdef'.repeat(4)}`.slice(0, 64);
const listing = (keys: string[]): SnapshotLister => async function* (prefix: string) {
  for (const key of keys) if (key.startsWith(prefix)) yield { key };
};

describe('volumes: the restic snapshot id from the bucket', () => {
  const repository = 'kubeflow/restic/alice';
  const mine = id('1a2b3c4d');

  it('finds the one snapshot file whose name begins with the short id', async () => {
    const bucket = listing([`${repository}/snapshots/${id('99999999')}`, `${repository}/snapshots/${mine}`, `kubeflow/restic/bob/snapshots/${id('1a2b3c4d0')}`]);
    expect(await resolveSnapshotId(bucket, repository, '1a2b3c4d')).to.equal(mine);
  });

  it('ignores names that cannot be a snapshot id and files in deeper folders', async () => {
    const bucket = listing([`${repository}/snapshots/${mine}`, `${repository}/snapshots/1a2b3c4d-planted`, `${repository}/snapshots/${mine}/x`, `${repository}/snapshots/${mine.toUpperCase()}`]);
    expect(await resolveSnapshotId(bucket, repository, '1a2b3c4d')).to.equal(mine);
  });

  it('fails in one sentence when no snapshot or two begin with the short id', async () => {
    for (const keys of [[], [`${repository}/snapshots/${mine}`, `${repository}/snapshots/${id('1a2b3c4dff')}`]]) {
      const failure = await resolveSnapshotId(listing(keys), repository, '1a2b3c4d').then(() => undefined, (error: Error) => error);
      expect(failure, JSON.stringify(keys)).to.be.instanceOf(Error);
      expect(failure!.message).to.include('1a2b3c4d');
      expect(failure!.message.split(/[.!?] /)).to.have.length(1);
    }
  });
});
