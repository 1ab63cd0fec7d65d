// RBAC in the embedded cluster, as kube-apiserver and kube-controller-manager have it from the start: the bootstrap
// ClusterRoles and ClusterRoleBindings (fixtures/, from kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy), the escalation checks on writes of RBAC objects (authorizer.ts) and the ClusterRole aggregation
// controller (aggregation.ts).
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { KubeObject } from '../../../../src/kube/types.ts';
import type { Cluster } from '../cluster.ts';
import { clusterRoleAggregationController } from './aggregation.ts';
import { checkRbacWrite, RbacAuthorizer, RBAC_REFS } from './authorizer.ts';

function fixture(name: string): KubeObject[] {
  const list = parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as { items: KubeObject[] };
  // `rules: null` is how the test data prints an aggregated role before the controller fills it: no rules yet
  return list.items.map((o) => {
    const copy = { ...o } as KubeObject & { rules?: unknown };
    if (copy.rules === null) delete copy.rules;
    return copy;
  });
}

export function bootstrapClusterRoles(): KubeObject[] {
  return fixture('bootstrap-cluster-roles.yaml');
}

export function bootstrapClusterRoleBindings(): KubeObject[] {
  return fixture('bootstrap-cluster-role-bindings.yaml');
}

export interface Rbac {
  authorizer: RbacAuthorizer;
  stop(): void;
}

/** installs the bootstrap policy, the escalation checks and the aggregation controller in `cluster` */
export function installRbac(cluster: Cluster): Rbac {
  for (const role of bootstrapClusterRoles()) cluster.create(RBAC_REFS.clusterRoles, role);
  for (const binding of bootstrapClusterRoleBindings()) cluster.create(RBAC_REFS.clusterRoleBindings, binding);
  const authorizer = new RbacAuthorizer(cluster.store);
  const withdraw = cluster.addWriteCheck((def, obj, old, user) => checkRbacWrite(authorizer, def, obj, old, user));
  const stopAggregation = clusterRoleAggregationController().start(cluster);
  return {
    authorizer,
    stop: () => {
      stopAggregation();
      withdraw();
    },
  };
}
