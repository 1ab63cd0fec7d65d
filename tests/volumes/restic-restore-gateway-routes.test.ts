// The restore gateway's routing of restic's REST requests, against the paths restic 0.14 sends (restic/restic
// internal/backend/layout.go RESTLayout: `<repo>/config`, `<repo>/<type>/<name>` with data not split into folders,
// `<repo>/<type>/` to list) and the keys its S3 backend stores (`<root>/<repo>/data/<first two>/<name>`, DefaultLayout).
import { expect } from 'chai';
import { listingBody, routeOf } from '../../src/volumes/restic/redirect-gateway/routes.ts';

const ID = '0a1b2c3d'.repeat(8);
const ROOT = 'kf/restic';

describe('volumes: the restore gateway routes restic REST requests', () => {
  it('reads of its own repository: config and files redirected to their S3 keys, HEAD answered, folders listed', () => {
    expect(routeOf('GET', '/alice/config', 'alice', ROOT)).to.deep.equal({ kind: 'redirect', key: 'kf/restic/alice/config' });
    expect(routeOf('HEAD', '/alice/config', 'alice', ROOT)).to.deep.equal({ kind: 'head', key: 'kf/restic/alice/config' });
    expect(routeOf('GET', `/alice/data/${ID}`, 'alice', ROOT)).to.deep.equal({ kind: 'redirect', key: `kf/restic/alice/data/0a/${ID}` });
    for (const type of ['keys', 'locks', 'snapshots', 'index']) {
      expect(routeOf('GET', `/alice/${type}/${ID}`, 'alice', ROOT)).to.deep.equal({ kind: 'redirect', key: `kf/restic/alice/${type}/${ID}` });
    }
    expect(routeOf('GET', '/alice/data/', 'alice', ROOT)).to.deep.equal({ kind: 'list', prefix: 'kf/restic/alice/data/', nested: true });
    expect(routeOf('GET', '/alice/keys/', 'alice', '')).to.deep.equal({ kind: 'list', prefix: 'alice/keys/', nested: false });
  });

  it('another repository is 403 whatever the request; writes other than lock files are 403; other methods 405', () => {
    for (const [method, path] of [['GET', '/bob/config'], ['HEAD', `/bob/data/${ID}`], ['GET', '/bob/data/'], ['POST', `/bob/locks/${ID}`], ['DELETE', `/bob/locks/${ID}`]]) {
      expect(routeOf(method!, path!, 'alice', ROOT), `${method} ${path}`).to.include({ kind: 'refuse', status: 403 });
    }
    expect(routeOf('POST', '/alice/', 'alice', ROOT)).to.include({ kind: 'refuse', status: 403 });
    expect(routeOf('POST', '/alice/config', 'alice', ROOT)).to.include({ kind: 'refuse', status: 403 });
    for (const type of ['data', 'keys', 'snapshots', 'index']) {
      expect(routeOf('POST', `/alice/${type}/${ID}`, 'alice', ROOT)).to.include({ kind: 'refuse', status: 403 });
      expect(routeOf('DELETE', `/alice/${type}/${ID}`, 'alice', ROOT)).to.include({ kind: 'refuse', status: 403 });
    }
    expect(routeOf('POST', `/alice/locks/${ID}`, 'alice', ROOT)).to.deep.equal({ kind: 'write-lock', key: `kf/restic/alice/locks/${ID}` });
    expect(routeOf('DELETE', `/alice/locks/${ID}`, 'alice', ROOT)).to.deep.equal({ kind: 'delete-lock', key: `kf/restic/alice/locks/${ID}` });
    expect(routeOf('PUT', `/alice/locks/${ID}`, 'alice', ROOT)).to.include({ kind: 'refuse', status: 405 });
  });

  it('a name that is not a restic id, or a path outside the layout, reaches no key', () => {
    for (const path of ['/alice/data/../../bob/config', '/alice/data/x', `/alice/data/${ID}/more`, '/alice/other/', `/alice/keys/${ID.toUpperCase()}`]) {
      expect(routeOf('GET', path, 'alice', ROOT).kind, path).to.equal('refuse');
    }
  });

  it('lists v2 names with sizes (v1 names only), and only the files restic wrote', () => {
    const objects = [
      { key: `kf/restic/alice/data/0a/${ID}`, size: 7 },
      { key: 'kf/restic/alice/data/0a/not-an-id', size: 1 },
      { key: `kf/restic/alice/data/${ID}`, size: 2 },
    ];
    expect(JSON.parse(listingBody(objects, 'kf/restic/alice/data/', true, true))).to.deep.equal([{ name: ID, size: 7 }]);
    expect(JSON.parse(listingBody(objects, 'kf/restic/alice/data/', true, false))).to.deep.equal([ID]);
  });
});
