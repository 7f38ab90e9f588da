import { EXPORT_FILE_NAME_MAX } from '@udp/contracts';

/**
 * Bidirectional controls (ALM, LRM, RLM, embeddings, overrides, isolates): a right-to-left override makes
 * `invoice<U+202E>piz.exe` look like `invoiceexe.zip`, so a name could show another extension than it has.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The name a download is saved under: the last path part only (no directories, no `..`), without control
 * characters, bidirectional controls, quotes or backslashes, at most EXPORT_FILE_NAME_MAX characters, ending in `.zip`. Null when
 * nothing usable is left.
 */
export function sanitiseFileName(given: string): string | null {
  const lastPart = given.split(/[/\\]/).pop() ?? '';
  let name = lastPart
    .replace(/[\u0000-\u001f\u007f-\u009f"]/g, '')
    .replace(BIDI_CONTROLS, '')
    .replace(/\s+/g, ' ')
    .trim();
  name = name.replace(/^\.+/, '');
  if (!name) return null;
  if (!/\.zip$/i.test(name)) name = `${name}.zip`;
  if (name.length > EXPORT_FILE_NAME_MAX) name = `${name.slice(0, EXPORT_FILE_NAME_MAX - 4)}.zip`;
  return name;
}

export const defaultFileName = (requestedAt: number) => `user-data-export-${new Date(requestedAt).toISOString().slice(0, 10)}.zip`;
