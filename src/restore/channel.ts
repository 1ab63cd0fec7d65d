// A queue that is also an async iterable: the namespace watch pushes namespaces as they become ready, and the
// restore's pipeline takes them as they come; iterating ends once the queue is closed and empty.
/** Namespaces handed from the namespace watch to the pipeline as they become ready; iterating ends after close(). */
export class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private closed = false;
  private wake: (() => void) | undefined;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  /**
   * What is queued now, up to `max`, once there is at least one; empty only when the queue is closed and empty. For a
   * consumer that works on as many as are ready at once.
   */
  async take(max: number): Promise<T[]> {
    while (this.items.length === 0 && !this.closed) {
      await new Promise<void>((resolve) => { this.wake = resolve; });
      this.wake = undefined;
    }
    return this.items.splice(0, max);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => { this.wake = resolve; });
      this.wake = undefined;
    }
  }
}
