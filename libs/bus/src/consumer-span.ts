import { type Attributes, type Context, type Tracer, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { MessageHandler, ReceivedMessage } from './port';

/**
 * Hands a message over in a CONSUMER span (`process <topic>`) that continues the publisher's trace (its W3C context in
 * the headers, extracted over `base`), as the kafkajs instrumentation does for the consumers it wraps: the span ends
 * with the handler, marked an error when it throws. `attributes`: the messaging system's and the group's.
 */
export async function inConsumerSpan(
  tracer: Tracer,
  base: Context,
  message: ReceivedMessage,
  attributes: Attributes,
  handler: MessageHandler,
): Promise<void> {
  const parent = propagation.extract(base, message.headers);
  const span = tracer.startSpan(
    `process ${message.topic}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        ...attributes,
        'messaging.destination.name': message.topic,
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
      },
    },
    parent,
  );
  try {
    await context.with(trace.setSpan(parent, span), () => handler(message));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}
