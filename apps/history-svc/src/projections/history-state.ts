import type { Item } from '@udp/contracts';
import type { StateFromRows } from '@udp/eventsourcing';
import { param } from '@udp/readmodel';
import { historyStreams } from '../domain/aggregate';
import type { HistoryState } from '../domain/decider';
import { historySnapshot } from '../domain/snapshot';
import type { HistoryReadModel } from './history-queries';

/**
 * A user's history state made from their rows (`StateCacheOptions.fromRows`): the entries are the state, and the head
 * names the revision and store position they show. A write of a user in no cache (most of an audience) then reads the
 * answers of their entries from the list index, not every event of their stream with its schema check and fold.
 *
 * The head is read first and written after the entries it counts, so the entries read after it show at least its
 * revision (perhaps more, which the write's fold of the later events sets again). The columns are checked by the
 * snapshot's decoder, as a snapshot's are. None when the user has no head or no entry, or an entry has no answer (rows
 * from before answers were kept; `fillEntryAnswers` adds them at start).
 */
export function historyStateFromRows(model: HistoryReadModel): (streamId: string) => Promise<StateFromRows<HistoryState> | undefined> {
  // Every entry, tombstones too, in the list index's order: read from that index alone (it holds the answers).
  const allAnswers = model.entries.prepareFind(
    { userId: param('userId', 'string') },
    { sort: { date: -1, item_id: 1 }, select: ['answer'] },
  );
  return async (streamId) => {
    const userId = historyStreams.idOf(streamId);
    const head = await model.heads.get(userId);
    if (!head) return undefined;
    const rows = await allAnswers({ userId });
    // Every history event leaves an entry, so a head without any is a user's rows half erased (an erasure stopped
    // between its deletes): the stream decides.
    if (rows.length === 0 || rows.some(({ answer }) => answer == null)) return undefined;
    // One parse of them all: a hundred small parses cost twice as much.
    const entries = JSON.parse(`[${rows.map(({ answer }) => answer).join(',')}]`) as Item[];
    entries.sort((a, b) => (a.item_id < b.item_id ? -1 : a.item_id > b.item_id ? 1 : 0));
    let lastId = 0;
    for (const entry of entries) if (entry.id > lastId) lastId = entry.id;
    const state = historySnapshot.decode({
      itemIds: entries.map((e) => e.item_id),
      ids: entries.map((e) => e.id),
      dates: entries.map((e) => e.date),
      deleted: entries.map((e) => (e.deleted ? 1 : 0)),
      deviceIds: entries.map((e) => e.device_id ?? null),
      positions: entries.map((e) => e.last_playback_position ?? null),
      lastId,
    });
    return { revision: head.revision, position: BigInt(head.position), state };
  };
}
