// Reading a LIST answer without parsing what did not change. A reconcile of a large job
// LISTs all of its pods on every event, and the client's JSON.parse of them (7.5 MB for
// 1,000 real pods, ~35–50 ms) was most of an event's time. Between two events of a warm
// instance nearly every pod is the same version as before, and Kubernetes gives each
// version of an object its own resourceVersion: an item with the uid and resourceVersion of
// one parsed before is that object, unchanged (informers rely on the same rule). So each
// item's bytes are found with Buffer.indexOf (native), its uid and resourceVersion read from
// the flat keys that open its metadata (kube-apiserver writes name, generateName, namespace,
// uid, resourceVersion first), and only items not seen before are parsed.
//
// Exactly JSON.parse's result or nothing: decode() returns undefined (the caller parses the
// whole answer) unless the answer is `{…,"items":[…]}` with items last, every item opens
// with `{"metadata":{`, and every item not reused parses on its own. Items start at the
// array's start and right after the item before. A kept item is taken by its byte count,
// only where `},{"metadata":{` (or the array's end) follows it: the same uid and
// resourceVersion are the same object, so the same bytes. Any other item is cut at the next
// `},{"metadata":{`. In valid JSON that text cannot sit inside a string (its unescaped quotes
// would end it), so a cut in the wrong place can only be inside the item, where it leaves a
// piece with an unclosed bracket: its parse fails and the whole answer is parsed instead.
// test/kube/list-reuse.test.ts proves with fast-check that decode() equals JSON.parse on
// random answers, lists of changing pods and bodies that are not lists.
//
// A LIST through a view (kube.ts ItemView) is read as it arrives instead (list-stream.ts,
// https-kube.ts), and what is kept of an item is what the view made of it (review82 H2: an
// EphemeralJob's reconcile keeps a few fields of each pod, not the pod). viewed() gives the
// stream the same rule: an item with the uid and resourceVersion of one kept under the view,
// whose byte count ends it where `,{"metadata":{` or the array's end follows, is taken without
// being scanned or parsed; any other is scanned, parsed, read through the view and kept.
import { deepFreeze } from '../api/frozen.ts';
import type { KeptItem } from './list-stream.ts';
import type { ItemView } from './kube.ts';

const ITEMS = Buffer.from('"items":[');
const ITEM_START = Buffer.from('{"metadata":{');
const CUT = Buffer.from('},{"metadata":{');
/** What follows an item in a stream: the next item, or the end of the array and the answer. */
const NEXT_ITEM = Buffer.from(',{"metadata":{');
const LAST_ITEM = Buffer.from(']}');
/** The last bytes of an item kept from a stream, which the same item in a later answer ends with. */
const TAIL_BYTES = 16;
/** How far into an item its uid and resourceVersion are looked for (names are ≤ 253 bytes). */
const IDENTITY_WINDOWS = [512, 2048];

interface Kept {
  resourceVersion: string;
  /** The item's JSON bytes, by which a later answer's item is taken. */
  bytes: number;
  value: unknown;
  /** What it counts toward the budget: its JSON bytes, or those of what a view kept of it. */
  cost: number;
  /** Of an item read as it arrived: its last TAIL_BYTES bytes. */
  tail?: Buffer;
}

/** ListStream's `map` and `kept` for one answer read through a view (viewed()). */
export interface ViewedItems<T> {
  map: (raw: unknown, bytes: Buffer) => T;
  kept: KeptItem<T>;
}

/** Parsed LIST items kept by uid while the client lives (a warm function instance), least recently used out first. */
export class ListReuse {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;
  private readonly budget: number;

  /**
   * `budgetBytes`: the JSON bytes of the items kept, at most (their parsed form takes about
   * 3.5 times that); of an item read through a view, the JSON bytes of what the view made of
   * it. Default: a sixteenth of the heap limit (16 MiB of a 256 MiB Lambda's, about 2,000
   * real pods kept whole, or 30,000 as an EphemeralJob's reconcile keeps them). An answer
   * decoded whole (decode()) larger than the budget is parsed whole and kept not.
   */
  constructor(budgetBytes: number = Math.floor(process.getBuiltinModule('node:v8').getHeapStatistics().heap_size_limit / 16)) {
    this.budget = budgetBytes;
  }

  /**
   * The answer as JSON.parse would give it (items frozen: shared between answers), or
   * undefined to parse it whole. `scope` names the cluster that answered: uids and
   * resourceVersions are unique within one cluster only (two restored from one etcd
   * snapshot share both), so items are reused only within their scope.
   */
  decode(body: Buffer, scope = ''): unknown {
    try {
      return this.decodeIn(body, scope);
    } catch {
      // Nothing here should throw (review: a cut read past the end once did); if anything
      // does, the answer is parsed whole, as promised.
      return undefined;
    }
  }

