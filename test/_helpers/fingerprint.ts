// Fingerprint bodies shared by the unit tests of the collect schema and the HTTP tests of
// POST /v1/fp/collect: one valid set of components, and every way the schema refuses a body, with
// the `parameter` the 400 must name.
import { runCli } from './server.js';

/** What agent.js sends from Chromium on a Linux desktop. */
export const kSampleComponents = {
  canvas: '2k3x9c0q1mz',
  webgl: { vendor: 'Google Inc. (Intel)', renderer: 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)' },
  screen: { width: 1920, height: 1080, color_depth: 24 },
  timezone: 'Europe/Berlin',
  languages: ['de-DE', 'de', 'en-US', 'en'],
  platform: 'Linux x86_64',
  vendor: 'Google Inc.',
  hardware_concurrency: 8,
  device_memory: 8,
  fonts: ['Arial', 'DejaVu Sans', 'Liberation Mono', 'Noto Color Emoji', 'Ubuntu'],
  touch: { max_touch_points: 0, touch_event: false },
  timezone_offset: -60,
  window: { inner_width: 1280, inner_height: 720, outer_width: 1280, outer_height: 800, device_pixel_ratio: 1 },
  battery: { level: 0.8, charging: true },
  network: { effective_type: '4g', downlink: 10, rtt: 50, save_data: false },
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  collected_at: '2024-05-01T12:00:00.000Z',
} as const;

export type SampleComponents = Record<string, unknown>;

/** A deep copy of the sample with `change` applied to it. */
export function components(change: (components: SampleComponents) => void = () => {}): SampleComponents {
  const copy = structuredClone(kSampleComponents) as unknown as SampleComponents;
  change(copy);
  return copy;
}

export interface RejectedBody {
  readonly title: string;
  readonly body: unknown;
  readonly parameter: string;
}

