// `pods/<name>/exec` over WebSocket, as a 1.30 kube-apiserver and its kubelet answer it. The HTTPS server hands every
// upgrade request here (index.ts); a plain request for the subresource comes through http.ts (execWithoutUpgrade).
//
// Upstream, kubernetes/kubernetes unless named:
// - the filters before the handler (staging/src/k8s.io/apiserver/pkg/server/config.go DefaultBuildHandlerChain):
//   authentication (401), impersonation, authorization (403). The request is a GET, so RBAC is asked for `get` on
//   `pods/exec` (requestinfo.go) and for nothing else: the second, `create`, check
//   (AuthorizePodWebsocketUpgradeCreatePermission, pkg/features/versioned_kube_features.go) exists from 1.35 on, beta
//   and on by default there; a 1.30 or 1.31 server has no such gate. The injected faults (faults.ts) are not applied.
// - ExecREST.Connect (pkg/registry/core/pod/rest/subresources.go) and ExecLocation/streamLocation/validateContainer
//   (pkg/registry/core/pod/strategy.go): the Pod must exist (404), the container must be named when the Pod has
//   several ("a container name must be specified for pod <pod>, choose one of: [<init containers> <containers>]") and
//   be one of its own ("container <c> is not valid for pod <pod>"), the Pod must be on a node ("pod <pod> does not have
//   a host assigned"); each a 400 before any upgrade. Then the UpgradeAwareProxyHandler (upgradeRequired): a request
//   that is no upgrade is "Upgrade request required" (400).
// - a WebSocket offering v5.channel.k8s.io is answered by the API server's stream translator (TranslateStreamClose
//   WebsocketRequests, beta and on in 1.30; staging/src/k8s.io/apiserver/pkg/util/proxy/streamtranslator.go and
//   websocket.go): only v5 is negotiated, the kubelet is reached behind it, and whatever goes wrong there comes back
//   as a Status on the error channel: a container that does not run (not started yet, or ended: the kubelet's
//   findContainer looks among running containers, pkg/kubelet/kubelet_pods.go GetExec) is an InternalError "unable to
//   upgrade connection: container not found (\"<c>\")" (client-go's SPDY round tripper words the kubelet's 500,
//   staging/src/k8s.io/apimachinery/pkg/util/httpstream/spdy/roundtripper.go), an exit code is NonZeroExitCode with
//   the cause ExitCode and the message "command terminated with non-zero exit code: command terminated with exit code
//   <n>" (client-go's v4 error decoder, then codeExitToStatusError).
// - a WebSocket offering only older protocols is proxied to the kubelet, which negotiates "", channel.k8s.io,
//   base64.channel.k8s.io, v4.channel.k8s.io or v4.base64.channel.k8s.io (staging/src/k8s.io/kubelet/pkg/cri/streaming/
//   remotecommand/websocket.go) and answers a container that does not run with a plain 500 before the upgrade; an exit
//   code's message is containerd's ("error executing command [<argv>], exit code <n>", internal/cri/server/
//   container_execsync.go and streaming.go), v4 as a JSON Status, the older ones as the message alone and only on
//   failure (httpstream.go v1WriteStatusFunc, v4WriteStatusFunc).
// - the channels (staging/src/k8s.io/apimachinery/pkg/util/remotecommand/constants.go, staging/src/k8s.io/apimachinery/
//   pkg/util/httpstream/wsstream/conn.go): each binary message is one channel byte then the bytes (base64 protocols: a
//   '0'+n character then base64); 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize; in v5 the message [255, n] closes
//   channel n (the client's end of stdin). After the upgrade an empty message on the lowest writable channel (stdout,
//   else stderr, else error) tells the client the streams are there.
// Not simulated: SPDY (a client that upgrades to it gets 400 here), a TTY (no pseudo-terminal; resize messages are
// read and dropped), attach and port-forward.
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { KubeObject } from '../../../src/kube/types.ts';
import type { Cluster } from './cluster.ts';
import type { ExecProcess, ExecRequest } from './contract.ts';
import { ApiError, badRequest, isApiError, notFound, pathNotFound, unauthorized } from './errors.ts';
import { impersonate, type TokenAuthenticator } from './rbac/authentication.ts';
import { forbiddenFor, type RbacAuthorizer } from './rbac/authorizer.ts';
import { requestInfo } from './rbac/request-info.ts';