  /**
   * The items of one answer read as it arrives through `view` (list-stream.ts), kept under
   * the view's name within `scope` (decode()). What the view makes of an item is frozen all
   * the way down, and shared with later answers.
   */
  viewed<T>(view: ItemView<T>, scope = ''): ViewedItems<T> {
    const prefix = `${view.name}\0${scope}\0`;
    return {
      map: (raw, bytes) => {
        const value = deepFreeze(view.read(raw));
        const id = bytes.indexOf(ITEM_START) === 0 ? identity(bytes) : undefined;
        if (id) this.keep(prefix + id.uid, { resourceVersion: id.resourceVersion, bytes: bytes.length, value, cost: JSON.stringify(value)?.length ?? 0, tail: Buffer.from(bytes.subarray(-TAIL_BYTES)) });
        return value;
      },
      kept: (chunk, at) => {
        if (at + ITEM_START.length > chunk.length || chunk.compare(ITEM_START, 0, ITEM_START.length, at, at + ITEM_START.length) !== 0) return undefined;
        const id = identity(chunk, at);
        const k = id && this.reusable({ uid: prefix + id.uid, resourceVersion: id.resourceVersion }, chunk, at, true);
        return k ? { value: k.value as T, end: at + k.bytes } : undefined;
      },
    };
  }

  private decodeIn(body: Buffer, scope: string): unknown {
    if (body.length > this.budget) return undefined;
    const open = body.indexOf(ITEMS);
    const close = body.lastIndexOf(']');
    if (open < 0 || close < open) return undefined;
    const from = open + ITEMS.length;
    const head = parseJson(`${body.toString('utf8', 0, from)}]${body.toString('utf8', close + 1)}`);
    if (!isEmptyList(head)) return undefined;
    const items = from === close ? [] : this.items(body.subarray(from, close), scope);
    return items === undefined ? undefined : { ...head, items };
  }

  /**
   * Every item of the array's inside, or undefined when one is not what it must be. An item
   * kept from before is taken by its byte count, when the next item (or the end) starts right
   * there; any other is cut at the next `},{"metadata":{` and parsed.
   */
  private items(inside: Buffer, scope: string): unknown[] | undefined {
    if (inside.indexOf(ITEM_START) !== 0) return undefined;
    const items: unknown[] = [];
    for (let start = 0; start < inside.length;) {
      const found = identity(inside, start);
      const id = found && { uid: `${scope}\0${found.uid}`, resourceVersion: found.resourceVersion };
      const kept = id && this.reusable(id, inside, start);
      let end: number;
      if (kept) {
        items.push(kept.value);
        end = start + kept.bytes;
      } else {
        const cut = inside.indexOf(CUT, start);
        end = cut < 0 ? inside.length : cut + 1;
        const item = this.parsed(inside.subarray(start, end), id);
        if (item === undefined) return undefined;
        items.push(item);
      }
      start = end + 1;
    }
    return items;
  }

  /**
   * The kept item of this uid and resourceVersion, if its byte count ends it where the next
   * item or the array's end is. In the array's inside (decode()): `},{"metadata":{` there, or
   * the end. In a chunk of an answer read as it arrives (`streamed`), it must end within the
   * chunk, in the bytes it ended in before, and what follows there, as far as the chunk goes,
   * must be the next item or `]}` (kube-apiserver writes `items` last); a chunk cut between
   * two items (itemBlocks) leaves the next chunk's bytes to the scanner, which reads them as
   * any others.
   */
  private reusable(id: Identity, inside: Buffer, start: number, streamed = false): Kept | undefined {
    const k = this.kept.get(id.uid);
    if (!k || k.resourceVersion !== id.resourceVersion) return undefined;
    const end = start + k.bytes;
    // The next item must start right there: a kept item that came back longer (a default
    // added to its kind, a server of another version) may end too near the end to tell.
    const bounded = streamed ? endsAsBefore(inside, end, k.tail) : end === inside.length ? inside[end - 1] === 0x7d : end - 1 + CUT.length <= inside.length && inside.compare(CUT, 0, CUT.length, end - 1, end - 1 + CUT.length) === 0;
    if (!bounded) return undefined;
    this.kept.delete(id.uid);
    this.kept.set(id.uid, k);
    return k;
  }

  private parsed(piece: Buffer, id: Identity | undefined): unknown {
    const value = parseJson(piece.toString('utf8'));
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (id) this.keep(id.uid, { resourceVersion: id.resourceVersion, bytes: piece.length, value: deepFreeze(value), cost: piece.length });
    return value;
  }

  private keep(uid: string, k: Kept): void {
    const old = this.kept.get(uid);
    if (old) {
      this.kept.delete(uid);
      this.bytes -= old.cost;
    }
    this.kept.set(uid, k);
    this.bytes += k.cost;
    for (const [key, e] of this.kept) {
      if (this.bytes <= this.budget) break;
      this.kept.delete(key);
      this.bytes -= e.cost;
    }
  }
}

