/** The layer icons the item cards point to (Card/Icon and Card/FullImage): one scalable SVG per layer. */
const LAYER_ICONS: Record<string, { letter: string; colour: string }> = {
  bitstream: { letter: 'F', colour: '#1f6feb' },
  wrapper: { letter: 'W', colour: '#8250df' },
  crosscheck: { letter: 'X', colour: '#bf8700' },
  baseband: { letter: 'B', colour: '#1a7f37' },
};

export const ICON_NAMES = Object.keys(LAYER_ICONS);

export function layerIcon(layer: string): string | null {
  const icon = LAYER_ICONS[layer];
  if (!icon) return null;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img" aria-label="${layer}">` +
    `<rect width="64" height="64" rx="12" fill="${icon.colour}"/>` +
    `<text x="32" y="44" font-family="sans-serif" font-size="34" font-weight="bold" fill="#fff" text-anchor="middle">${icon.letter}</text></svg>`
  );
}
