import type { QcItemDefinition } from '@udp/contracts';
import { startTestSystem, type TestSystem } from '@udp/test-system';
import { createCatalogueService } from '../app';

/** Catalogue fixtures for the specs: a valid QC item, and the service behind the gateway on memory adapters. */
export const T0 = 1_700_000_000_000;

export const checkResult = {
  Name: 'CheckResult',
  Description: 'pass or fail',
  HasLocator: false,
  InReports: 'not applicable',
  InChecks: 'required',
  Type: 'boolean',
} as const;

/** A publishable item definition (0042W 4.0), with `overrides`. */
export const qcItem = (overrides: Partial<QcItemDefinition> = {}): QcItemDefinition => ({
  ID: '0042W',
  Name: 'Video Frame Rate',
  Version: '4.0',
  Status: 'published',
  UsableAs: ['check', 'report'],
  Definition: 'Reads the frame rate.',
  Layer: 'wrapper',
  Category: 'absolute',
  EssenceType: 'format',
  Aliases: [],
  Tags: ['video MXF'],
  References: [],
  TextExamples: [],
  InputParameters: [],
  OutputParameters: [checkResult],
  Source: 'https://ebu.io/qc/items/0042W',
  Completed: ['Layer'],
  ...overrides,
});

/** The public catalogue API (items and icons) behind the gateway, with the items of data/items.json. */
export function startCatalogueSystem(): Promise<TestSystem> {
  return startTestSystem([
    {
      prefixes: ['/api/v2/items', '/api/v2/icons'],
      public: true,
      create: (deps) => createCatalogueService({ ...deps, now: () => T0 }),
    },
  ]);
}
