// Cards are linked by BIN plus last four digits (interface, "Rules on the input" 3); the card
// token counts only for velocity. Pure.

export function cardKey(bin: string, last4: string): string {
  return `${bin}:${last4}`;
}

/** "411111" + "1111" → "411111******1111": a 16-digit shape with the middle hidden. */
export function maskCard(bin: string, last4: string): string {
  return `${bin}${'*'.repeat(Math.max(2, 16 - bin.length - last4.length))}${last4}`;
}
