// Juju topology as COS reads it (canonical/cos-lib src/cosl/juju_topology.py, JujuTopology.as_dict): these keys, in
// this order. model_uuid must be exactly JUJU_MODEL_UUID: the consumers rebuild a topology from it and refuse one that
// is not a lowercase v4 UUID.
export interface JujuTopology {
  model: string;
  model_uuid: string;
  application: string;
  unit: string;
  charm_name: string;
}

export function topologyOf(context: { model: { name: string; uuid: string }; appName: string; unitName: string }, charmName: string): JujuTopology {
  return { model: context.model.name, model_uuid: context.model.uuid, application: context.appName, unit: context.unitName, charm_name: charmName };
}
