// The unit's status as a pure function of what the charm found out in this dispatch. Other parts of the charm add
// facts (the guard's state, the last backup's age, "Secrets are stored in clear", "control plane not covered") as notes.
import type { BucketProblem } from '../store/bucket-problem.ts';
import { charmProblemSentence } from './s3-wording.ts';

export type S3Fact =
  | { state: 'no-relation' }
  | { state: 'waiting'; message: string }
  | { state: 'invalid'; problem: string }
  | { state: 'unusable'; problem: BucketProblem }
  | { state: 'ready'; bucket: string; path: string };

/** `blocked` notes block the unit; `waiting` ones hold it in waiting; `active` ones are appended to the active message. */
export interface StatusNote {
  level: 'blocked' | 'waiting' | 'active';
  text: string;
}

export interface StatusFacts {
  configProblem?: string;
  s3: S3Fact;
  notes?: StatusNote[];
  /** set while the unit is being removed */
  removing?: boolean;
}

export interface UnitStatus {
  status: 'active' | 'blocked' | 'waiting' | 'maintenance';
  message: string;
}

export function decideStatus(facts: StatusFacts): UnitStatus {
  if (facts.removing) return { status: 'maintenance', message: 'removing' };
  const notes = facts.notes ?? [];
  if (facts.configProblem) return { status: 'blocked', message: oneLine(facts.configProblem) };
  const s3 = facts.s3;
  if (s3.state === 'no-relation') return { status: 'blocked', message: 'relate to s3-integrator: juju integrate kubeflow-upgrader s3-integrator' };
  if (s3.state === 'invalid') return { status: 'blocked', message: oneLine(s3.problem) };
  if (s3.state === 'unusable') return { status: 'blocked', message: oneLine(charmProblemSentence(s3.problem)) };
  const blocked = notes.find((note) => note.level === 'blocked');
  if (blocked) return { status: 'blocked', message: oneLine(blocked.text) };
  if (s3.state === 'waiting') return { status: 'waiting', message: oneLine(s3.message) };
  const waiting = notes.find((note) => note.level === 'waiting');
  if (waiting) return { status: 'waiting', message: oneLine(waiting.text) };
  const where = `backups to s3://${s3.bucket}${s3.path ? `/${s3.path}` : ''}`;
  const extra = notes.filter((note) => note.level === 'active').map((note) => oneLine(note.text));
  return { status: 'active', message: [where, ...extra].join('; ') };
}

/** A status is one line: never a stack, never a multi-line library message. */
function oneLine(text: string): string {
  const first = text.split('\n')[0]!.trim();
  return first.length > 240 ? `${first.slice(0, 237)}...` : first;
}
