// The mover's view of the Kubernetes API is the one every hardened Job uses (src/jobs/kube-port.ts).
export * from '../jobs/kube-port.ts';
