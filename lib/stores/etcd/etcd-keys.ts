/** The etcd keys of one resource, all under one "room" prefix that no other resource's keys share. */
export interface EtcdResourceKeys {
  /** The lease: value = the holder's token, attached to the holder's etcd lease. */
  readonly lock: Buffer;
  /** Who holds it (host, pid, label, time), attached to the same etcd lease, so it ends with it. */
  readonly holder: Buffer;
  /** Written (empty, no lease) by every fenced grant: its `mod_revision` is the last fence of the resource. */
  readonly fence: Buffer;
  /** Where waiting processes stand: `line/<owner>`, ordered by their `create_revision`. */
  readonly line: Buffer;
  /** The end of the line's key range (exclusive). */
  readonly lineEnd: Buffer;
  /** The start and end of every key of this resource, for one watch over all of them. */
  readonly room: Buffer;
  readonly roomEnd: Buffer;
}

/**
 * Lays out a resource's keys as `<prefix><byte length of key>:<key>/<part>`. The length makes the layout
 * decodable one way only, so no user key (with `/`, `:`, NUL or any other byte) can reach into another
 * resource's room, and a range over one room never covers a key of another.
 */
export function etcdResourceKeys(prefix: string, key: string): EtcdResourceKeys {
  const room = Buffer.from(`${prefix}${Buffer.byteLength(key, 'utf8')}:${key}/`, 'utf8');
  const part = (name: string): Buffer => Buffer.concat([room, Buffer.from(name, 'utf8')]);
  return {
    lock: part('lock'),
    holder: part('holder'),
    fence: part('fence'),
    line: part('line/'),
    lineEnd: part('line0'),
    room,
    roomEnd: rangeEnd(room),
  };
}

/**
 * The etcd key of a response record (`<prefix>record:<key>`): a room starts with the byte length of its key, a
 * digit, so no record key lies in any resource's room.
 */
export function etcdRecordKey(prefix: string, key: string): Buffer {
  return Buffer.from(`${prefix}record:${key}`, 'utf8');
}

/**
 * The etcd key that remembers the token a forced release ended (`<prefix>revoked:<byte length>:<key>`): outside
 * every room (a room starts with a digit), so its writes and its expiry wake no waiter of the resource.
 */
export function etcdRevokedKey(prefix: string, key: string): Buffer {
  return Buffer.from(`${prefix}revoked:${Buffer.byteLength(key, 'utf8')}:${key}`, 'utf8');
}

/** The key of `owner`'s place in a resource's line. */
export function lineEntry(keys: EtcdResourceKeys, owner: string): Buffer {
  return Buffer.concat([keys.line, Buffer.from(owner, 'utf8')]);
}

/** The smallest key after every key that starts with `prefix` (etcd's "prefix + 1"). */
function rangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let index = end.length - 1; index >= 0; index--) {
    if (end[index] < 0xff) {
      end[index]++;
      return end.subarray(0, index + 1);
    }
  }
  return Buffer.from([0]);
}
