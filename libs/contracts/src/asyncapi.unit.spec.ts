import { DiagnosticSeverity, Parser } from '@asyncapi/parser';
import { ASYNCAPI_TOPICS, buildAsyncApiDocument } from './asyncapi';
import * as erasure from './events/erasure';
import * as exports from './events/export';
import * as history from './events/history';
import * as playlists from './events/playlists';
import * as preferences from './events/preference';
import * as profile from './events/profile';

/** The errors the maintained AsyncAPI parser finds in a document (warnings and hints are not errors). */
async function errorsOf(document: unknown) {
  const { diagnostics, document: parsed } = await new Parser().parse(JSON.stringify(document));
  return {
    parsed,
    errors: diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => `${d.path.join('.')}: ${d.message}`),
  };
}

describe('AsyncAPI document', () => {
  it('is a valid AsyncAPI 3 document', async () => {
    const { parsed, errors } = await errorsOf(buildAsyncApiDocument());
    expect(errors).toEqual([]);
    expect(parsed?.version()).toBe('3.0.0');
  }, 30_000);

  it('documents every topic the system publishes or consumes, each with a payload schema from its zod contract', async () => {
    const { parsed } = await errorsOf(buildAsyncApiDocument());
    const addresses = parsed!
      .channels()
      .all()
      .map((c) => c.address());
    const topics = [
      history.HISTORY_CHANGES_TOPIC,
      playlists.PLAYLISTS_CHANGES_TOPIC,
      preferences.PREFERENCES_CHANGES_TOPIC,
      profile.PROFILE_CHANGES_TOPIC,
      ...Object.values(erasure.ERASURE_TOPICS),
      ...Object.values(exports.EXPORT_TOPICS),
    ];
    expect([...addresses].sort()).toEqual([...topics].sort());
    for (const channel of parsed!.channels().all()) {
      const [message] = channel.messages().all();
      const payload = message.payload()!.json() as { type: string; required: string[]; properties: Record<string, unknown> };
      expect([channel.address(), payload.type]).toEqual([channel.address(), 'object']);
      expect(payload.required).toContain('userId');
      // Generated, not written by hand: the schema names exactly the contract's fields.
      const entry = ASYNCAPI_TOPICS.find((t) => t.address === channel.address())!;
      expect(Object.keys(payload.properties).sort()).toEqual(
        Object.keys((entry.message.schema as unknown as { shape: object }).shape).sort(),
      );
    }
    const erasureRequested = parsed!
      .operations()
      .all()
      .filter((o) => o.channels().all()[0]?.address() === erasure.ERASURE_TOPICS.requested);
    // Each participant, and the gateway (it ends the user's live-sync streams).
    expect(erasureRequested.filter((o) => o.action() === 'receive')).toHaveLength(erasure.DEFAULT_ERASURE_PARTICIPANTS.length + 1);
  }, 30_000);

  it('would be refused by the parser if it were broken (the check above can fail)', async () => {
    const document = buildAsyncApiDocument() as {
      operations: Record<string, { action: string; channel: { $ref: string } }>;
      channels: Record<string, unknown>;
    };
    const [first] = Object.values(document.operations);
    first.action = 'publish'; // an AsyncAPI 2 verb
    expect((await errorsOf(document)).errors.length).toBeGreaterThan(0);
    const dangling = buildAsyncApiDocument() as typeof document;
    delete dangling.channels.erasureConfirmed;
    expect((await errorsOf(dangling)).errors.length).toBeGreaterThan(0);
  }, 30_000);
});
