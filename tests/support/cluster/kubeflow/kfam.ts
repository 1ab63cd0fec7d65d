// How KFAM names a contributor's RoleBinding and AuthorizationPolicy, written from kubeflow/kubeflow
// components/access-management/kfam/bindings.go (getBindingName, v1.7 onwards): every run of characters other than
// ASCII letters and digits in the user's name becomes one '-', the parts User, name, ClusterRole and role are joined
// with '-', lowercased, and the same replacement runs once more over the whole (url.QueryEscape in between changes
// nothing left). Test data names contributors with this, never with the product's own function, so that a mistake there
// shows up as a difference instead of being copied into both sides.
export function kfamBindingName(user: string, role: 'edit' | 'view'): string {
  const runs = /[^a-zA-Z0-9]+/g;
  return ['User', user.replace(runs, '-'), 'ClusterRole', role].join('-').toLowerCase().replace(runs, '-');
}
