// fp_id: the identifier of a browser, derived from its stable components. Pure.
//
//   fp_id = "fp_" + base62(first 16 bytes of HMAC-SHA256(key, message)), 22 characters
//   key     = the install secret (meta.install_secret, 32 random bytes made on first start)
//   message = "fp1" NUL tenant_id NUL canonical(stable components)
//
// The install secret makes fp_ids impossible to recompute from components without this database,
// and the tenant id makes the same browser a different fp_id in each tenant, so two tenants of one
// installation cannot match their users through it. Tenant ids never hold NUL, so the framing is
// unambiguous. "fp1" versions the encoding: changing it changes every fp_id, so it is never done
// silently.
//
// The canonical form is JSON of an array, one entry per stable component in table order
// (components.ts), each reduced to what identifies the device:
//   - objects become arrays in a fixed field order (no dependence on key order in the body);
//   - fonts are sorted: the agent reports a set, and the order it finds fonts in is not a property
//     of the device;
//   - screen width and height are ordered (smaller first): a phone or tablet turned on its side
//     swaps them and is still the same device;
//   - languages keep their order: it is the user's order of preference.
// JSON.stringify writes numbers and strings one way only, so equal components give equal bytes.
import { createHmac } from 'node:crypto';
import type { Components, kComponents } from './components.js';

type StableName = Extract<(typeof kComponents)[number], { stability: 'stable' }>['name'];

/** One reducer per stable component; the mapped type makes a missing one a compile error. */
const kCanonical: { readonly [K in StableName]: (value: Components[K]) => unknown } = {
  canvas: (canvas) => canvas,
  webgl: (webgl) => (webgl === null ? null : [webgl.vendor, webgl.renderer]),
  screen: (screen) => [Math.min(screen.width, screen.height), Math.max(screen.width, screen.height), screen.color_depth],
  timezone: (timezone) => timezone,
  languages: (languages) => languages,
  platform: (platform) => platform,
  vendor: (vendor) => vendor,
  hardware_concurrency: (count) => count,
  device_memory: (memory) => memory,
  fonts: (fonts) => [...fonts].sort(),
  touch: (touch) => [touch.max_touch_points, touch.touch_event],
};
const kStableOrder = Object.keys(kCanonical) as StableName[];

const kEncodingVersion = 'fp1';
const kIdBytes = 16; // 128 bits: collisions between distinct devices are out of reach
const kIdLength = 22; // ceil(128 / log2(62))
const kBase62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const kFpIdPattern = /^fp_[0-9A-Za-z]{22}$/;

/** The canonical encoding of the stable components (volatile ones are not read). */
export function canonicalEncoding(components: Components): string {
  return JSON.stringify(kStableOrder.map((name) => (kCanonical[name] as (value: unknown) => unknown)(components[name])));
}

export function deriveFpId(installSecret: Buffer, tenantId: string, components: Components): string {
  const mac = createHmac('sha256', installSecret)
    .update(`${kEncodingVersion}\u0000${tenantId}\u0000`)
    .update(canonicalEncoding(components))
    .digest();
  return `fp_${toBase62(mac.subarray(0, kIdBytes), kIdLength)}`;
}

/** Fixed-width base62 of an unsigned big-endian number, padded with '0'. */
export function toBase62(bytes: Uint8Array, width: number): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  for (let i = 0; i < width; i++) {
    out = kBase62[Number(value % 62n)]! + out;
    value /= 62n;
  }
  if (value !== 0n) throw new RangeError(`${bytes.length} bytes do not fit in ${width} base62 digits`);
  return out;
}
