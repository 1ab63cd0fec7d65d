// Whatever Juju, a user or a related charm hands in — action params, config values, relation databags, secret
// contents — comes back as a value or one clear sentence: never an exception, never a stack trace.
import { expect } from 'chai';
import fc from 'fast-check';
import { ActionParams, parseParams, type ActionName } from '../../src/charm/actions/params.ts';
import { parseConfig, ConfigSchema } from '../../src/charm/config.ts';
import { settingsFromProvider, parseCaChain } from '../../src/store/settings.ts';
import { SecretSealer, SecretOpener, SealError } from '../../src/archive/seal.ts';
import type { KubeObject } from '../../src/kube/types.ts';

const RUNS = 1000;
const oneSentence = (text: string) => {
  expect(text).to.be.a('string').and.not.equal('');
  expect(text).not.to.match(/\n\s+at |\n/);
};

/** Values shaped like what Juju passes (JSON scalars, lists, maps) plus the odd ones. */
const jujuValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }), fc.string().map((s) => `${s},a,,b`));

function recordWith(names: readonly string[]) {
  return fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })), jujuValue, { maxKeys: 6 });
}

describe('fuzz: inputs', function () {
  this.timeout(60_000);

  for (const action of Object.keys(ActionParams) as ActionName[]) {
    it(`${action} params (${RUNS} cases): typed params or one sentence`, () => {
      const names = Object.keys(ActionParams[action].shape);
      fc.assert(fc.property(recordWith(names.length ? names : ['x']), (raw) => {
        const result = parseParams(action, raw);
        if (!result.ok) oneSentence(result.problem);
      }), { numRuns: RUNS });
    });
  }

  it(`config values (${RUNS} cases): config or a sentence naming the option`, () => {
    fc.assert(fc.property(recordWith(Object.keys(ConfigSchema.shape)), (raw) => {
      const result = parseConfig(raw);
      if (!result.ok) {
        oneSentence(result.problem);
        expect(result.problem).to.match(/^config option /);
      }
    }), { numRuns: RUNS });
  });

  it(`s3-integrator databags and secret-extra contents (${RUNS} cases): ready, waiting or a named problem`, () => {
    const fields = ['access-key', 'secret-key', 'bucket', 'endpoint', 'region', 'path', 's3-uri-style', 'tls-ca-chain', 'storage-class', 'secret-extra', 'lib-version', 'data'];
    const text = fc.oneof(fc.string(), fc.json(), fc.constantFrom('', '[]', '["-----BEGIN CERTIFICATE-----\\nabc\\n-----END CERTIFICATE-----"]', 'http://x', 'ftp://y', 'host'));
    const bag = fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string({ maxLength: 8 })), text, { maxKeys: 10 });
    fc.assert(fc.property(bag, fc.option(bag, { nil: undefined }), (databag, secret) => {
      const readiness = settingsFromProvider({ databag, ...(secret ? { secret } : {}) }, { bucket: 'kf', path: 'kubeflow-upgrader' });
      if (readiness.state === 'invalid') oneSentence(readiness.problem);
      if (readiness.state === 'waiting') oneSentence(readiness.message);
      const chain = parseCaChain(databag['tls-ca-chain'] ?? '');
      if (typeof chain === 'string') oneSentence(chain);
    }), { numRuns: RUNS });
    // Not even a map of strings.
    fc.assert(fc.property(fc.anything(), (junk) => {
      const readiness = settingsFromProvider({ databag: junk as Record<string, string> }, { bucket: 'kf', path: 'p' });
      if (readiness.state === 'invalid') oneSentence(readiness.problem);
    }), { numRuns: RUNS });
  });

  describe('Secret contents', () => {
    const sealer = SecretSealer.create('fuzz-passphrase', Buffer.alloc(16, 3));
    const opener = SecretOpener.forBackup('kf-20250601-120000-abcdef', sealer.parameters, 'fuzz-passphrase');
    const secretOf = (data: unknown, stringData?: unknown): KubeObject => ({
      apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'alice' }, ...(data === undefined ? {} : { data }), ...(stringData === undefined ? {} : { stringData }),
    } as KubeObject);

    it(`sealing any Secret data (${RUNS} cases) round-trips or refuses with SealError`, () => {
      const values = fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.base64String(), fc.string(), fc.integer(), fc.constant(null), fc.array(fc.nat())), { maxKeys: 5 });
      fc.assert(fc.property(values, fc.option(values, { nil: undefined }), (data, stringData) => {
        let sealed: KubeObject;
        try {
          sealed = sealer.seal(secretOf(data, stringData));
        } catch (error) {
          expect(error).to.be.instanceOf(SealError);
          oneSentence((error as Error).message);
          return;
        }
        const opened = opener.open(sealed);
        // The API server only ever hands out canonical base64 in data: those values come back byte for byte.
        const canonical = Object.values(data).every((v) => typeof v === 'string' && Buffer.from(v, 'base64').toString('base64') === v);
        if (canonical && stringData === undefined) expect(opened.data ?? {}).to.deep.equal(data);
      }), { numRuns: RUNS });
    });

    it(`opening forged or damaged sealed Secrets (${RUNS} cases) refuses with SealError, never leaks a value`, () => {
      const genuine = sealer.seal(secretOf({ token: Buffer.from('canary-value').toString('base64') }));
      const forged = fc.record({
        data: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.base64String(), fc.string(), fc.constant((genuine.data as Record<string, string>).token!.slice(0, 10)))),
        keep: fc.boolean(),
      }).map(({ data, keep }) => ({ ...genuine, metadata: { ...genuine.metadata, annotations: keep ? genuine.metadata.annotations : { ...genuine.metadata.annotations, 'kubeflow-upgrader.io/sealed-key-id': 'other' } }, data }) as KubeObject);
      fc.assert(fc.property(forged, (object) => {
        try {
          opener.open(object);
        } catch (error) {
          expect(error).to.be.instanceOf(SealError);
          oneSentence((error as Error).message);
          expect((error as Error).message).not.to.include('canary-value');
        }
      }), { numRuns: RUNS });
    });
  });
});
