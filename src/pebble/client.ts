// A Pebble client for the few calls the charm makes: HTTP/1.1 over the workload container's unix socket
// (`/charm/containers/<container>/pebble.socket` in the charm container). npm holds no Pebble client of Canonical's,
// so these calls are written from canonical/pebble `client/client.go` (the envelope, errors), `client/plan.go`
// (AddLayer, PlanBytes), `client/services.go` (replan, services), `client/changes.go` (WaitChange), `client/files.go`
// (ListFiles, Push: a multipart `request` + `files` body) and ops' `ops/pebble.py` (Client), which speak the same API
// (`internals/daemon/api*.go`). ../shared/reference/cos-and-pebble.md §5 has the request shapes.
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';

/** Pebble's answer envelope (internals/daemon/response.go). */
interface Envelope {
  type: 'sync' | 'async' | 'error';
  'status-code': number;
  status: string;
  result: unknown;
  change?: string;
}

/** An error Pebble answered, or no answer from its socket: one sentence, with Pebble's own kind when it gave one. */
export class PebbleError extends Error {
  constructor(message: string, readonly kind?: string, readonly statusCode?: number) {
    super(message);
    this.name = 'PebbleError';
  }
}

export interface ServiceInfo {
  name: string;
  startup: 'enabled' | 'disabled';
  current: 'active' | 'inactive' | 'backoff' | 'error';
}

export interface Change {
  id: string;
  kind: string;
  summary: string;
  status: string;
  ready: boolean;
  err?: string;
}

export interface FileInfo {
  path: string;
  name: string;
  type: string;
  size?: number;
  /** octal text, e.g. "600" */
  permissions: string;
  'user-id'?: number;
  'group-id'?: number;
}

export interface PushOptions {
  /** octal text, e.g. "600" (Pebble's default is 644) */
  permissions?: string;
  makeDirs?: boolean;
  userId?: number;
  groupId?: number;
}

export class PebbleClient {
  constructor(readonly socketPath: string) {}

  private call(method: string, path: string, body?: { type: string; bytes: Buffer }): Promise<Envelope> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          method,
          path,
          headers: {
            Host: 'localhost',
            Accept: 'application/json',
            ...(body ? { 'Content-Type': body.type, 'Content-Length': body.bytes.length } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let envelope: Envelope;
            try {
              envelope = JSON.parse(text) as Envelope;
            } catch {
              reject(new PebbleError(`Pebble answered ${method} ${path} with HTTP ${res.statusCode} and no JSON`, undefined, res.statusCode));
              return;
            }
            if (envelope.type === 'error') {
              const result = (envelope.result ?? {}) as { message?: string; kind?: string };
              reject(new PebbleError(`Pebble refused ${method} ${path.split('?')[0]}: ${result.message ?? envelope.status}`, result.kind, envelope['status-code']));
              return;
            }
            resolve(envelope);
          });
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => reject(new PebbleError(`cannot reach Pebble at ${this.socketPath} (${error.code ?? error.message})`, error.code)));
      req.end(body?.bytes);
    });
  }

  private json(method: string, path: string, value: unknown): Promise<Envelope> {
    return this.call(method, path, { type: 'application/json', bytes: Buffer.from(JSON.stringify(value)) });
  }

  /** GET /v1/system-info: Pebble's version and its boot id (a new one after every restart of Pebble). */
  async systemInfo(): Promise<{ version: string; bootId: string }> {
    const result = (await this.call('GET', '/v1/system-info')).result as { version: string; 'boot-id': string };
    return { version: result.version, bootId: result['boot-id'] };
  }

  /** POST /v1/layers: adds the layer under `label`, or with `combine` merges it into the one already there. */
  async addLayer(label: string, layerYaml: string, combine = true): Promise<void> {
    await this.json('POST', '/v1/layers', { action: 'add', combine, label, format: 'yaml', layer: layerYaml });
  }

  /** GET /v1/plan?format=yaml: the combined plan as YAML text. */
  async planYaml(): Promise<string> {
    return (await this.call('GET', '/v1/plan?format=yaml')).result as string;
  }

  /**
   * POST /v1/services replan: starts what the plan enables and restarts only services whose configuration changed,
   * then waits for the change (a failed start is its `err`).
   */
  async replan(timeoutSeconds = 30): Promise<Change> {
    return this.serviceAction('replan', [], timeoutSeconds);
  }

  async serviceAction(action: 'replan' | 'start' | 'stop' | 'restart', services: string[], timeoutSeconds = 30): Promise<Change> {
    const reply = await this.json('POST', '/v1/services', { action, services });
    if (!reply.change) throw new PebbleError(`Pebble started no change for ${action}`);
    const change = await this.waitChange(reply.change, timeoutSeconds);
    if (change.err) throw new PebbleError(`Pebble's ${action} failed: ${change.err}`);
    return change;
  }

  /** GET /v1/changes/{id}/wait: the change once it is ready. */
  async waitChange(id: string, timeoutSeconds: number): Promise<Change> {
    const change = (await this.call('GET', `/v1/changes/${encodeURIComponent(id)}/wait?timeout=${timeoutSeconds}s`)).result as Change;
    return change;
  }

  /** GET /v1/services: every service of the plan, or the named ones. */
  async services(names: string[] = []): Promise<ServiceInfo[]> {
    const query = names.length ? `?names=${names.map(encodeURIComponent).join(',')}` : '';
    return (await this.call('GET', `/v1/services${query}`)).result as ServiceInfo[];
  }

  /** GET /v1/files?action=list&itself=true: the file's own entry. */
  async stat(path: string): Promise<FileInfo | undefined> {
    try {
      const [info] = (await this.call('GET', `/v1/files?action=list&itself=true&path=${encodeURIComponent(path)}`)).result as FileInfo[];
      return info;
    } catch (error) {
      if (error instanceof PebbleError && error.kind === 'not-found') return undefined;
      throw error;
    }
  }

  /**
   * POST /v1/files write: the multipart body Pebble reads (a `request` part with the JSON, then one `files` part per
   * file, named by its path). Pebble writes the file under a temporary name and renames it, so a reader never sees
   * half of it.
   */
  async push(path: string, content: Buffer | string, options: PushOptions = {}): Promise<void> {
    const boundary = randomBytes(16).toString('hex');
    const file: Record<string, unknown> = { path };
    if (options.makeDirs) file['make-dirs'] = true;
    if (options.permissions) file.permissions = options.permissions;
    if (options.userId !== undefined) file['user-id'] = options.userId;
    if (options.groupId !== undefined) file['group-id'] = options.groupId;
    const bytes = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Type: application/json\r\nContent-Disposition: form-data; name="request"\r\n\r\n` +
          `${JSON.stringify({ action: 'write', files: [file] })}\r\n` +
          `--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Disposition: form-data; name="files"; filename="${path.replace(/"/g, '\\"')}"\r\n\r\n`,
      ),
      Buffer.isBuffer(content) ? content : Buffer.from(content),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const reply = await this.call('POST', '/v1/files', { type: `multipart/form-data; boundary="${boundary}"`, bytes });
    const [result] = reply.result as Array<{ path: string; error?: { kind: string; message: string } }>;
    if (result?.error) throw new PebbleError(`Pebble could not write ${path}: ${result.error.message}`, result.error.kind);
  }
}
