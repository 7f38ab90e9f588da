import { eventStoreContract } from './eventstore.contract';
import { MemoryEventStore } from './memory';

eventStoreContract('memory', async () => new MemoryEventStore());
