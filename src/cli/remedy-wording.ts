// The engines' terms and remedies in the CLI's words: its flags and its commands.
import type { Wording } from '../errors/remedy.ts';

export const cliWording: Wording = {
  term(term) {
    switch (term.term) {
      case 'volumes-off':
        return '--no-volumes';
      case 'control-plane-off':
        // the CLI has no control-plane step: the databases and MinIO are copied by the charm's backup-state
        return 'the CLI copies no control plane';
      case 'wait-timeout':
        return `--wait-timeout (${term.seconds} s)`;
      case 'max-backup-age':
        return `--max-backup-age (${term.age})`;
      case 'storage-class-map':
        return '--storage-class-map';
      case 'encryption-key':
        return '--encryption-key-file';
      case 'restore':
        return 'kubeflow-upgrader restore';
      case 'guard-off':
        return '--no-guard';
      case 'read-data':
        return `--read-data ${term.value}`;
    }
  },
  remedy(remedy) {
    switch (remedy.fix) {
      case 'raise-wait-timeout':
        return 'raise --wait-timeout';
      case 'run-backup':
        return 'run kubeflow-upgrader backup';
      case 'turn-guard-on':
        // the guard is the charm's: the CLI can only ask for it, or be told not to require it
        return 'set protect-crds=true on the kubeflow-upgrader charm and wait for active, or pass --no-guard';
      case 'set-encryption-key':
        return 'pass --encryption-key-file';
      case 'allow-unauthenticated':
        return '--allow-unauthenticated';
      case 'map-storage-class':
        return `map it, e.g. --storage-class-map ${remedy.from}=<a class of this cluster>`;
      case 'migrate-stored-versions':
        // an action of the charm only: the CLI has no command for it
        return "run the kubeflow-upgrader charm's migrate-stored-versions action";
      case 'verify-again':
        return 'run kubeflow-upgrader verify again';
      case 'prune-again':
        return 'run kubeflow-upgrader prune again';
      case 'remove-foreign-locks':
        return 'run kubeflow-upgrader prune --remove-foreign-locks';
      case 'delete-unauthenticated':
        return 'run kubeflow-upgrader prune --delete-unauthenticated';
      case 'recover-retained':
        return 'run kubeflow-upgrader recover';
    }
  },
};
