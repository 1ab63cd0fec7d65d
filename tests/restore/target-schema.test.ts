// What the restore names as dropped by the target's schema: the fields sent that the server's answer lacks, one row
// per case.
import { expect } from 'chai';
import type { KubeObject } from '../../src/kube/types.ts';
import { droppedFields, dropSentences } from '../../src/restore/target-schema.ts';

const object = (body: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'serving.kserve.io/v1beta1', kind: 'InferenceService', metadata: { name: 'sk', namespace: 'alice', ...metadata }, ...body,
});

describe('restore: fields dropped by the target', () => {
  const rows: Array<{ name: string; sent: KubeObject; answer: KubeObject; dropped: string[] }> = [
    { name: 'nothing dropped', sent: object({ spec: { a: 1 } }), answer: object({ spec: { a: 1 } }), dropped: [] },
    { name: 'a nested field pruned', sent: object({ spec: { explainer: { alibi: { type: 'x' }, minReplicas: 1 } } }), answer: object({ spec: { explainer: { minReplicas: 1 } } }), dropped: ['spec.explainer.alibi'] },
    { name: 'defaults added are no drop', sent: object({ spec: { a: 1 } }), answer: object({ spec: { a: 1, b: 2 } }), dropped: [] },
    { name: 'a field inside a list item', sent: object({ spec: { v: [{ a: 1, c: 2 }, { a: 2 }] } }), answer: object({ spec: { v: [{ a: 1 }, { a: 2 }] } }), dropped: ['spec.v[0].c'] },
    { name: 'a list that changed length is not compared item by item', sent: object({ spec: { v: [{ a: 1, c: 2 }] } }), answer: object({ spec: { v: [{ a: 1 }, { a: 2 }] } }), dropped: [] },
    { name: 'a whole top-level field', sent: object({ spec: {}, extra: { x: 1 } }), answer: object({ spec: {} }), dropped: ['extra'] },
    { name: 'metadata and status are the server\'s', sent: object({ spec: {}, status: { a: 1 } }, { labels: { a: 'b' } }), answer: object({ spec: {} }), dropped: [] },
    { name: 'a value changed is not a drop', sent: object({ spec: { a: 1 } }), answer: object({ spec: { a: 2 } }), dropped: [] },
  ];
  for (const row of rows) it(row.name, () => expect(droppedFields(row.sent, row.answer)).to.deep.equal(row.dropped));

  it('names each drop in one sentence, on a dry run as what would happen', () => {
    expect(dropSentences(object({}), ['spec.explainer.alibi'], false)).to.deep.equal(["InferenceService alice/sk: spec.explainer.alibi dropped by the target's schema"]);
    expect(dropSentences(object({}), ['spec.explainer.alibi'], true)).to.deep.equal(["InferenceService alice/sk: spec.explainer.alibi would be dropped by the target's schema"]);
  });
});
