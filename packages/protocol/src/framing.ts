/**
 * Newline-delimited framing for the MCP stdio transport.
 *
 * A frame is the bytes up to and including a `\n`. The body handed to the decoder drops the `\n` and
 * an optional `\r` before it; `raw` keeps every byte as received so that a relay can forward an
 * unchanged message byte for byte. Chunks may split a frame anywhere (inside a multi-byte UTF-8
 * sequence included) or carry several frames.
 *
 * A body larger than `maxBytes` is never cut: the framer reports it as an error, drops it whole and
 * resynchronises at the next newline.
 */

export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

const LF = 0x0a;
const CR = 0x0d;

export interface Frame {
  /** The frame exactly as received, including its terminator (absent only for a final unterminated frame). */
  raw: Buffer;
  /** The message bytes without the line terminator. */
  body: Buffer;
}

/** How much of a dropped frame is kept, to tell which request it answered or was. */
export const DROPPED_HEAD_BYTES = 4096;

export class FrameTooLargeError extends Error {
  override readonly name = "FrameTooLargeError";
  constructor(
    readonly size: number,
    readonly maxBytes: number,
    /** The frame's first bytes (at most {@link DROPPED_HEAD_BYTES}): where its `id` usually is. */
    readonly head: Buffer = Buffer.alloc(0),
  ) {
    super(`message of at least ${size} bytes exceeds the ${maxBytes}-byte limit; it was dropped whole`);
  }
}

export interface FrameSink {
  frame(frame: Frame): void;
  error(error: FrameTooLargeError): void;
}

export class LineFramer {
  readonly #maxBytes: number;
  readonly #sink: FrameSink;
  #chunks: Buffer[] = [];
  #length = 0;
  /** Bytes seen of an over-limit frame that is being skipped up to its newline. */
  #skipping = -1;
  /** The first bytes of the frame being skipped. */
  #head: Buffer = Buffer.alloc(0);

  constructor(sink: FrameSink, maxBytes: number = DEFAULT_MAX_MESSAGE_BYTES) {
    if (!Number.isInteger(maxBytes) || maxBytes < 1) {
      throw new RangeError(`maxBytes must be a positive integer, got ${maxBytes}`);
    }
    this.#sink = sink;
    this.#maxBytes = maxBytes;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start);
      if (this.#skipping >= 0) {
        if (nl === -1) {
          this.#skipping += chunk.length - start;
          return;
        }
        const size = this.#skipping + (nl - start);
        this.#skipping = -1;
        this.#sink.error(new FrameTooLargeError(size, this.#maxBytes, this.#head));
        this.#head = Buffer.alloc(0);
        start = nl + 1;
        continue;
      }
      const end = nl === -1 ? chunk.length : nl;
      const pieceBody = end - start;
      // The limit applies to the body; a trailing CR is part of the terminator.
      const bodySoFar = this.#length + pieceBody;
      const crAllowance = nl !== -1 && end > 0 && this.#lastByte(chunk, start, end) === CR ? 1 : 0;
      if (bodySoFar - crAllowance > this.#maxBytes) {
        const head = this.#headOf(chunk.subarray(start, end));
        this.#chunks = [];
        this.#length = 0;
        if (nl === -1) {
          this.#skipping = bodySoFar;
          this.#head = head;
          return;
        }
        this.#sink.error(new FrameTooLargeError(bodySoFar - crAllowance, this.#maxBytes, head));
        start = nl + 1;
        continue;
      }
      if (nl === -1) {
        this.#chunks.push(start === 0 ? chunk : chunk.subarray(start));
        this.#length += pieceBody;
        return;
      }
      let raw: Buffer;
      if (this.#chunks.length === 0) {
        // A chunk that is one whole frame (the usual case) is the frame.
        raw = start === 0 && nl + 1 === chunk.length ? chunk : chunk.subarray(start, nl + 1);
      } else {
        this.#chunks.push(chunk.subarray(start, nl + 1));
        raw = Buffer.concat(this.#chunks, this.#length + pieceBody + 1);
        this.#chunks = [];
        this.#length = 0;
      }
      this.#emit(raw, raw.length - 1);
      start = nl + 1;
    }
  }

  /** Flush at end of input: a final frame without a newline is still delivered. */
  end(): void {
    if (this.#skipping >= 0) {
      this.#sink.error(new FrameTooLargeError(this.#skipping, this.#maxBytes, this.#head));
      this.#skipping = -1;
      this.#head = Buffer.alloc(0);
      return;
    }
    if (this.#length === 0) {
      this.#chunks = [];
      return;
    }
    const raw = Buffer.concat(this.#chunks, this.#length);
    this.#chunks = [];
    this.#length = 0;
    this.#emit(raw, raw.length);
  }

  /** Bytes buffered for an incomplete frame. */
  get pending(): number {
    return this.#length;
  }

  /** The first {@link DROPPED_HEAD_BYTES} of the buffered frame followed by `piece`, copied. */
  #headOf(piece: Buffer): Buffer {
    const parts: Buffer[] = [];
    let left = DROPPED_HEAD_BYTES;
    for (const part of [...this.#chunks, piece]) {
      if (left <= 0) break;
      parts.push(part.subarray(0, left));
      left -= Math.min(left, part.length);
    }
    return Buffer.concat(parts);
  }

  #emit(raw: Buffer, bodyEnd: number): void {
    const end = bodyEnd > 0 && raw[bodyEnd - 1] === CR ? bodyEnd - 1 : bodyEnd;
    this.#sink.frame({ raw, body: raw.subarray(0, end) });
  }

  #lastByte(chunk: Buffer, start: number, end: number): number | undefined {
    if (end > start) return chunk[end - 1];
    const last = this.#chunks[this.#chunks.length - 1];
    return last === undefined ? undefined : last[last.length - 1];
  }
}