/** An item kept from a stream ends at `end` of `chunk`: in its old last bytes, followed (as far as the chunk goes) by the next item or `]}`. */
function endsAsBefore(chunk: Buffer, end: number, tail: Buffer | undefined): boolean {
  if (tail === undefined || end > chunk.length || end < tail.length || chunk.compare(tail, 0, tail.length, end - tail.length, end) !== 0) return false;
  const n = chunk.length - end;
  if (n === 0) return true;
  const next = chunk[end] === 0x5d ? LAST_ITEM : NEXT_ITEM;
  const m = Math.min(n, next.length);
  return chunk.compare(next, 0, m, end, end + m) === 0;
}

/**
 * Chunks of an answer handed on in blocks: once `size` bytes have gathered, all of them up to
 * the end of the last item that ends there, before the `,{"metadata":{` that opens the next
 * (kube-apiserver's LIST of pods), the rest kept for the next block; so an item kept from an
 * earlier answer lies within one block and is taken without a scan (viewed()). Where no item
 * ends, what has gathered goes on whole; `end()` hands on the rest. Any cut is as good as
 * another to the reader (list-stream.ts reads any chunking alike).
 */
export function itemBlocks(size: number, write: (block: Buffer) => void): { add(chunk: Buffer): void; end(): void } {
  // Room for a block and one more read of the socket (64 KiB), as a rule; filled again after
  // each write (list-stream.ts keeps nothing of a chunk once write() returns).
  let block = Buffer.allocUnsafe(size + 65_536);
  let length = 0;
  const emit = (upTo: number): void => {
    write(block.subarray(0, upTo));
    block.copy(block, 0, upTo, length);
    length -= upTo;
  };
  return {
    add(chunk) {
      if (length + chunk.length > block.length) {
        const bigger = Buffer.allocUnsafe(Math.max(block.length * 2, length + chunk.length));
        block.copy(bigger, 0, 0, length);
        block = bigger;
      }
      chunk.copy(block, length);
      length += chunk.length;
      if (length < size) return;
      // Only within what the block holds (a negative offset would count from the buffer's end).
      const cut = length >= CUT.length ? block.lastIndexOf(CUT, length - CUT.length) : -1;
      emit(cut > 0 ? cut + 1 : length);
    },
    end() {
      if (length > 0) emit(length);
    },
  };
}

interface Identity {
  uid: string;
  resourceVersion: string;
}

/**
 * uid and resourceVersion from the keys that open the metadata of the item at `start`, while
 * they are plain (a string without escapes, or a number); undefined once a key is anything
 * else first. Read from the first 512 bytes, or 2,048 when the names are long.
 */
export function identity(buf: Buffer, start = 0): Identity | undefined {
  for (const window of IDENTITY_WINDOWS) {
    const end = Math.min(buf.length, start + window);
    const id = plainIdentity(buf.toString('latin1', start + ITEM_START.length, end));
    if (id || end === buf.length) return id;
  }
  return undefined;
}

function plainIdentity(s: string): Identity | undefined {
  let uid: string | undefined;
  let resourceVersion: string | undefined;
  for (let i = 0; i >= 0 && (uid === undefined || resourceVersion === undefined);) {
    const pair = plainPair(s, i);
    if (!pair) return undefined;
    if (pair.key === 'uid') uid = pair.value;
    else if (pair.key === 'resourceVersion') resourceVersion = pair.value;
    i = pair.next;
  }
  return uid !== undefined && resourceVersion !== undefined ? { uid, resourceVersion } : undefined;
}

/** `"key":"value"` or `"key":123` at i, then `,` or the metadata's `}`: key, value (strings only), where the next pair starts (-1: none). */
function plainPair(s: string, i: number): { key: string; value?: string; next: number } | undefined {
  if (s[i] !== '"') return undefined;
  const keyEnd = s.indexOf('":', i + 1);
  if (keyEnd < 0) return undefined;
  const key = s.slice(i + 1, keyEnd);
  let j = keyEnd + 2;
  let value: string | undefined;
  if (s[j] === '"') {
    const end = s.indexOf('"', j + 1);
    if (end < 0) return undefined;
    value = s.slice(j + 1, end);
    j = end + 1;
  } else {
    const m = /^-?\d+/.exec(s.slice(j, j + 24));
    if (!m) return undefined;
    j += m[0].length;
  }
  // Escapes, or a key with a quote in it, are left to JSON.parse.
  if (key.includes('"') || key.includes('\\') || value?.includes('\\') || (s[j] !== ',' && s[j] !== '}')) return undefined;
  return { key, ...(value !== undefined ? { value } : {}), next: s[j] === ',' ? j + 1 : -1 };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isEmptyList(v: unknown): v is { items: [] } & Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Array.isArray((v as { items?: unknown }).items) && (v as { items: unknown[] }).items.length === 0;
}
