// The state file behind the fake hook tools: what Juju would know (input) and what the charm did (output).
// Shaped like ops.testing's State: a test writes one, runs one event, and reads the next.
// (upstream: canonical/operator ops/_private/harness.py and the ops.testing State; Juju's side: juju/juju
// internal/worker/uniter, whose hook context holds the same facts.)

export type Databag = Record<string, string>;

export interface FakeRelation {
  /** `s3-credentials:1` */
  id: string;
  endpoint: string;
  remoteApp: string;
  remoteUnits: string[];
  localAppData: Databag;
  localUnitData: Databag;
  remoteAppData: Databag;
  remoteUnitsData: Record<string, Databag>;
}

export interface FakeSecret {
  /** every revision's content, oldest first (revision n is revisions[n-1]) */
  revisions: Databag[];
  /** the revision this unit tracks; unset until its first secret-get */
  tracked?: number;
  /** simulate a secret not granted to this application (revoked, or never granted) */
  denied?: boolean;
  /** revisions the owner removed (juju remove-secret --revision): reading one fails (juju/juju apiserver/facades/agent/secretsmanager/secrets.go) */
  removedRevisions?: number[];
}

export interface StatusRecord {
  application: boolean;
  status: string;
  message: string;
}

export interface FakeJujuState {
  unit: string;
  leader: boolean;
  config: Record<string, unknown>;
  relations: FakeRelation[];
  /** keyed by URI (`secret:...`) */
  secrets: Record<string, FakeSecret>;
  unitState: Databag;
  /** relation id → the error relation-set prints for it (the controller refusing or unreachable mid-hook) */
  relationSetFailures?: Record<string, string>;
  /** the pod's address, as network-get gives it for every endpoint (a Kubernetes unit has one network) */
  podAddress?: string;
  /** set when the event is an action */
  actionParams?: Record<string, unknown>;
  // What the charm did:
  actionResults: Databag;
  actionFailure?: string;
  actionLogs: string[];
  statusHistory: StatusRecord[];
  logs: { level: string; message: string }[];
  relationSets: { relation: string; app: boolean; data: Databag }[];
  applicationVersion?: string;
  /** every tool call with its arguments (stdin is never recorded here, as Juju never shows it) */
  calls: { tool: string; args: string[]; /** epoch ms the tool process started and finished */ started?: number; ended?: number }[];
}

export function emptyState(overrides: Partial<FakeJujuState> = {}): FakeJujuState {
  return {
    unit: 'kubeflow-upgrader/0',
    leader: true,
    config: {},
    relations: [],
    secrets: {},
    unitState: {},
    actionResults: {},
    actionLogs: [],
    statusHistory: [],
    logs: [],
    relationSets: [],
    calls: [],
    ...overrides,
  };
}
