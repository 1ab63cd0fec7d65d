// The one sentence an action says while the engine behind it has not been built into this charm revision.
export function notAvailableYet(action: string, engine: string): string {
  return `${action} is not available in this charm revision yet (${engine} has not been built in); refresh the charm to a revision that ships it.`;
}
