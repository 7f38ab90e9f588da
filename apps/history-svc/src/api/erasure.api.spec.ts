import { historyErasureSuite } from './erasure.scenario';

historyErasureSuite('memory read models, in-process bus', async () => ({}));