/** Bodies the schema refuses with 400 VALIDATION_ERROR, and the field each names. */
export const kRejectedBodies: readonly RejectedBody[] = [
  { title: 'empty object', body: {}, parameter: 'components' },
  { title: 'components is an array', body: { components: [] }, parameter: 'components' },
  { title: 'components is null', body: { components: null }, parameter: 'components' },
  { title: 'unknown top-level field', body: { components: components(), fp_id: 'fp_x' }, parameter: 'fp_id' },
  { title: 'unknown component', body: { components: components((c) => (c.scren = {})) }, parameter: 'components.scren' },
  { title: 'missing stable component', body: { components: components((c) => delete c.screen) }, parameter: 'components.screen' },
  { title: 'missing canvas', body: { components: components((c) => delete c.canvas) }, parameter: 'components.canvas' },
  { title: 'canvas not base36', body: { components: components((c) => (c.canvas = 'ABC')) }, parameter: 'components.canvas' },
  { title: 'canvas too long', body: { components: components((c) => (c.canvas = 'a'.repeat(12))) }, parameter: 'components.canvas' },
  { title: 'canvas is a number', body: { components: components((c) => (c.canvas = 12)) }, parameter: 'components.canvas' },
  { title: 'webgl without renderer', body: { components: components((c) => (c.webgl = { vendor: 'x' })) }, parameter: 'components.webgl.renderer' },
  { title: 'webgl renderer too long', body: { components: components((c) => (c.webgl = { vendor: 'x', renderer: 'r'.repeat(513) })) }, parameter: 'components.webgl.renderer' },
  { title: 'webgl is a string', body: { components: components((c) => (c.webgl = 'Intel')) }, parameter: 'components.webgl' },
  { title: 'screen width is a string', body: { components: components((c) => ((c.screen as SampleComponents).width = '1920')) }, parameter: 'components.screen.width' },
  { title: 'screen width negative', body: { components: components((c) => ((c.screen as SampleComponents).width = -1)) }, parameter: 'components.screen.width' },
  { title: 'screen width fractional', body: { components: components((c) => ((c.screen as SampleComponents).width = 1920.5)) }, parameter: 'components.screen.width' },
  { title: 'screen height too large', body: { components: components((c) => ((c.screen as SampleComponents).height = 100_001)) }, parameter: 'components.screen.height' },
  { title: 'screen unknown field', body: { components: components((c) => ((c.screen as SampleComponents).depth = 1)) }, parameter: 'components.screen.depth' },
  { title: 'screen is null', body: { components: components((c) => (c.screen = null)) }, parameter: 'components.screen' },
  { title: 'timezone empty', body: { components: components((c) => (c.timezone = '')) }, parameter: 'components.timezone' },
  { title: 'timezone with a space', body: { components: components((c) => (c.timezone = 'Europe/Ber lin')) }, parameter: 'components.timezone' },
  { title: 'languages is a string', body: { components: components((c) => (c.languages = 'en-US')) }, parameter: 'components.languages' },
  { title: 'language item not a tag', body: { components: components((c) => (c.languages = ['en-US', 'en US'])) }, parameter: 'components.languages[1]' },
  { title: 'too many languages', body: { components: components((c) => (c.languages = Array.from({ length: 33 }, () => 'en'))) }, parameter: 'components.languages' },
  { title: 'platform is null', body: { components: components((c) => (c.platform = null)) }, parameter: 'components.platform' },
  { title: 'platform too long', body: { components: components((c) => (c.platform = 'p'.repeat(129))) }, parameter: 'components.platform' },
  { title: 'vendor is a number', body: { components: components((c) => (c.vendor = 1)) }, parameter: 'components.vendor' },
  { title: 'hardware_concurrency fractional', body: { components: components((c) => (c.hardware_concurrency = 0.5)) }, parameter: 'components.hardware_concurrency' },
  { title: 'hardware_concurrency zero', body: { components: components((c) => (c.hardware_concurrency = 0)) }, parameter: 'components.hardware_concurrency' },
  { title: 'device_memory zero', body: { components: components((c) => (c.device_memory = 0)) }, parameter: 'components.device_memory' },
  { title: 'device_memory a string', body: { components: components((c) => (c.device_memory = '8')) }, parameter: 'components.device_memory' },
  { title: 'fonts repeated', body: { components: components((c) => (c.fonts = ['Arial', 'Ubuntu', 'Arial'])) }, parameter: 'components.fonts' },
  { title: 'font empty', body: { components: components((c) => (c.fonts = ['Arial', ''])) }, parameter: 'components.fonts[1]' },
  { title: 'font name too long', body: { components: components((c) => (c.fonts = ['f'.repeat(65)])) }, parameter: 'components.fonts[0]' },
  { title: 'too many fonts', body: { components: components((c) => (c.fonts = Array.from({ length: 257 }, (_, i) => `Font ${i}`))) }, parameter: 'components.fonts' },
  { title: 'touch without touch_event', body: { components: components((c) => (c.touch = { max_touch_points: 0 })) }, parameter: 'components.touch.touch_event' },
  { title: 'touch_event a string', body: { components: components((c) => (c.touch = { max_touch_points: 0, touch_event: 'no' })) }, parameter: 'components.touch.touch_event' },
  { title: 'timezone_offset out of range', body: { components: components((c) => (c.timezone_offset = 1441)) }, parameter: 'components.timezone_offset' },
  { title: 'window width a string', body: { components: components((c) => ((c.window as SampleComponents).inner_width = 'wide')) }, parameter: 'components.window.inner_width' },
  { title: 'device_pixel_ratio zero', body: { components: components((c) => ((c.window as SampleComponents).device_pixel_ratio = 0)) }, parameter: 'components.window.device_pixel_ratio' },
  { title: 'battery level above 1', body: { components: components((c) => ((c.battery as SampleComponents).level = 1.5)) }, parameter: 'components.battery.level' },
  { title: 'network type unknown', body: { components: components((c) => ((c.network as SampleComponents).effective_type = '5g')) }, parameter: 'components.network.effective_type' },
  { title: 'network rtt negative', body: { components: components((c) => ((c.network as SampleComponents).rtt = -1)) }, parameter: 'components.network.rtt' },
  { title: 'user_agent too long', body: { components: components((c) => (c.user_agent = 'u'.repeat(1025))) }, parameter: 'components.user_agent' },
  { title: 'collected_at not a date-time', body: { components: components((c) => (c.collected_at = 'yesterday')) }, parameter: 'components.collected_at' },
];

/** `fraud-scorer keys create ... --json` against a data dir; throws with the CLI's stderr on failure. */
export async function createKeyWithCli(dataDir: string, args: readonly string[]): Promise<{ key: string; key_id: string; project_id: string }> {
  const result = await runCli(['keys', 'create', '--data-dir', dataDir, '--json', ...args]);
  if (result.code !== 0) throw new Error(`keys create ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as { key: string; key_id: string; project_id: string };
}
