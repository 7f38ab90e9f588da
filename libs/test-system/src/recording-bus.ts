import { type BusMessage, InProcessBus } from '@udp/bus';

/** The in-process bus, remembering every message published (in order, with its topic) for specs to read. */
export class RecordingBus extends InProcessBus {
  readonly published: Array<BusMessage & { topic: string }> = [];

  override async publish(topic: string, messages: BusMessage[]): Promise<void> {
    for (const message of messages) this.published.push({ topic, ...message });
    await super.publish(topic, messages);
  }
}
