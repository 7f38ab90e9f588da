import { QcItemDefinition, z } from '@udp/contracts';
import { type CommandHandler, DomainError, type Unstamped, currentState } from '@udp/eventsourcing';
import type { EventStore } from '@udp/eventstore';
import { validateAgainstCatalogueSchema } from '@udp/qc-schema';
import type { ItemCommand, ItemState } from '../domain/decider';
import { type ItemEvent, itemAggregate } from '../domain/aggregate';
import { itemInfoXml } from '../projections/renditions';

export interface ImportSummary {
  published: string[];
  unchanged: string[];
  refused: Array<{ item: string; reason: string }>;
}

const label = (item: QcItemDefinition) => `${item.ID}@${item.Version}`;

/** Reads and checks a catalogue data file; a malformed file is a programming error and stops the import. */
export function parseCatalogueData(data: unknown): QcItemDefinition[] {
  return z.array(QcItemDefinition).parse(data);
}

/**
 * The import command: publishes every item version of `items` that is not published yet, in order.
 * Each candidate is first serialized and validated against the official schema (one validator run for all),
 * then its `ItemVersionPublished` event is appended through the decider, which refuses what breaks the
 * catalogue rules or would change a published version. Running it again on the same data appends nothing.
 */
export async function importCatalogue(
  { store, handle, now }: { store: EventStore; handle: CommandHandler<ItemCommand, ItemEvent, ItemState, string>; now: () => number },
  items: QcItemDefinition[],
): Promise<ImportSummary> {
  const summary: ImportSummary = { published: [], unchanged: [], refused: [] };
  const command = (item: QcItemDefinition): Unstamped<ItemCommand> => ({ type: 'PublishItemVersion', data: { item } });

  // Dry run on the current state: which versions would be published, which are refused by the rules.
  const candidates: QcItemDefinition[] = [];
  const pending = new Set<string>();
  for (const item of items) {
    try {
      const state = await currentState(itemAggregate, store, item.ID);
      const events = pending.has(label(item)) ? [] : itemAggregate.decider.decide({ ...command(item), metadata: { now: now() } }, state);
      if (events.length) {
        candidates.push(item);
        pending.add(label(item));
      } else summary.unchanged.push(label(item));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      summary.refused.push({ item: label(item), reason: error.message });
    }
  }

  const validation = await validateAgainstCatalogueSchema(
    candidates.map((item, i) => ({ fileName: `candidate-${i}.xml`, xml: itemInfoXml({ item, versions: [item.Version] }) })),
  );
  const invalid = new Map<number, string[]>();
  for (const error of validation.errors) {
    const index = Number(/^candidate-(\d+)\.xml$/.exec(error.fileName ?? '')?.[1] ?? -1);
    invalid.set(index, [...(invalid.get(index) ?? []), `${error.line === null ? '' : `line ${error.line}: `}${error.message}`]);
  }
  if (invalid.has(-1)) throw new Error(`schema validation failed: ${invalid.get(-1)!.join('; ')}`);

  for (const [i, item] of candidates.entries()) {
    const errors = invalid.get(i);
    if (errors) {
      summary.refused.push({ item: label(item), reason: `not valid against the catalogue schema: ${errors.join('; ')}` });
      continue;
    }
    try {
      const { newEvents } = await handle(item.ID, command(item));
      (newEvents.length ? summary.published : summary.unchanged).push(label(item));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      summary.refused.push({ item: label(item), reason: error.message });
    }
  }
  return summary;
}
