import type { HistoryEvent } from '../domain/aggregate';

/** History events for the specs (decider, projections, write endpoints), by their data. */
export const recorded = (
  itemId: string,
  id: number,
  date: number,
  extra: Partial<Extract<HistoryEvent, { type: 'HistoryItemRecorded' }>['data']> = {},
): HistoryEvent => ({
  type: 'HistoryItemRecorded',
  data: { itemId, id, date, deleted: false, ...extra },
});
export const deleted = (itemId: string, id: number, date: number): HistoryEvent => ({
  type: 'HistoryItemDeleted',
  data: { itemId, id, date },
});
export const cleared = (date: number, itemIds: string[]): HistoryEvent => ({ type: 'HistoryCleared', data: { date, itemIds } });