const PODS = { group: '', resource: 'pods' };
const V5 = 'v5.channel.k8s.io';
const V4 = 'v4.channel.k8s.io';
const V4_BASE64 = 'v4.base64.channel.k8s.io';
const V1 = 'channel.k8s.io';
const V1_BASE64 = 'base64.channel.k8s.io';
/** what the kubelet's WebSocket server negotiates (websocket.go createWebSocketStreams) */
const KUBELET_PROTOCOLS = ['', V1, V1_BASE64, V4, V4_BASE64];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const ERROR = 3;
const CLOSE = 255;
// strconv.ParseBool, which decodes PodExecOptions' booleans from the query
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

export interface ExecContext {
  cluster: Cluster;
  authenticator: TokenAuthenticator;
  authorizer: RbacAuthorizer;
}

interface ExecTarget {
  namespace: string;
  pod: string;
  container: string;
  options: { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean; command: string[] };
}

/** /api/v1/namespaces/<ns>/pods/<name>/exec, or undefined for any other path */
function execPath(url: URL): { namespace: string; pod: string } | undefined {
  const seg = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (seg.length !== 7 || seg[0] !== 'api' || seg[1] !== 'v1' || seg[2] !== 'namespaces' || seg[4] !== 'pods' || seg[6] !== 'exec') return undefined;
  return { namespace: seg[3]!, pod: seg[5]! };
}

function containerNames(pod: KubeObject): { all: string[]; main: string[] } {
  const spec = (pod.spec ?? {}) as { initContainers?: { name: string }[]; containers?: { name: string }[]; ephemeralContainers?: { name: string }[] };
  const main = (spec.containers ?? []).map((c) => c.name);
  // podutil.VisitContainers: init containers, then containers, then ephemeral ones
  return { all: [...(spec.initContainers ?? []).map((c) => c.name), ...main, ...(spec.ephemeralContainers ?? []).map((c) => c.name)], main };
}

/** ExecREST.Connect up to the kubelet's address: the checks the API server makes itself, each an ApiError. */
function connect(cluster: Cluster, namespace: string, podName: string, q: URLSearchParams): ExecTarget {
  const pod = cluster.get(PODS, podName, namespace);
  if (!pod) throw notFound(PODS, podName);
  const names = containerNames(pod);
  let container = q.get('container') ?? '';
  if (container === '') {
    if (names.main.length === 1) container = names.main[0]!;
    else if (names.main.length === 0) throw badRequest(`a container name must be specified for pod ${podName}`);
    else throw badRequest(`a container name must be specified for pod ${podName}, choose one of: [${names.all.join(' ')}]`);
  } else if (!names.all.includes(container)) {
    throw badRequest(`container ${container} is not valid for pod ${podName}`);
  }
  if (!(pod.spec as { nodeName?: string } | undefined)?.nodeName) throw badRequest(`pod ${podName} does not have a host assigned`);
  const flag = (name: string) => TRUE.has(q.get(name) ?? '');
  return { namespace, pod: podName, container, options: { stdin: flag('stdin'), stdout: flag('stdout'), stderr: flag('stderr'), tty: flag('tty'), command: q.getAll('command') } };
}

/**
 * A plain (not upgrading) GET or POST of pods/<name>/exec, for http.ts: the Connect checks first, then the proxy's
 * "Upgrade request required". Returns the error to answer with.
 */
export function execWithoutUpgrade(cluster: Cluster, method: string, namespace: string, podName: string, q: URLSearchParams): ApiError {
  if (method !== 'GET' && method !== 'POST') return new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  try {
    connect(cluster, namespace, podName, q);
  } catch (e) {
    if (isApiError(e)) return e;
    throw e;
  }
  return badRequest('Upgrade request required');
}

