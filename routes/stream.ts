import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';

/**
 * Sends chunks (text or bytes) as they are produced, with backpressure. The caller reads what could fail
 * first (before any header is sent); a client that goes away mid-answer just ends the stream.
 */
export async function sendChunks(res: Response, chunks: AsyncIterable<string | Buffer>): Promise<void> {
  try {
    await pipeline(Readable.from(chunks), res);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
  }
}

/** Reads an async generator's first item now; the rest follow when the returned one is iterated. */
export async function firstThenRest<T>(items: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  const first = await items.next();
  return (async function* () {
    if (first.done) return;
    yield first.value;
    yield* items;
  })();
}
