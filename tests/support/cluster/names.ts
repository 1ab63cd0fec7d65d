// Name rules with the real API server's error texts, so a restore that would be refused by a real cluster is
// refused here with the same words.
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path-segment';

/** undefined when valid, else the message that follows `Invalid value: "<name>": `. */
export function nameProblem(name: string, rule: NameRule): string | undefined {
  switch (rule) {
    case 'subdomain':
      if (name.length > 253) return 'must be no more than 253 characters';
      if (!DNS1123_SUBDOMAIN.test(name))
        return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
      return undefined;
    case 'label':
      if (name.length > 63) return 'must be no more than 63 characters';
      if (!DNS1123_LABEL.test(name))
        return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
      return undefined;
    case 'dns1035':
      if (name.length > 63) return 'must be no more than 63 characters';
      if (!DNS1035_LABEL.test(name))
        return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
      return undefined;
    case 'path-segment':
      if (name === '.' || name === '..') return `may not be '${name}'`;
      if (name.includes('/')) return "may not contain '/'";
      if (name.includes('%')) return "may not contain '%'";
      return undefined;
  }
}

const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** generateName's suffix: five characters from the same alphabet the real server uses. */
export function generatedSuffix(random: () => number): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_ALPHABET[Math.floor(random() * GENERATE_ALPHABET.length)];
  return s;
}

const LABEL_KEY_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function labelKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  if (prefix !== undefined && nameProblem(prefix, 'subdomain')) return 'prefix part ' + nameProblem(prefix, 'subdomain');
  if (name.length === 0 || name.length > 63 || !LABEL_KEY_NAME.test(name))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value))
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  return undefined;
}
