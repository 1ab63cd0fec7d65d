// API errors in the exact shape the real kube-apiserver answers with (kind: Status), so clients that branch on
// reason, code or details (client-node, kubectl, our own retry logic) meet what they would meet in production.
import type { ClusterApiError } from './contract.ts';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error implements ClusterApiError {
  readonly status: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;

  constructor(status: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): Status {
    const body: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.status,
    };
    if (this.details) body.details = this.details;
    return body;
  }
}

/** What error messages call a resource: 'configmaps' for the core group, 'profiles.kubeflow.org' otherwise. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

export function qualified(r: QualifiedResource): string {
  return r.group === '' ? r.resource : `${r.resource}.${r.group}`;
}

function detailsOf(r: QualifiedResource, name: string): StatusDetails {
  const d: StatusDetails = { name, kind: r.resource };
  if (r.group !== '') d.group = r.group;
  return d;
}

export function notFound(r: QualifiedResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(r)} "${name}" not found`, detailsOf(r, name));
}

export function alreadyExists(r: QualifiedResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, detailsOf(r, name));
}

export function conflict(r: QualifiedResource, name: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(r)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    detailsOf(r, name),
  );
}

export interface FieldError {
  field: string;
  /** 'FieldValueInvalid', 'FieldValueRequired', 'FieldValueForbidden', 'FieldValueNotSupported' */
  type: string;
  /** the detail after the type's lead-in, e.g. `Invalid value: "x": must be ...` */
  text: string;
}

export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return { field, type: 'FieldValueInvalid', text: `Invalid value: ${JSON.stringify(value)}: ${detail}` };
}

export function required(field: string, detail = ''): FieldError {
  return { field, type: 'FieldValueRequired', text: detail ? `Required value: ${detail}` : 'Required value' };
}

export function forbiddenField(field: string, detail: string): FieldError {
  return { field, type: 'FieldValueForbidden', text: `Forbidden: ${detail}` };
}

/** 422 Invalid: `<Kind>.<group> "<name>" is invalid: <field>: <detail>` (errors joined as the server joins them). */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const lines = errors.map((e) => `${e.field}: ${e.text}`);
  const summary = lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`;
  const details: StatusDetails = {
    name,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.text, field: e.field })),
  };
  if (group !== '') details.group = group;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details);
}

export function forbidden(r: QualifiedResource, name: string, why: string, causes?: StatusCause[]): ApiError {
  const d = detailsOf(r, name);
  if (causes) d.causes = causes;
  return new ApiError(403, 'Forbidden', `${qualified(r)} "${name}" is forbidden: ${why}`, d);
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got ${contentType})`);
}

export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

export function unauthorized(): ApiError {
  return new ApiError(401, 'Unauthorized', 'Unauthorized');
}

export const EXPIRED_CONTINUE_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.';

export function expired(message = EXPIRED_CONTINUE_MESSAGE): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}
