import { playlistErasureSuite } from './erasure.scenario';

playlistErasureSuite('memory read models, in-process bus', async () => ({}));
