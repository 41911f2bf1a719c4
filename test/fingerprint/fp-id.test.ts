// fp_id derivation: stable for equal stable components, blind to volatile ones, different across
// tenants and installations, and pinned so that no change to the encoding goes unnoticed (it would
// give every browser of every installation a new fp_id and break existing links).
import test from 'ava';
import { kComponents, kStableComponentNames, type Components } from '../../src/fingerprint/components.js';
import { canonicalEncoding, deriveFpId, kFpIdPattern, toBase62 } from '../../src/fingerprint/fp-id.js';
import { components, type SampleComponents } from '../_helpers/fingerprint.js';

const kSecret = Buffer.alloc(32, 7);
const kTenant = 'ten_AAAAAAAAAAAAAAAAAAAA';

function fpId(change?: (c: SampleComponents) => void, tenant = kTenant, secret = kSecret): string {
  return deriveFpId(secret, tenant, components(change) as unknown as Components);
}

test('the same components give the same fp_id, in the fp_ form', (t) => {
  t.regex(fpId(), kFpIdPattern);
  t.is(fpId(), fpId());
});

// The expected id was computed apart from this code (Python hmac over the same message).
test('pinned: the encoding and derivation of fp1 do not change', (t) => {
  t.is(
    canonicalEncoding(components() as unknown as Components),
    '["2k3x9c0q1mz",["Google Inc. (Intel)","ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)"],' +
      '[1080,1920,24],"Europe/Berlin",["de-DE","de","en-US","en"],"Linux x86_64","Google Inc.",8,8,' +
      '["Arial","DejaVu Sans","Liberation Mono","Noto Color Emoji","Ubuntu"],[0,false]]',
  );
  t.is(fpId(), 'fp_5mazEajOz5OFrYNp4UOLqP');
});

const kVolatileChanges: Record<string, (c: SampleComponents) => void> = {
  timezone_offset: (c) => (c.timezone_offset = -120),
  window: (c) => (c.window = { inner_width: 640, inner_height: 480, outer_width: 700, outer_height: 500, device_pixel_ratio: 1.25 }),
  battery: (c) => (c.battery = null),
  network: (c) => (c.network = { effective_type: '3g', downlink: 1.5, rtt: 300, save_data: true }),
  user_agent: (c) => (c.user_agent = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/127.0.0.0'),
  collected_at: (c) => (c.collected_at = '2025-01-01T00:00:00Z'),
};

test('every volatile component is covered here', (t) => {
  const volatile = kComponents.filter((c) => c.stability === 'volatile').map((c) => c.name);
  t.deepEqual(Object.keys(kVolatileChanges).sort(), [...volatile].sort());
});

for (const [name, change] of Object.entries(kVolatileChanges)) {
  test(`changing volatile ${name} keeps the fp_id`, (t) => {
    t.is(fpId(change), fpId());
    t.is(fpId((c) => delete c[name]), fpId());
  });
}

const kStableChanges: Record<string, (c: SampleComponents) => void> = {
  canvas: (c) => (c.canvas = 'zz9'),
  webgl: (c) => (c.webgl = null),
  screen: (c) => (c.screen = { width: 2560, height: 1440, color_depth: 24 }),
  timezone: (c) => (c.timezone = 'Europe/Paris'),
  languages: (c) => (c.languages = ['en-US', 'en', 'de-DE', 'de']),
  platform: (c) => (c.platform = 'Win32'),
  vendor: (c) => (c.vendor = ''),
  hardware_concurrency: (c) => (c.hardware_concurrency = 4),
  device_memory: (c) => (c.device_memory = null),
  fonts: (c) => (c.fonts = ['Arial']),
  touch: (c) => (c.touch = { max_touch_points: 5, touch_event: true }),
};

test('every stable component is covered here', (t) => {
  t.deepEqual(Object.keys(kStableChanges).sort(), [...kStableComponentNames].sort());
});

for (const [name, change] of Object.entries(kStableChanges)) {
  test(`changing stable ${name} changes the fp_id`, (t) => {
    t.not(fpId(change), fpId());
  });
}

test('a null is not confused with an empty value', (t) => {
  t.not(fpId((c) => (c.timezone = null)), fpId((c) => (c.timezone = 'null')));
  t.not(fpId((c) => (c.vendor = '')), fpId((c) => (c.vendor = '""')));
});

test('field order in the body does not matter', (t) => {
  const reordered = fpId((c) => {
    c.screen = { color_depth: 24, height: 1080, width: 1920 };
    c.touch = { touch_event: false, max_touch_points: 0 };
  });
  t.is(reordered, fpId());
});

test('font order does not matter; language order does (it is the preference order)', (t) => {
  t.is(fpId((c) => (c.fonts = [...(c.fonts as string[])].reverse())), fpId());
  t.not(fpId((c) => (c.languages = [...(c.languages as string[])].reverse())), fpId());
});

test('a screen turned on its side is the same device', (t) => {
  t.is(fpId((c) => (c.screen = { width: 1080, height: 1920, color_depth: 24 })), fpId());
});

test('another tenant or another installation gives another fp_id', (t) => {
  t.not(fpId(undefined, 'ten_BBBBBBBBBBBBBBBBBBBB'), fpId());
  t.not(fpId(undefined, kTenant, Buffer.alloc(32, 8)), fpId());
});

test('toBase62 is fixed-width and refuses numbers that do not fit', (t) => {
  t.is(toBase62(new Uint8Array(16), 22), '0'.repeat(22));
  t.is(toBase62(Uint8Array.of(61), 2), '0z');
  t.is(toBase62(Uint8Array.of(62), 2), '10');
  const max = toBase62(new Uint8Array(16).fill(0xff), 22);
  t.is(max.length, 22);
  const decoded = [...max].reduce((n, ch) => n * 62n + BigInt('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.indexOf(ch)), 0n);
  t.is(decoded, 2n ** 128n - 1n);
  t.throws(() => toBase62(Uint8Array.of(1, 0), 1), { instanceOf: RangeError });
});
