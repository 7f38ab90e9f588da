import type { QcItemDefinition } from '@udp/contracts';
import { DomainError } from '@udp/eventsourcing';
import { DeciderSpecification } from '@udp/test-kit';
import { type ItemCommand, itemDecider } from './decider';
import type { ItemEvent } from './aggregate';
import { compareVersions, fingerprint } from './rules';
import { T0 as now, checkResult, qcItem as item } from '../testing/catalogue';

const spec = DeciderSpecification(itemDecider);
const publish = (i: QcItemDefinition): ItemCommand => ({ type: 'PublishItemVersion', data: { item: i }, metadata: { now } });
const published = (i: QcItemDefinition, at = now): ItemEvent => ({ type: 'ItemVersionPublished', data: { item: i, publishedAt: at } });
const kind = (k: DomainError['kind'], text: RegExp) => (e: unknown) => e instanceof DomainError && e.kind === k && text.test(e.message);

describe('item decider', () => {
  describe('when the item has no published version', () => {
    it('publishes the version', () =>
      spec
        .given([])
        .when(publish(item()))
        .then([published(item())]));

    it('refuses an item usable as a check without a boolean CheckResult', () => {
      spec
        .given([])
        .when(publish(item({ OutputParameters: [] })))
        .thenThrows(kind('Invalid', /no CheckResult output/));
      spec
        .given([])
        .when(publish(item({ OutputParameters: [{ ...checkResult, Type: 'string' }] })))
        .thenThrows(kind('Invalid', /CheckResult is of type string/));
    });

    it('publishes a report-only item without CheckResult', () =>
      spec
        .given([])
        .when(publish(item({ UsableAs: ['report'], OutputParameters: [] })))
        .then([published(item({ UsableAs: ['report'], OutputParameters: [] }))]));

    it('refuses a layer that contradicts the ID suffix', () =>
      spec
        .given([])
        .when(publish(item({ Layer: 'bitstream' })))
        .thenThrows(kind('Invalid', /does not match the ID suffix W/)));

    it('refuses a crosscheck item that takes no value of the F and W items', () => {
      const x = item({
        ID: '0045X',
        Layer: 'crosscheck',
        InputParameters: [{ ...checkResult, Name: '0045F-GOPStatus', InChecks: 'required', Type: 'string' }],
      });
      spec
        .given([])
        .when(publish(x))
        .thenThrows(kind('Invalid', /takes no value of item 0045W/));
    });

    it('refuses malformed ids, versions and parameter names', () => {
      spec
        .given([])
        .when(publish(item({ ID: '42W' })))
        .thenThrows(kind('Invalid', /ID 42W/));
      spec
        .given([])
        .when(publish(item({ Version: '4' })))
        .thenThrows(kind('Invalid', /Version 4 /));
      spec
        .given([])
        .when(publish(item({ InputParameters: [{ ...checkResult, Name: 'Frame Rate' }] })))
        .thenThrows(kind('Invalid', /"Frame Rate"/));
    });
  });

  describe('when a version is published', () => {
    const past = [published(item())];

    it('publishing the same content again changes nothing (imports are idempotent)', () =>
      spec.given(past).when(publish(item())).thenNothingHappens());

    it('sees the same content in another key order as the same', () => {
      const reordered = Object.fromEntries(Object.entries(item()).reverse()) as QcItemDefinition;
      spec.given(past).when(publish(reordered)).thenNothingHappens();
    });

    it('refuses other content under the published version: versions are immutable', () =>
      spec
        .given(past)
        .when(publish(item({ Name: 'Frame Rate' })))
        .thenThrows(kind('Conflict', /published with other content/)));

    it('publishes a new version next to it', () =>
      spec
        .given(past)
        .when(publish(item({ Version: '4.1', Name: 'Frame Rate' })))
        .then([published(item({ Version: '4.1', Name: 'Frame Rate' }))]));

    it('refuses another item in this stream', () =>
      spec
        .given(past)
        .when(publish(item({ ID: '0043W', Version: '1.0' })))
        .thenThrows(kind('Invalid', /holds item 0042W/)));
  });
});

describe('rules', () => {
  it('orders versions numerically', () => {
    expect(['10.0', '2.0', '2.0.1', '9.12'].sort(compareVersions)).toEqual(['2.0', '2.0.1', '9.12', '10.0']);
  });

  it('fingerprints ignore key order only', () => {
    expect(fingerprint({ a: 1, b: [{ c: 2, d: 3 }] })).toBe(fingerprint({ b: [{ d: 3, c: 2 }], a: 1 }));
    expect(fingerprint({ a: [1, 2] })).not.toBe(fingerprint({ a: [2, 1] }));
  });
});
