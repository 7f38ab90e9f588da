import { PreferenceDocument } from '../preference';
import { z } from '../zod';

/** What a write did, for audit and debugging; projections never need it (the event carries the result). */
export const PreferenceOperation = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('replace') }),
  z.object({ kind: z.literal('putPath'), path: z.array(z.string()) }),
  z.object({ kind: z.literal('mergePath'), path: z.array(z.string()) }),
  z.object({ kind: z.literal('deletePath'), path: z.array(z.string()) }),
  z.object({ kind: z.literal('deleteJsonPath'), jsonpath: z.string(), removed: z.number().int() }),
  /** No change: the document restated so that a quota claim whose writer never appended can never land (docs/preference-svc.md). */
  z.object({ kind: z.literal('fence') }),
]);
export type PreferenceOperation = z.infer<typeof PreferenceOperation>;

/**
 * Events of one preference document (stream `preference.v2-<userId>/<key>`). A write carries the
 * whole resulting document, not the change: projections are then a plain upsert by revision (idempotent,
 * independent of the previous read-model state), and a replay never re-evaluates a path or a JSONPath
 * expression with a library version other than the one that decided. The document size limit bounds them.
 */
/**
 * The document is the API's `PreferenceDocument` (any JSON object, taken as it is): a `z.custom`, not a `z.record`,
 * whose parse would rebuild the object and drop an own `__proto__` field, which a preference may hold like any other
 * name (a stored event is parsed on every read).
 */
export const PreferenceWritten = z.object({
  type: z.literal('PreferenceWritten'),
  data: z.object({ key: z.string(), document: PreferenceDocument, operation: PreferenceOperation }),
});

export const PreferenceDeleted = z.object({
  type: z.literal('PreferenceDeleted'),
  data: z.object({ key: z.string() }),
});

export const PreferenceEvent = z.discriminatedUnion('type', [PreferenceWritten, PreferenceDeleted]);
export type PreferenceEvent = z.infer<typeof PreferenceEvent>;

/**
 * A write of `key` that grows the user's preferences, claimed in the user's quota stream (`preference-quota-<userId>`)
 * at its expected revision before the write is appended to the key's stream: it will land there at `revision`, and
 * its document holds `bytes` (JSON text). `before` is what the writer read: the key's stream at `revision - 1`
 * held `bytes` then (0: no document). Quota streams are the per-user totals' one point of serialisation
 * (docs/preference-svc.md, "Quotas").
 */
export const PreferenceQuotaClaimed = z.object({
  type: z.literal('PreferenceQuotaClaimed'),
  data: z.object({
    key: z.string(),
    revision: z.number().int().min(0),
    bytes: z.number().int().min(0),
    before: z.object({ revision: z.number().int().min(-1), bytes: z.number().int().min(0) }),
    claimedAt: z.number().int(),
  }),
});

export const PreferenceQuotaEvent = z.discriminatedUnion('type', [PreferenceQuotaClaimed]);
export type PreferenceQuotaEvent = z.infer<typeof PreferenceQuotaEvent>;

/** The topic of preference changes, for live sync and the data-management consumers (the AsyncAPI document). */
export const PREFERENCES_CHANGES_TOPIC = 'user-data.preferences.v1';

/**
 * Integration event published on topic `user-data.preferences.v1` (key: user id). No key and no document: a key is
 * a name the user chose. `revision` is the key's stream revision; `position` the event's store position (decimal),
 * the order of all of a user's preference changes (one stream per key has no order of its own across keys).
 */
export const PreferencesChangedMessage = z.object({
  userId: z.string(),
  type: z.enum(['PreferenceWritten', 'PreferenceDeleted']),
  revision: z.number().int(),
  position: z.string().regex(/^[0-9]{1,40}$/),
  occurredAt: z.number().int(),
});
export type PreferencesChangedMessage = z.infer<typeof PreferencesChangedMessage>;
