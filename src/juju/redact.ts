// Secret values the charm has seen in this dispatch; every text bound for Juju (logs, statuses, action output) is
// scrubbed of them, so that a message that quotes an error from a library cannot leak a credential.
export class Redactor {
  private readonly secrets = new Set<string>();

  add(value: string | undefined): void {
    // Very short values would blank out ordinary words; credentials are never that short.
    if (value && value.length >= 4) this.secrets.add(value);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) out = out.split(secret).join('***');
    return out;
  }
}
