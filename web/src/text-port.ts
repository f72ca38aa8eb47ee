/**
 * A report page's embedded text (base64 parts), sent over a MessagePort from the page, which
 * reads the parts as the browser's parser reaches them (embedded-data.ts), to whichever worker
 * decodes it: the engine hands the port on to its inflater, so the parts go straight there
 * rather than through the engine's thread (a stream moved twice is relayed by the thread between).
 *
 * To the page: `{ more: n }` (n more parts wanted). From it: `{ part }`, then `{ end: true }`, or `{ error }`.
 */
export type TextAsk = { more: number };
export type TextReply = { part: string } | { end: true } | { error: string };

/** The port's parts as a stream, each asked for as the reader takes one (the page never runs far ahead). */
export function portText(port: MessagePort): ReadableStream<string> {
  let arrived: (() => void) | undefined;
  return new ReadableStream<string>({
    start(controller) {
      port.onmessage = (e: MessageEvent<TextReply>) => {
        const m = e.data;
        if ('part' in m) controller.enqueue(m.part);
        else {
          port.close();
          if ('end' in m) controller.close();
          else controller.error(new Error(m.error));
        }
        arrived?.();
      };
    },
    pull() {
      port.postMessage({ more: 1 } satisfies TextAsk);
      return new Promise<void>((resolve) => {
        arrived = resolve;
      });
    },
    cancel() {
      port.close();
    },
  });
}

/** The page's end: sends the parts `next()` gives (undefined: no more) as they are asked for. */
export function servePort(next: () => Promise<string | undefined>): MessagePort {
  const { port1, port2 } = new MessageChannel();
  let wanted = 0;
  let sending = false;
  let ended = false;
  const reply = (m: TextReply) => port1.postMessage(m);
  port1.onmessage = async (e: MessageEvent<TextAsk>) => {
    wanted += e.data.more;
    if (sending) return;
    sending = true;
    try {
      while (wanted > 0 && !ended) {
        const part = await next();
        if (part === undefined) {
          ended = true;
          reply({ end: true });
        } else {
          wanted--;
          reply({ part });
        }
      }
    } catch (err) {
      ended = true;
      reply({ error: (err as Error).message });
    } finally {
      sending = false;
    }
  };
  return port2;
}
