import type { Etcd3Client } from './etcd-client.js';
import type { EtcdMembers } from './etcd-members.js';

/** A stream on one member, marked with it: when the stream breaks, that member is the one to report. */
export type MemberStream<S> = S & { member?: Etcd3Client };

/** Opens a stream on the members' current member (`open`), marked with that member. */
export async function openOnCurrentMember<S extends object>(
  members: EtcdMembers,
  open: (member: Etcd3Client) => Promise<S>,
): Promise<MemberStream<S>> {
  const member = members.current();
  const stream: MemberStream<S> = await open(member);
  stream.member = member;
  return stream;
}
