// Whether the target is dual-stack, asked once per restore and only when an archived Service prefers dual-stack
// (src/kubeflow/ip-families.ts says why and what changes): a dryRun=All create of a PreferDualStack Service in
// `default`, which every cluster has, whose answer holds two families exactly on a dual-stack cluster. Nothing is
// allocated or stored by a dry run (kubernetes pkg/registry/core/service/storage/alloc.go, allocIPs with dryRun).
import type { ApiResource, KubeObject } from '../kube/types.ts';
import { dualStackProbe, isDualStackAnswer, prefersDualStack, singleStackOf } from '../kubeflow/ip-families.ts';
import type { RestoreKube } from './kube-port.ts';

export class TargetIpFamilies {
  private dualStack?: Promise<boolean | undefined>;

  constructor(private readonly kube: RestoreKube, private readonly dryRun: boolean, private readonly fieldManager: string) {}

  /**
   * The object to write and, for a Service narrowed to one family, the sentence to report. When the probe itself is
   * refused the Service goes as archived, and the target's answer to it is what the restore reports.
   */
  async adapt(resource: ApiResource, wanted: KubeObject): Promise<{ object: KubeObject; note?: string }> {
    if (!prefersDualStack(wanted)) return { object: wanted };
    this.dualStack ??= this.kube.create(resource, dualStackProbe('default'), { dryRun: true, fieldManager: this.fieldManager })
      .then(isDualStackAnswer, () => undefined);
    if ((await this.dualStack) !== false) return { object: wanted };
    return singleStackOf(wanted, this.dryRun)!;
  }
}
