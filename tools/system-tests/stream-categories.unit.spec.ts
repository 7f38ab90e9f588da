import { itemStreams } from '../../apps/catalogue-svc/src/domain/aggregate';
import { erasureStreams, exportStreams, pendingErasureStreamId } from '../../apps/export-worker/src/domain/aggregate';
import { historyStreams } from '../../apps/history-svc/src/domain/aggregate';
import { playlistsStreams } from '../../apps/playlist-svc/src/domain/aggregate';
import { preferenceStreams } from '../../apps/preference-svc/src/domain/aggregate';
import { profileStreams } from '../../apps/profile-svc/src/domain/aggregate';

describe("the aggregates' stream categories", () => {
  it('no category is a prefix of another, so a subscription by prefix sees one aggregate only', () => {
    const categories = [
      itemStreams.category,
      exportStreams.category,
      erasureStreams.category,
      pendingErasureStreamId(''),
      historyStreams.category,
      playlistsStreams.category,
      preferenceStreams.category,
      profileStreams.category,
    ];
    expect(new Set(categories).size).toBe(categories.length);
    for (const a of categories) for (const b of categories) if (a !== b) expect(b.startsWith(a)).toBe(false);
  });
});
