// One fact, two users: an engine names the setting behind a fact or the step that fixes it; the charm words it as the
// config option, action param or action its user changes, the CLI as its flag or command. Neither sees the other's
// words. Every term and remedy is a row (the Records make the table fail to compile when a kind is added).
import { expect } from 'chai';
import type { Remedy, Term } from '../../src/errors/remedy.ts';
import { neutralWording } from '../../src/errors/remedy.ts';
import { charmWording } from '../../src/charm/remedy-wording.ts';
import { cliWording } from '../../src/cli/remedy-wording.ts';

interface Row<T> { value: T; charm: string; cli: string }

const terms: Record<Term['term'], Row<Term>> = {
  'volumes-off': { value: { term: 'volumes-off' }, charm: 'include-volumes=false', cli: '--no-volumes' },
  'control-plane-off': { value: { term: 'control-plane-off' }, charm: 'include-control-plane=false', cli: 'the CLI copies no control plane' },
  'wait-timeout': { value: { term: 'wait-timeout', seconds: 30 }, charm: 'restore-wait-timeout (30 s)', cli: '--wait-timeout (30 s)' },
  'max-backup-age': { value: { term: 'max-backup-age', age: '1d0h' }, charm: 'max-backup-age (1d0h)', cli: '--max-backup-age (1d0h)' },
  'storage-class-map': { value: { term: 'storage-class-map' }, charm: 'storage-class-map', cli: '--storage-class-map' },
  'encryption-key': { value: { term: 'encryption-key' }, charm: 'encryption-key', cli: '--encryption-key-file' },
  restore: { value: { term: 'restore' }, charm: 'restore-state', cli: 'kubeflow-upgrader restore' },
  'guard-off': { value: { term: 'guard-off' }, charm: 'protect-crds=false', cli: '--no-guard' },
  'read-data': { value: { term: 'read-data', value: 'full' }, charm: 'read-data=full', cli: '--read-data full' },
};

const remedies: Record<Remedy['fix'], Row<Remedy>> = {
  'raise-wait-timeout': { value: { fix: 'raise-wait-timeout' }, charm: 'raise restore-wait-timeout', cli: 'raise --wait-timeout' },
  'run-backup': { value: { fix: 'run-backup' }, charm: 'run backup-state', cli: 'run kubeflow-upgrader backup' },
  'turn-guard-on': {
    value: { fix: 'turn-guard-on' },
    charm: 'run juju config kubeflow-upgrader protect-crds=true and wait for active',
    cli: 'set protect-crds=true on the kubeflow-upgrader charm and wait for active, or pass --no-guard',
  },
  'set-encryption-key': { value: { fix: 'set-encryption-key' }, charm: 'set encryption-key', cli: 'pass --encryption-key-file' },
  'allow-unauthenticated': { value: { fix: 'allow-unauthenticated' }, charm: 'allow-unauthenticated=true', cli: '--allow-unauthenticated' },
  'map-storage-class': {
    value: { fix: 'map-storage-class', from: 'microk8s-hostpath' },
    charm: 'map it, e.g. storage-class-map=microk8s-hostpath=<a class of this cluster>',
    cli: 'map it, e.g. --storage-class-map microk8s-hostpath=<a class of this cluster>',
  },
  'migrate-stored-versions': {
    value: { fix: 'migrate-stored-versions' },
    charm: 'run migrate-stored-versions',
    cli: "run the kubeflow-upgrader charm's migrate-stored-versions action",
  },
  'verify-again': { value: { fix: 'verify-again' }, charm: 'run verify-backup again', cli: 'run kubeflow-upgrader verify again' },
  'prune-again': { value: { fix: 'prune-again' }, charm: 'run prune-backups again', cli: 'run kubeflow-upgrader prune again' },
  'remove-foreign-locks': {
    value: { fix: 'remove-foreign-locks' }, charm: 'run prune-backups remove-foreign-locks=true', cli: 'run kubeflow-upgrader prune --remove-foreign-locks',
  },
  'delete-unauthenticated': {
    value: { fix: 'delete-unauthenticated' }, charm: 'run prune-backups delete-unauthenticated=true', cli: 'run kubeflow-upgrader prune --delete-unauthenticated',
  },
  'recover-retained': { value: { fix: 'recover-retained' }, charm: 'run recover-backups', cli: 'run kubeflow-upgrader recover' },
};

// what only the charm's user can type: its action names and `option=value` settings
const CHARM_ONLY = /\b(?:backup-state|restore-state|restore-wait-timeout|include-volumes|include-control-plane)\b|[a-z]=(?:true|false)\b/;

describe('facts with a remedy, worded by the charm and by the CLI', () => {
  for (const [name, row] of Object.entries(terms)) {
    it(`term ${name}: ${row.charm} | ${row.cli}`, () => {
      expect(charmWording.term(row.value)).to.equal(row.charm);
      expect(cliWording.term(row.value)).to.equal(row.cli);
      expect(charmWording.term(row.value)).to.not.match(/--[a-z]/);
      expect(cliWording.term(row.value)).to.not.match(CHARM_ONLY);
      expect(neutralWording.term(row.value)).to.not.equal(row.charm).and.not.equal(row.cli);
    });
  }
  for (const [name, row] of Object.entries(remedies)) {
    it(`remedy ${name}: ${row.charm} | ${row.cli}`, () => {
      expect(charmWording.remedy(row.value)).to.equal(row.charm);
      expect(cliWording.remedy(row.value)).to.equal(row.cli);
      expect(charmWording.remedy(row.value)).to.not.match(/--[a-z]/);
      expect(neutralWording.remedy(row.value)).to.not.equal(row.charm).and.not.equal(row.cli);
    });
  }
});
