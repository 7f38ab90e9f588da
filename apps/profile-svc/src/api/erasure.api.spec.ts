import { profileErasureSuite } from './erasure.scenario';

profileErasureSuite('memory read models, in-process bus', async () => ({}));