/** An HTTP answer written on the raw socket of an upgrade request that is refused. */
function refuse(socket: Duplex, code: number, body: string, contentType: string): void {
  if (!socket.writable) return void socket.destroy();
  const bytes = Buffer.from(body);
  socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: ${contentType}\r\nContent-Length: ${bytes.length}\r\nConnection: close\r\n\r\n${body}`);
}

const refuseWith = (socket: Duplex, e: ApiError) => refuse(socket, e.status, JSON.stringify(e.toStatus()), 'application/json');

/** The protocols a client offered, in its order (Sec-WebSocket-Protocol, comma separated, possibly repeated). */
function offered(req: IncomingMessage): string[] {
  const header = req.headers['sec-websocket-protocol'];
  const values = Array.isArray(header) ? header.join(',') : header ?? '';
  return values.split(',').map((p) => p.trim()).filter(Boolean);
}

/** metav1.Status as Go's json.Marshal writes it from a StatusError's Status() (no kind or apiVersion). */
type WireStatus = { metadata: Record<string, never>; status: 'Success' | 'Failure'; message?: string; reason?: string; details?: { causes: { reason?: string; message: string }[] }; code?: number };
const SUCCESS: WireStatus = { metadata: {}, status: 'Success' };
const internalError = (message: string): WireStatus =>
  ({ metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500 });
const exitCodeError = (message: string, exitCode: number): WireStatus =>
  ({ metadata: {}, status: 'Failure', message: `command terminated with non-zero exit code: ${message}`, reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: String(exitCode) }] } });

/** The 'upgrade' listener of the HTTPS server: pods/exec over WebSocket; every other upgrade is refused. */
export function execUpgradeHandler(ctx: ExecContext): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: (_protocols, req) => (req as IncomingMessage & { chosenProtocol?: string }).chosenProtocol ?? false });
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    try {
      const url = new URL(req.url ?? '/', 'https://cluster');
      const requestor = ctx.authenticator.authenticate(req.headers.authorization);
      if (!requestor) return refuseWith(socket, unauthorized());
      const user = impersonate(ctx.authorizer, requestor, req.headers, req.url ?? '/');
      const attributes = { user, ...requestInfo(req.method ?? 'GET', url) };
      const decision = ctx.authorizer.authorize(attributes);
      if (!decision.allowed) return refuseWith(socket, forbiddenFor(attributes, decision.reason));
      const path = execPath(url);
      if (!path) return refuseWith(socket, pathNotFound());
      const target = connect(ctx.cluster, path.namespace, path.pod, url.searchParams);
      if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuseWith(socket, badRequest('Upgrade request required'));
      const protocols = offered(req);
      if (protocols.includes(V5)) return translated(ctx, wss, req, socket, head, target);
      return direct(ctx, wss, req, socket, head, target, protocols);
    } catch (e) {
      if (isApiError(e) && e.status === 500) return refuse(socket, 500, e.message, 'text/plain; charset=utf-8');
      return refuseWith(socket, isApiError(e) ? e : new ApiError(500, 'InternalError', `Internal error occurred: ${(e as Error).message}`));
    }
  };
}

/** the kubelet's exec into a running container, undefined when it does not run */
function containerExec(ctx: ExecContext, target: ExecTarget): ((request: ExecRequest) => ExecProcess) | undefined {
  return ctx.cluster.execSource?.(target.namespace, target.pod, target.container);
}

/** The kubelet's own refusal of the options (remotecommand.NewOptions), before anything runs. */
function optionsProblem(target: ExecTarget): string | undefined {
  const { stdin, stdout, stderr } = target.options;
  if (!stdin && !stdout && !stderr) return 'you must specify at least 1 of stdin, stdout, stderr';
  return undefined;
}

/** v5: the API server's stream translator answers the WebSocket itself and reaches the kubelet behind it. */
function translated(ctx: ExecContext, wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer, target: ExecTarget): void {
  (req as IncomingMessage & { chosenProtocol?: string }).chosenProtocol = V5;
  wss.handleUpgrade(req, socket, head, (ws) => {
    const channels = new Channels(ws, V5, target.options);
    const problem = optionsProblem(target);
    const exec = problem === undefined ? containerExec(ctx, target) : undefined;
    if (problem !== undefined) return channels.finish(internalError(`unable to upgrade connection: ${problem}`));
    const process = exec && start(exec, target);
    if (!process) return channels.finish(internalError(`unable to upgrade connection: container not found ("${target.container}")`));
    // the kubelet's answer comes back through client-go's v4 decoder: its exit code worded anew, any other failure
    // (an InternalError Status) as its message, wrapped in a second InternalError by the translator
    channels.run(process, (outcome) => 'exitCode' in outcome
      ? (outcome.exitCode === 0 ? SUCCESS : exitCodeError(`command terminated with exit code ${outcome.exitCode}`, outcome.exitCode))
      : internalError(`Internal error occurred: error executing command in container: failed to exec in container: ${outcome.startError}`));
  });
}

/** v4 and older: the API server proxies the upgrade to the kubelet, which answers it. */
function direct(ctx: ExecContext, wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer, target: ExecTarget, protocols: string[]): void {
  const problem = optionsProblem(target);
  if (problem !== undefined) return refuse(socket, 400, problem, 'text/plain; charset=utf-8');
  const exec = containerExec(ctx, target);
  const process = exec && start(exec, target);
  if (!process) return refuse(socket, 500, `container not found ("${target.container}")`, 'text/plain; charset=utf-8');
  // golang.org/x/net/websocket: the first protocol the client offered that the server allows; none offered is ""
  const chosen = protocols.length === 0 ? '' : protocols.find((p) => KUBELET_PROTOCOLS.includes(p));
  if (chosen === undefined) {
    process.kill();
    return refuse(socket, 403, '', 'text/plain; charset=utf-8');
  }
  (req as IncomingMessage & { chosenProtocol?: string }).chosenProtocol = chosen;
  wss.handleUpgrade(req, socket, head, (ws) => {
    const channels = new Channels(ws, chosen, target.options);
    const argv = `[${target.options.command.join(' ')}]`;
    channels.run(process, (outcome) => 'exitCode' in outcome
      ? (outcome.exitCode === 0 ? SUCCESS : exitCodeError(`error executing command ${argv}, exit code ${outcome.exitCode}`, outcome.exitCode))
      : internalError(`error executing command in container: failed to exec in container: ${outcome.startError}`));
  });
}

/** The command started in the container, or undefined when the container stopped running in between. */
function start(exec: (request: ExecRequest) => ExecProcess, target: ExecTarget): ExecProcess | undefined {
  try {
    return exec({ command: target.options.command, stdin: target.options.stdin });
  } catch {
    return undefined;
  }
}

/** The channels of one exec WebSocket (wsstream.Conn): framing, the empty first message, stdin, the final Status. */
class Channels {
  private readonly base64: boolean;
  private readonly v4Status: boolean;
  private process: ExecProcess | undefined;

  constructor(private readonly ws: WebSocket, private readonly protocol: string, private readonly options: ExecTarget['options']) {
    this.base64 = protocol === V4_BASE64 || protocol === V1_BASE64;
    this.v4Status = protocol === V4 || protocol === V4_BASE64 || protocol === V5;
    // tell the client the streams are there: an empty message on the lowest writable channel
    this.send(options.stdout ? STDOUT : options.stderr ? STDERR : ERROR, Buffer.alloc(0));
    ws.on('message', (data) => this.received(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)));
    ws.on('close', () => this.process?.stdin?.end());
    ws.on('error', () => undefined);
  }

  private send(channel: number, data: Buffer): void {
    if (this.ws.readyState !== 1) return;
    if (this.base64) this.ws.send(String.fromCharCode(48 + channel) + data.toString('base64'));
    else this.ws.send(Buffer.concat([Buffer.of(channel), data]));
  }

  private received(data: Buffer): void {
    if (data.length === 0) return;
    if (this.protocol === V5 && data[0] === CLOSE) {
      // a half-close: [255, channel]; the client has no more stdin
      if (data.length === 2 && data[1] === STDIN) this.process?.stdin?.end();
      return;
    }
    const channel = this.base64 ? data[0]! - 48 : data[0]!;
    const payload = this.base64 ? Buffer.from(data.subarray(1).toString('latin1'), 'base64') : data.subarray(1);
    // anything on RESIZE is dropped: there is no TTY here
    if (channel === STDIN && this.options.stdin) this.process?.stdin?.write(payload);
  }

  /** Relays the process's output, then its outcome on the error channel, then closes. */
  run(process: ExecProcess, status: (outcome: { exitCode: number } | { startError: string }) => WireStatus): void {
    this.process = process;
    process.stdin?.on('error', () => undefined);
    process.stdout.on('data', (chunk: Buffer) => { if (this.options.stdout) this.send(STDOUT, chunk); });
    process.stderr.on('data', (chunk: Buffer) => { if (this.options.stderr) this.send(STDERR, chunk); });
    const ended = Promise.all([new Promise((r) => process.stdout.on('end', r)), new Promise((r) => process.stderr.on('end', r))]);
    void Promise.all([process.done, ended]).then(([outcome]) => this.finish(status(outcome)));
  }

  /** The Status on the error channel (v4 and v5: always, as JSON; older: its message, only on failure), then close. */
  finish(status: WireStatus): void {
    if (this.v4Status) this.send(ERROR, Buffer.from(JSON.stringify(status)));
    else if (status.status !== 'Success') this.send(ERROR, Buffer.from(status.message ?? ''));
    if (this.ws.readyState === 1) this.ws.close(1000);
  }
}
