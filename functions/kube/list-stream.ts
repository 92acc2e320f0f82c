// A LIST answer read as it arrives (review82 H1). Each element of the top-level "items" array
// is cut from the bytes at its end, JSON.parse'd alone and handed to `map` at once (the
// reflector trims and takes it there, keeping nothing of it: reflector.ts, list()), so the
// relay holds one raw object at a time, never the page: a
// page of 500 pods with 50 KB of annotations each, read whole and parsed, took the relay to
// 212–221 MiB (90 MiB read this way). The other top-level members (kind, apiVersion, metadata)
// are parsed as they come, before or after the items. Only boundaries are found here (strings,
// escapes and nesting followed byte by byte, the rest of a long string skipped with indexOf);
// every value is still read, and its syntax checked, by JSON.parse, so a malformed answer is
// an error, never a shorter list. Measured on a page of 500 real-sized pods with the relay's
// trim as `map`: about half the CPU of reading the page whole (the raw objects die young).
// Our own scanner rather than a streaming JSON library (stream-json, @streamparser/json):
// those build every value token by token in JavaScript instead of with JSON.parse, and would
// add a package to the relay's bundle for what is here one small state machine.
// The functions' client reads a LIST through a view the same way (https-kube.ts, review82
// H2: an EphemeralJob's reconcile keeps only what its planner reads of each pod), and skips
// the items it kept from an earlier answer without scanning them (`kept`, list-reuse.ts).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The largest single value read (one item): kube-apiserver takes objects of at most 3 MiB
 * (etcd stores at most 1.5 MiB by default), so this is only a bound against a broken server.
 */
export const MAX_LIST_ITEM_BYTES = 16 * 1024 * 1024;

/**
 * What a whole LIST answer said: its items (each through `map`; one `map` made undefined is
 * not kept), or none if it had no items array (null: `"items": null`).
 */
export interface ListBody<T> {
  items: T[] | null | undefined;
  resourceVersion: string;
  continue: string | undefined;
}

// Where the scanner is in the top-level object.
const START = 0; // before '{'
const OPEN = 1; // after '{': a key or '}'
const KEY = 2; // after ',': a key
const COLON_NEXT = 3; // after a key
const VALUE_NEXT = 4; // after ':'
const ITEMS_OPEN = 5; // after "items":[ — an item or ']'
const ITEM_NEXT = 6; // after an item's ',': an item
const AFTER_ITEM = 7; // ',' or ']'
const AFTER_MEMBER = 8; // ',' or '}'
const DONE = 9; // only whitespace may follow
const IN_VALUE = 10; // inside a key, a member's value or an item

// What the value being read is.
const AS_KEY = 0;
const AS_MEMBER = 1;
const AS_ITEM = 2;

/** Strings read byte by byte up to this length, the rest of a longer one with indexOf (measured fastest on real pods). */
const SHORT_STRING = 128;

/**
 * Where an item begins (`at` in `chunk`): the value kept for it from an earlier answer, and
 * the index just after the item, when it is such an item and ends within the chunk; else
 * undefined, and the item is read (list-reuse.ts decides which items are the same).
 */
export type KeptItem<T> = (chunk: Buffer, at: number) => { value: T; end: number } | undefined;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isEnd = (b: number): boolean => b === COMMA || b === RBRACE || b === RBRACKET || isSpace(b);

/** Where a number, true, false or null that goes on at `i` ends in `c`; -1 if not in `c`. */
function primitiveEnd(c: Buffer, i: number): number {
  for (; i < c.length; i++) if (isEnd(c[i]!)) return i;
  return -1;
}

/** A LIST answer's JSON, fed chunk by chunk (`write`), then `end()`; throws SyntaxError on malformed JSON. */
export class ListStream<T> {
  private state = START;
  /** Bytes of the answer before the current chunk (for error messages). */
  private offset = 0;
  private key = '';
  private itemsKey = false;
  private items: T[] | null | undefined;
  private metadata: unknown;
  // The value being read: what it is, where it began in this chunk, the pieces of it from earlier chunks.
  private as = AS_KEY;
  private from = 0;
  private pieces: Buffer[] = [];
  private bytes = 0;
  private primitive = false;
  private depth = 0;
  private inString = false;
  /** Inside a string, the chunk so far ended in an unpaired backslash: the next byte is escaped. */
  private odd = false;

  private readonly map: (raw: unknown, bytes: Buffer) => T;
  private readonly maxValueBytes: number;
  private readonly kept: KeptItem<T> | undefined;

