// A short, single-line description of an unexpected error for users; the full stack goes to juju-log at DEBUG only.
export function describeUnexpected(error: unknown): string {
  if (error instanceof Error) {
    const line = error.message.split('\n')[0]!.trim().replace(/[.]$/, '');
    const text = line ? `${error.name === 'Error' ? '' : `${error.name}: `}${line}` : error.name;
    return text.length > 200 ? `${text.slice(0, 197)}...` : text;
  }
  return 'unknown error';
}
