import { preferenceErasureSuite } from './erasure.scenario';

preferenceErasureSuite('memory read models, in-process bus', async () => ({}));
