// The components the browser agent (agent.js) gathers, in one table: the JSON schema of each, and
// whether it is stable (part of the fp_id) or volatile (checked, then left out of it). The request
// schema (collect-schema.ts), the canonical encoding (fp-id.ts) and docs/fingerprint.md all follow
// this table; test/fingerprint/components.test.ts checks that the docs list every row as it is here.
//
// Stable means "the same on every visit of the same browser on the same device": hardware, the
// installed fonts, the user's language and time-zone settings. Volatile means it changes between
// two visits of that browser without the device changing: clocks, window size and zoom, battery,
// network, and the user agent string (which changes with every browser update). Pure: no I/O.

export type Stability = 'stable' | 'volatile';

export interface ComponentDefinition {
  readonly name: string;
  readonly stability: Stability;
  /** JSON schema of the value (draft-07, as ajv compiles it). */
  readonly schema: Readonly<Record<string, unknown>>;
}

// Bounds are generous for real browsers and small enough that a forged body cannot make one
// component large: the whole body is capped at 64 KiB anyway (kFingerprintBodyLimit).
const kPixels = { type: 'integer', minimum: 0, maximum: 100_000 } as const;
const kText = (maxLength: number) => ({ type: 'string', maxLength }) as const;

/** The base-36 form of the agent's 53-bit canvas hash: at most 11 characters. */
export const kCanvasHashPattern = '^[0-9a-z]{1,11}$';

export const kComponents = [
  // ---- stable: the fp_id is derived from these, in this order --------------------------------
  {
    name: 'canvas',
    stability: 'stable',
    // null when the browser has no 2D canvas or randomises its pixels (the agent draws twice and
    // compares), because a randomised hash would give a new fp_id on every visit.
    schema: { type: ['string', 'null'], pattern: kCanvasHashPattern },
  },
  {
    name: 'webgl',
    stability: 'stable',
    schema: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['vendor', 'renderer'],
      properties: { vendor: kText(256), renderer: kText(512) },
    },
  },
  {
    name: 'screen',
    stability: 'stable',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['width', 'height', 'color_depth'],
      properties: { width: kPixels, height: kPixels, color_depth: { type: 'integer', minimum: 0, maximum: 64 } },
    },
  },
  { name: 'timezone', stability: 'stable', schema: { type: ['string', 'null'], minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_+/-]+$' } },
  {
    name: 'languages',
    stability: 'stable',
    schema: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' } },
  },
  { name: 'platform', stability: 'stable', schema: kText(128) },
  { name: 'vendor', stability: 'stable', schema: kText(128) },
  { name: 'hardware_concurrency', stability: 'stable', schema: { type: ['integer', 'null'], minimum: 1, maximum: 4096 } },
  { name: 'device_memory', stability: 'stable', schema: { type: ['number', 'null'], exclusiveMinimum: 0, maximum: 4096 } },
  {
    name: 'fonts',
    stability: 'stable',
    schema: { type: 'array', maxItems: 256, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 64 } },
  },
  {
    name: 'touch',
    stability: 'stable',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['max_touch_points', 'touch_event'],
      properties: { max_touch_points: { type: 'integer', minimum: 0, maximum: 1024 }, touch_event: { type: 'boolean' } },
    },
  },
  // ---- volatile: validated, never part of the fp_id, not stored ---------------------------------
  { name: 'timezone_offset', stability: 'volatile', schema: { type: 'integer', minimum: -1440, maximum: 1440 } },
  {
    name: 'window',
    stability: 'volatile',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        inner_width: kPixels,
        inner_height: kPixels,
        outer_width: kPixels,
        outer_height: kPixels,
        device_pixel_ratio: { type: 'number', exclusiveMinimum: 0, maximum: 64 },
      },
    },
  },
  {
    name: 'battery',
    stability: 'volatile',
    schema: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['level', 'charging'],
      properties: { level: { type: 'number', minimum: 0, maximum: 1 }, charging: { type: 'boolean' } },
    },
  },
  {
    name: 'network',
    stability: 'volatile',
    schema: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: {
        effective_type: { type: 'string', enum: ['slow-2g', '2g', '3g', '4g'] },
        downlink: { type: ['number', 'null'], minimum: 0, maximum: 100_000 },
        rtt: { type: ['integer', 'null'], minimum: 0, maximum: 600_000 },
        save_data: { type: ['boolean', 'null'] },
      },
    },
  },
  { name: 'user_agent', stability: 'volatile', schema: kText(1024) },
  { name: 'collected_at', stability: 'volatile', schema: { type: 'string', maxLength: 64, format: 'date-time' } },
] as const satisfies readonly ComponentDefinition[];

export type ComponentName = (typeof kComponents)[number]['name'];

/** The components as they arrive, after the schema accepted them. */
export interface Components {
  readonly canvas: string | null;
  readonly webgl: { readonly vendor: string; readonly renderer: string } | null;
  readonly screen: { readonly width: number; readonly height: number; readonly color_depth: number };
  readonly timezone: string | null;
  readonly languages: readonly string[];
  readonly platform: string;
  readonly vendor: string;
  readonly hardware_concurrency: number | null;
  readonly device_memory: number | null;
  readonly fonts: readonly string[];
  readonly touch: { readonly max_touch_points: number; readonly touch_event: boolean };
  readonly timezone_offset?: number;
  readonly window?: Readonly<Record<string, number>>;
  readonly battery?: { readonly level: number; readonly charging: boolean } | null;
  readonly network?: Readonly<Record<string, string | number | boolean | null>> | null;
  readonly user_agent?: string;
  readonly collected_at?: string;
}

/** Every stable component is required (null where a browser may lack it); volatile ones are optional. */
export const kStableComponentNames: readonly ComponentName[] = kComponents
  .filter((component) => component.stability === 'stable')
  .map((component) => component.name);
