// A small in-memory IndexedDB for node tests of the page's persistence (node has none, and the
// project takes no fake-indexeddb): only what src/store/db.ts and the persistence modules call —
// open with an upgrade, object stores with a keyPath, transactions whose requests run after the
// body returns and that complete once no request is left; values are kept as structured clones.
// Writes in a readonly transaction throw, as in a browser.

type Handler = (() => void) | null;

class Request<T = unknown> {
  result = undefined as T;
  error: Error | null = null;
  onsuccess: Handler = null;
  onerror: Handler = null;
  onupgradeneeded: Handler = null;
  onblocked: Handler = null;
}

interface StoreData {
  keyPath: string;
  rows: Map<IDBValidKey, unknown>;
}

interface DbData {
  version: number;
  stores: Map<string, StoreData>;
}

const sortedKeys = (rows: Map<IDBValidKey, unknown>) => [...rows.keys()].sort((a, b) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0));

class Transaction {
  oncomplete: Handler = null;
  onerror: Handler = null;
  onabort: Handler = null;
  error: Error | null = null;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly db: DbData,
    private readonly names: string[],
    private readonly mode: IDBTransactionMode,
  ) {
    setTimeout(() => this.run(), 0);
  }

  objectStore(name: string) {
    if (!this.names.includes(name)) throw new DOMException(`${name} is not in this transaction`, 'NotFoundError');
    const data = this.db.stores.get(name)!;
    const ask = <T>(op: () => T, write = false): Request<T> => {
      if (write && this.mode === 'readonly') throw new DOMException('the transaction is read-only', 'ReadOnlyError');
      const req = new Request<T>();
      this.queue.push(() => {
        req.result = op();
        req.onsuccess?.();
      });
      return req;
    };
    return {
      name,
      put: (value: Record<string, unknown>) =>
        ask(() => {
          const key = value[data.keyPath] as IDBValidKey;
          data.rows.set(key, structuredClone(value));
          return key;
        }, true),
      get: (key: IDBValidKey) => ask(() => structuredClone(data.rows.get(key))),
      getAll: () => ask(() => sortedKeys(data.rows).map((k) => structuredClone(data.rows.get(k)))),
      getAllKeys: () => ask(() => sortedKeys(data.rows)),
      delete: (key: IDBValidKey) => ask(() => void data.rows.delete(key), true),
      clear: () => ask(() => void data.rows.clear(), true),
    };
  }

  private run(): void {
    // Requests a success handler makes run in the same transaction, as in a browser.
    while (this.queue.length > 0) this.queue.shift()!();
    this.oncomplete?.();
  }
}

class Connection {
  constructor(private readonly db: DbData) {}

  get objectStoreNames() {
    return { contains: (n: string) => this.db.stores.has(n), length: this.db.stores.size };
  }

  createObjectStore(name: string, opts: { keyPath: string }) {
    this.db.stores.set(name, { keyPath: opts.keyPath, rows: new Map() });
  }

  transaction(names: string | string[], mode: IDBTransactionMode = 'readonly') {
    const list = typeof names === 'string' ? [names] : names;
    for (const n of list) if (!this.db.stores.has(n)) throw new DOMException(`no object store ${n}`, 'NotFoundError');
    return new Transaction(this.db, list, mode);
  }

  close(): void {}
}

export class MemoryIndexedDb {
  readonly dbs = new Map<string, DbData>();

  open(name: string, version = 1): Request<Connection> {
    const req = new Request<Connection>();
    setTimeout(() => {
      const db = this.dbs.get(name) ?? { version: 0, stores: new Map() };
      this.dbs.set(name, db);
      req.result = new Connection(db);
      if (version > db.version) {
        db.version = version;
        req.onupgradeneeded?.();
      }
      req.onsuccess?.();
    }, 0);
    return req;
  }
}

/** Installs a fresh in-memory `indexedDB` global; returns it and a function that removes it again. */
export function installMemoryIndexedDb(): { idb: MemoryIndexedDb; uninstall: () => void } {
  const g = globalThis as { indexedDB?: unknown };
  const before = g.indexedDB;
  const idb = new MemoryIndexedDb();
  g.indexedDB = idb;
  return {
    idb,
    uninstall: () => {
      g.indexedDB = before;
    },
  };
}
