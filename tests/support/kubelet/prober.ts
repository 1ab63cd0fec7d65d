// The kubelet's readiness probes for a running container: a TCP connect (tcpSocket) or an HTTP GET (httpGet) to the
// Pod's IP, every periodSeconds once initialDelaySeconds have passed since the container started, each given
// timeoutSeconds. The container is ready after successThreshold successes in a row and unready again after
// failureThreshold failures in a row; until the first result it is unready.
// Upstream (kubernetes/kubernetes):
// - pkg/kubelet/prober/worker.go (run, doProbe: readiness starts at Failure, the initial delay, the thresholds);
// - pkg/kubelet/prober/prober.go (runProbe: the host defaults to the Pod IP, the port may name a container port:
//   probe.ResolveContainerPort) and pkg/probe/tcp/tcp.go (DoTCPProbe: a connect within the timeout succeeds),
//   pkg/probe/http/http.go (DoHTTPProbe: 200 <= status < 400 succeeds; HTTPS is not verified; redirects to another
//   host count as success), pkg/apis/core/v1/defaults.go (SetDefaults_Probe: timeout 1 s, period 10 s, thresholds 1
//   and 3; httpGet's path "/" and scheme HTTP);
// - pkg/kubelet/status/status_manager.go (SetContainerReadiness: the container's `ready` and the Pod's Ready and
//   ContainersReady conditions follow the result).
// The first probe runs as soon as the initial delay allows (the worker's random start-up jitter is left out). exec and
// gRPC probes are not simulated: such a container never becomes ready, and says why in its probe result.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';

export interface Probe {
  tcpSocket?: { port: number | string; host?: string };
  httpGet?: { port: number | string; host?: string; path?: string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  exec?: unknown;
  grpc?: unknown;
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

export interface ContainerPorts { ports?: { name?: string; containerPort: number }[] }

/** probe.ResolveContainerPort: a number, or the number of the container port of that name */
export function resolveProbePort(port: number | string, container: ContainerPorts): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** one probe: whether it succeeded and, when not, why */
export async function probeOnce(probe: Probe, podIP: string, container: ContainerPorts): Promise<{ ok: boolean; output: string }> {
  const timeoutMs = 1000 * Math.max(1, probe.timeoutSeconds ?? 1);
  if (probe.tcpSocket) {
    const port = resolveProbePort(probe.tcpSocket.port, container);
    if (port === undefined) return { ok: false, output: `couldn't find port: ${String(probe.tcpSocket.port)}` };
    const host = probe.tcpSocket.host || podIP;
    return new Promise((resolve) => {
      const socket = connect({ host, port, timeout: timeoutMs });
      socket.once('connect', () => { socket.destroy(); resolve({ ok: true, output: '' }); });
      socket.once('timeout', () => { socket.destroy(); resolve({ ok: false, output: `dial tcp ${host}:${port}: i/o timeout` }); });
      socket.once('error', (error: NodeJS.ErrnoException) => {
        resolve({ ok: false, output: `dial tcp ${host}:${port}: connect: ${error.code === 'ECONNREFUSED' ? 'connection refused' : error.message}` });
      });
    });
  }
  if (probe.httpGet) {
    const get = probe.httpGet;
    const port = resolveProbePort(get.port, container);
    if (port === undefined) return { ok: false, output: `couldn't find port: ${String(get.port)}` };
    const https = (get.scheme ?? 'HTTP').toUpperCase() === 'HTTPS';
    const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.30', Accept: '*/*' };
    for (const h of get.httpHeaders ?? []) headers[h.name] = h.value;
    return new Promise((resolve) => {
      const options = { host: get.host || podIP, port, path: get.path || '/', method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false };
      const req = (https ? httpsRequest : httpRequest)(options, (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? { ok: true, output: '' } : { ok: false, output: `HTTP probe failed with statuscode: ${code}` });
      });
      req.on('timeout', () => req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')));
      req.on('error', (error: NodeJS.ErrnoException) => resolve({ ok: false, output: `Get "${https ? 'https' : 'http'}://${options.host}:${port}${options.path}": ${error.code === 'ECONNREFUSED' ? 'dial tcp: connect: connection refused' : error.message}` }));
      req.end();
    });
  }
  return { ok: false, output: 'exec and grpc probes are not simulated by this kubelet' };
}

export interface ProbeWorker { stop(): void }

/**
 * Probes until stopped, calling `onChange` with each change of readiness (it starts unready). `later` schedules on
 * the kubelet's loop, so a stopped kubelet probes no more.
 */
export function readinessWorker(probe: Probe, podIP: string, container: ContainerPorts, startedAt: number,
  later: (ms: number, fn: () => void) => void, onChange: (ready: boolean, output: string) => void): ProbeWorker {
  const periodMs = 1000 * Math.max(1, probe.periodSeconds ?? 10);
  const successThreshold = probe.successThreshold ?? 1;
  const failureThreshold = probe.failureThreshold ?? 3;
  let stopped = false;
  let ready = false;
  let run = 0; // the count of the same result in a row, positive for successes
  const tick = async () => {
    if (stopped) return;
    const result = await probeOnce(probe, podIP, container);
    if (stopped) return;
    run = result.ok ? Math.max(0, run) + 1 : Math.min(0, run) - 1;
    if (!ready && run >= successThreshold) {
      ready = true;
      onChange(true, '');
    } else if (ready && -run >= failureThreshold) {
      ready = false;
      onChange(false, result.output);
    }
    later(periodMs, () => void tick());
  };
  const delayMs = Math.max(0, startedAt + 1000 * (probe.initialDelaySeconds ?? 0) - Date.now());
  later(delayMs, () => void tick());
  return { stop: () => { stopped = true; } };
}
