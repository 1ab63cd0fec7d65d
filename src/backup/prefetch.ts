// Keeps one page of a paginated LIST in flight while the previous one is being written, so listing and archiving
// overlap instead of taking turns.
export async function* prefetch<T>(source: AsyncIterable<T>): AsyncIterable<T> {
  const iterator = source[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const current = await next;
      if (current.done) return;
      next = iterator.next();
      // A failure of the page fetched ahead surfaces when it is awaited, not as an unhandled rejection meanwhile.
      next.catch(() => undefined);
      yield current.value;
    }
  } finally {
    await iterator.return?.();
  }
}
