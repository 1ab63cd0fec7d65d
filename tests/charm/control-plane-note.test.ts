// The status note for absent control-plane relations says what each absent relation would bring and nothing more.
// A backup copies ML Metadata from mlmd's storage without any relation (src/controlplane/mlmd.ts), so the note must
// never say the control plane as a whole is not covered while the same backup logs "copied ML Metadata".
// control-plane-relations.process.test.ts sees the note in a real unit status.
import { expect } from 'chai';
import { absentRelationsNote } from '../../src/charm/control-plane.ts';
import { CONTROL_PLANE_ENDPOINTS, type ControlPlaneEndpoint } from '../../src/controlplane/relations.ts';

const rows: { absent: ControlPlaneEndpoint[]; note: string }[] = [
  { absent: ['kfp-db', 'katib-db', 'object-storage'], note: "KFP's database, Katib's database and MinIO's artefacts not backed up: relate kfp-db, katib-db, object-storage (ML Metadata needs no relation)" },
  { absent: ['kfp-db', 'katib-db'], note: "KFP's database and Katib's database not backed up: relate kfp-db, katib-db (ML Metadata needs no relation)" },
  { absent: ['katib-db'], note: "Katib's database not backed up: relate katib-db (ML Metadata needs no relation)" },
  { absent: ['object-storage'], note: "MinIO's artefacts not backed up: relate object-storage (ML Metadata needs no relation)" },
];

describe('charm/control-plane: the status note for absent relations', () => {
  for (const { absent, note } of rows) {
    it(`without ${absent.join(', ')}: names those parts only`, () => expect(absentRelationsNote(absent)).to.equal(note));
  }

  it('never says the control plane is not covered, for any set of absent relations', () => {
    const subsets = [...Array(2 ** CONTROL_PLANE_ENDPOINTS.length).keys()].slice(1)
      .map((mask) => CONTROL_PLANE_ENDPOINTS.filter((_, i) => mask & (1 << i)));
    for (const absent of subsets) {
      const note = absentRelationsNote(absent);
      expect(note, absent.join(',')).not.to.match(/control plane not covered/i);
      expect(note, absent.join(',')).to.contain(`relate ${absent.join(', ')}`);
      expect(note, absent.join(',')).to.contain('ML Metadata needs no relation');
    }
  });

  it('ML Metadata is no relation endpoint: the note is true that it needs none', () => {
    expect(CONTROL_PLANE_ENDPOINTS as readonly string[]).not.to.include('mlmd');
  });
});
