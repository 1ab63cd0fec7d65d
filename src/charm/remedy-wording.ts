// The engines' terms and remedies in the charm's words: config options and action params as `juju run` and
// `juju config` take them, and the charm's actions by name.
import type { Wording } from '../errors/remedy.ts';

export const charmWording: Wording = {
  term(term) {
    switch (term.term) {
      case 'volumes-off':
        return 'include-volumes=false';
      case 'control-plane-off':
        return 'include-control-plane=false';
      case 'wait-timeout':
        return `restore-wait-timeout (${term.seconds} s)`;
      case 'max-backup-age':
        return `max-backup-age (${term.age})`;
      case 'storage-class-map':
        return 'storage-class-map';
      case 'encryption-key':
        return 'encryption-key';
      case 'restore':
        return 'restore-state';
      case 'guard-off':
        return 'protect-crds=false';
      case 'read-data':
        return `read-data=${term.value}`;
    }
  },
  remedy(remedy) {
    switch (remedy.fix) {
      case 'raise-wait-timeout':
        return 'raise restore-wait-timeout';
      case 'run-backup':
        return 'run backup-state';
      case 'turn-guard-on':
        return 'run juju config kubeflow-upgrader protect-crds=true and wait for active';
      case 'set-encryption-key':
        return 'set encryption-key';
      case 'allow-unauthenticated':
        return 'allow-unauthenticated=true';
      case 'map-storage-class':
        return `map it, e.g. storage-class-map=${remedy.from}=<a class of this cluster>`;
      case 'migrate-stored-versions':
        return 'run migrate-stored-versions';
      case 'verify-again':
        return 'run verify-backup again';
      case 'prune-again':
        return 'run prune-backups again';
      case 'remove-foreign-locks':
        return 'run prune-backups remove-foreign-locks=true';
      case 'delete-unauthenticated':
        return 'run prune-backups delete-unauthenticated=true';
      case 'recover-retained':
        return 'run recover-backups';
    }
  },
};