  /**
   * `map` takes each item as JSON.parse made it, and its bytes; `maxValueBytes` bounds one
   * item (or other value); `kept` gives an item kept from before in place of reading it.
   */
  constructor(map: (raw: unknown, bytes: Buffer) => T, maxValueBytes = MAX_LIST_ITEM_BYTES, kept?: KeptItem<T>) {
    this.map = map;
    this.maxValueBytes = maxValueBytes;
    this.kept = kept;
  }

  /** Read the next chunk of the answer; nothing of it is kept once this returns (a copy of what must be). */
  write(chunk: Buffer): void {
    // An empty chunk says nothing (and must not take the place of a byte escaped across chunks).
    if (chunk.length === 0) return;
    let i = 0;
    if (this.state === IN_VALUE) this.from = 0;
    for (;;) {
      if (this.state !== IN_VALUE) {
        if (i >= chunk.length) break;
        i = this.structural(chunk, i);
        continue;
      }
      // Also at the chunk's end: a value begun by its last byte is held too.
      const end = this.scan(chunk, i);
      if (end < 0) {
        this.hold(chunk.subarray(this.from), true);
        break;
      }
      this.done(this.value(chunk, end), end);
      i = end;
    }
    this.offset += chunk.length;
  }

  /** The answer is complete: what it said; throws if it ended before its object did. */
  end(): ListBody<T> {
    if (this.state !== DONE) throw this.error('it ends before its object does', 0);
    const m = this.metadata as { resourceVersion?: unknown; continue?: unknown } | null | undefined;
    return {
      items: this.items,
      resourceVersion: typeof m?.resourceVersion === 'string' ? m.resourceVersion : '',
      continue: typeof m?.continue === 'string' && m.continue !== '' ? m.continue : undefined,
    };
  }

  /** One byte outside any value: whitespace, or the next step of `{ "key": value, … }`; the index after it. */
  private structural(c: Buffer, i: number): number {
    const b = c[i]!;
    if (isSpace(b)) return i + 1;
    switch (this.state) {
      case START:
        return this.expect(b === LBRACE, OPEN, c, i);
      case OPEN:
        if (b === RBRACE) return this.to(DONE, i);
        return b === QUOTE ? this.begin(AS_KEY, c, i) : this.fail(c, i);
      case KEY:
        return b === QUOTE ? this.begin(AS_KEY, c, i) : this.fail(c, i);
      case COLON_NEXT:
        return this.expect(b === COLON, VALUE_NEXT, c, i);
      case VALUE_NEXT:
        return this.member(c, i);
      case ITEMS_OPEN:
        if (b === RBRACKET) return this.to(AFTER_MEMBER, i);
        return this.item(c, i);
      case ITEM_NEXT:
        return this.item(c, i);
      case AFTER_ITEM:
        if (b === RBRACKET) return this.to(AFTER_MEMBER, i);
        return this.expect(b === COMMA, ITEM_NEXT, c, i);
      case AFTER_MEMBER:
        if (b === RBRACE) return this.to(DONE, i);
        return this.expect(b === COMMA, KEY, c, i);
      default:
        return this.fail(c, i);
    }
  }

  /** A member's value begins at `i`: the items array is entered, any other value read whole. */
  private member(c: Buffer, i: number): number {
    if (this.key !== 'items') return this.begin(AS_MEMBER, c, i);
    // JSON.parse would keep the last one; a list has one, so two are refused.
    if (this.itemsKey) throw this.error('"items" twice', i);
    this.itemsKey = true;
    if (c[i] !== LBRACKET) return this.begin(AS_MEMBER, c, i);
    this.items = [];
    return this.to(ITEMS_OPEN, i);
  }

  /** An item begins at `i`: one kept from an earlier answer is taken whole, without a scan; any other is read. */
  private item(c: Buffer, i: number): number {
    const k = this.kept?.(c, i);
    if (k === undefined || k.end <= i || k.end > c.length) return this.begin(AS_ITEM, c, i);
    this.items!.push(k.value);
    this.state = AFTER_ITEM;
    return k.end;
  }

  private to(state: number, i: number): number {
    this.state = state;
    return i + 1;
  }

  private expect(ok: boolean, state: number, c: Buffer, i: number): number {
    return ok ? this.to(state, i) : this.fail(c, i);
  }

  /** A value (key, member value or item) begins at `i`; the index to scan it from. */
  private begin(as: number, c: Buffer, i: number): number {
    const b = c[i]!;
    this.as = as;
    this.state = IN_VALUE;
    this.from = i;
    this.inString = b === QUOTE;
    this.odd = false;
    this.primitive = !this.inString && b !== LBRACE && b !== LBRACKET;
    this.depth = this.inString ? 0 : 1;
    if (!this.primitive) return i + 1;
    // A number, true, false or null: it runs up to the next delimiter, so it cannot start with one.
    return isEnd(b) ? this.fail(c, i) : i;
  }

