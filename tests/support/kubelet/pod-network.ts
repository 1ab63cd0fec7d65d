// The two files a container runtime mounts over a container's /etc from what the kubelet writes for its Pod:
// - /etc/resolv.conf (kubernetes/kubernetes pkg/kubelet/network/dns/dns.go, GetPodDNS and generateSearchesForDNSClusterFirst:
//   dnsPolicy ClusterFirst (the default) gives the cluster DNS server, the searches <ns>.svc.<domain>, svc.<domain>,
//   <domain> and `options ndots:5`; dnsPolicy Default keeps the node's file; None takes dnsConfig alone; dnsConfig's
//   nameservers, searches and options are appended, an option of the same name replacing the earlier one:
//   appendDNSConfig / mergeDNSOptions). The node's own search list is empty here, so nothing of it is appended.
// - /etc/hosts (pkg/kubelet/kubelet_pods.go, makeHostsMount, ensureHostsFile and managedHostsFileContent: the
//   "Kubernetes-managed hosts file." header, localhost for IPv4 and IPv6, the IPv6 multicast names, then the Pod's IP
//   with its FQDN (when spec.subdomain is set) and its hostname, then spec.hostAliases).
export interface PodDnsFields {
  hostname?: string;
  subdomain?: string;
  dnsPolicy?: string;
  dnsConfig?: { nameservers?: string[]; searches?: string[]; options?: { name: string; value?: string }[] };
  hostAliases?: { ip: string; hostnames?: string[] }[];
  hostNetwork?: boolean;
}

/** the contents of the Pod's resolv.conf, or undefined when the node's own is kept (dnsPolicy Default) */
export function resolvConf(namespace: string, spec: PodDnsFields, dnsIp: string, clusterDomain: string): string | undefined {
  const policy = spec.dnsPolicy ?? 'ClusterFirst';
  let nameservers: string[] = [];
  let searches: string[] = [];
  let options: { name: string; value?: string }[] = [];
  if (policy === 'ClusterFirst' || policy === 'ClusterFirstWithHostNet') {
    // ClusterFirst on a Pod with hostNetwork falls back to Default (dns.go, getPodDNSType)
    if (policy === 'ClusterFirst' && spec.hostNetwork) return undefined;
    nameservers = [dnsIp];
    searches = [`${namespace}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain];
    options = [{ name: 'ndots', value: '5' }];
  } else if (policy !== 'None') {
    return undefined;
  }
  const config = spec.dnsConfig ?? {};
  nameservers = [...nameservers, ...(config.nameservers ?? [])].slice(0, 3);
  searches = [...new Set([...searches, ...(config.searches ?? [])])].slice(0, 32);
  for (const option of config.options ?? []) {
    const at = options.findIndex((o) => o.name === option.name);
    if (at >= 0) options[at] = option;
    else options.push(option);
  }
  return [
    ...nameservers.map((ns) => `nameserver ${ns}`),
    ...(searches.length ? [`search ${searches.join(' ')}`] : []),
    ...(options.length ? [`options ${options.map((o) => (o.value !== undefined ? `${o.name}:${o.value}` : o.name)).join(' ')}`] : []),
  ].join('\n') + '\n';
}

/** the contents of the Pod's /etc/hosts */
export function hostsFile(podName: string, namespace: string, spec: PodDnsFields, podIP: string, clusterDomain: string): string {
  const hostname = podHostname(podName, spec);
  const lines = [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    spec.subdomain ? `${podIP}\t${hostname}.${spec.subdomain}.${namespace}.svc.${clusterDomain}\t${hostname}` : `${podIP}\t${hostname}`,
  ];
  const aliases = spec.hostAliases ?? [];
  if (aliases.length) {
    lines.push('', '# Entries added by HostAliases.');
    for (const alias of aliases) lines.push(`${alias.ip}\t${(alias.hostnames ?? []).join('\t')}`);
  }
  return lines.join('\n') + '\n';
}

/** GeneratePodHostNameAndDomain: spec.hostname, else the Pod's name cut to 63 characters (and of a trailing - or .) */
export function podHostname(podName: string, spec: PodDnsFields): string {
  return spec.hostname || podName.slice(0, 63).replace(/[-.]+$/, '');
}
