import { busContract } from './bus.contract';
import { InProcessBus } from './in-process';

busContract('in-process', async () => new InProcessBus(5));