  /** Where the value being read ends in `c` (the index after it), scanning from `i`; -1 if not in `c`. */
  private scan(c: Buffer, i: number): number {
    if (this.primitive) return primitiveEnd(c, i);
    const n = c.length;
    let depth = this.depth;
    let inString = this.inString;
    // The chunk before ended in a backslash inside a string: this chunk's first byte is escaped.
    if (this.odd) {
      this.odd = false;
      i++;
    }
    while (i < n) {
      if (!inString) {
        const b = c[i++];
        if (b === LBRACE || b === LBRACKET) depth++;
        else if (b === RBRACE || b === RBRACKET) {
          if (--depth === 0) return i;
        } else if (b === QUOTE) inString = true;
        continue;
      }
      // A string: its first SHORT_STRING bytes one by one in a loop of its own (a flag tested
      // on every byte instead took twice the time), the rest of a longer one with indexOf.
      const near = i + SHORT_STRING < n ? i + SHORT_STRING : n;
      let closed = false;
      while (i < near) {
        const b = c[i++];
        if (b === QUOTE) {
          closed = true;
          break;
        }
        // The escaped byte is skipped (when it is the next chunk's first, i passes n).
        if (b === BACKSLASH) i++;
      }
      if (!closed) {
        if (i >= n) {
          this.odd = i > n;
          break;
        }
        i = this.longString(c, i);
        if (i < 0) break;
      }
      inString = false;
      if (depth === 0) return i;
    }
    this.depth = depth;
    this.inString = inString;
    return -1;
  }

  /**
   * The index after the quote that ends a long string, searching from `i` (a byte not
   * escaped) with indexOf; -1 if that quote is not in `c`, with `odd` set when `c` ends in an
   * unpaired backslash. A quote found is escaped when an odd run of backslashes precedes it.
   */
  private longString(c: Buffer, i: number): number {
    for (;;) {
      const q = c.indexOf(QUOTE, i);
      const stop = q < 0 ? c.length : q;
      let j = stop;
      while (j > i && c[j - 1] === BACKSLASH) j--;
      const escaped = (stop - j) % 2 === 1;
      if (q < 0) {
        this.odd = escaped;
        return -1;
      }
      if (!escaped) return q + 1;
      i = q + 1;
    }
  }

  /**
   * Part of the value from this chunk on, to be joined with the rest when it ends; `copy` when
   * it outlives write(): nothing of a chunk is kept once write() returns, so the writer may
   * fill its buffer again (https-kube.ts, list-reuse.ts itemBlocks), and no chunk is kept
   * alive beyond the value's own bytes.
   */
  private hold(piece: Buffer, copy = false): void {
    this.bytes += piece.length;
    if (this.bytes > this.maxValueBytes) throw this.error(`a value longer than ${this.maxValueBytes} bytes`, 0);
    this.pieces.push(copy ? Buffer.from(piece) : piece);
  }

  /** The value's bytes: from `from` to `end` in `c`, after the pieces held from earlier chunks. */
  private value(c: Buffer, end: number): Buffer {
    if (this.pieces.length === 0) return c.subarray(this.from, end);
    this.hold(c.subarray(0, end));
    const bytes = Buffer.concat(this.pieces, this.bytes);
    this.pieces = [];
    this.bytes = 0;
    return bytes;
  }

  /** A whole value was read (ending before index `end`): parse it and take it where it belongs. */
  private done(bytes: Buffer, end: number): void {
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      throw this.error((err as Error).message, end, err);
    }
    if (this.as === AS_ITEM) {
      const kept = this.map(value, bytes);
      if (kept !== undefined) this.items!.push(kept);
      this.state = AFTER_ITEM;
    } else if (this.as === AS_KEY) {
      this.key = value as string;
      this.state = COLON_NEXT;
    } else {
      if (this.key === 'metadata') this.metadata = value;
      // Go writes a nil slice as null (https-kube.ts reads it as no items; the relay refuses it).
      else if (this.key === 'items' && value === null) this.items = null;
      this.state = AFTER_MEMBER;
    }
  }

  private fail(c: Buffer, i: number): never {
    const b = c[i]!;
    throw this.error(`unexpected ${b >= 0x20 && b < 0x7f ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16)}`}`, i);
  }

  private error(what: string, i: number, cause?: unknown): SyntaxError {
    return new SyntaxError(`the LIST answer is not a JSON list: ${what} (near byte ${this.offset + i})`, cause === undefined ? undefined : { cause });
  }
}
