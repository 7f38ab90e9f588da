import { MemoryReadModelStore } from './memory';
import { readModelContract } from './readmodel.contract';

const shared = new MemoryReadModelStore();
readModelContract('memory', async () => shared);
