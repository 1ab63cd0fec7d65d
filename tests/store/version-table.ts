// An ObjectLockPort over a table of versions and retention dates a test writes out, answering as ListObjectVersions
// and HeadObject would (AWS S3 API reference; ceph/ceph src/rgw/rgw_rest_s3.cc RGWListBucket_ObjStore_S3 with
// versions). It models no S3 rule beyond refusing to delete a version retained at `now`, never extends a retention,
// and records every delete asked of it, for the tests of prune's purge and of list/verify/recover.
import type { ObjectLockPort, ObjectVersion } from '../../src/store/object-lock.ts';

export interface VersionRow { key: string; id: string; latest?: boolean; marker?: boolean; size?: number; until?: Date }

export function versionTable(rows: VersionRow[], now: Date, defaultSize: number): ObjectLockPort & { deleted: string[] } {
  const deleted: string[] = [];
  return {
    deleted,
    async retention(key, versionId) {
      const row = rows.find((r) => r.key === key && r.id === versionId);
      return row && !row.marker ? (row.until ? { mode: 'COMPLIANCE', until: row.until } : {}) : undefined;
    },
    async extend() {
      throw new Error('neither purge nor recover extends a retention');
    },
    async *versions(folder) {
      for (const r of rows.filter((row) => row.key.startsWith(folder))) {
        yield { key: r.key, versionId: r.id, latest: r.latest === true, deleteMarker: r.marker === true, size: r.size ?? defaultSize, lastModified: undefined } satisfies ObjectVersion;
      }
    },
    async deleteVersion(key, versionId) {
      const row = rows.find((r) => r.key === key && r.id === versionId);
      if (row?.until && row.until > now) throw new Error(`asked to delete retained ${key}@${versionId}`);
      deleted.push(`${key}@${versionId}`);
    },
  };
}
