// The browser agent in a real browser: Debian's Chromium driven by playwright-core. A shop page
// served from one loopback origin loads GET /v1/fp/agent.js from the real server, collects with a
// publishable key bound to that origin, and gets an fp_id; the same browser profile gets the same
// fp_id again; a page on another origin is refused.
//
// The tests are serial and share one browser (one launch for the file) and the state below. The
// last step hands the fp_id to the backend: two accounts scored with that `context.fp_id` are
// linked by signal fp.
//
// Without Chromium the file skips with a warning, unless FRAUD_SCORER_REQUIRE_BROWSER=1 (set by
// .ci/run), where a missing browser fails it.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { kStableComponentNames } from '../../src/fingerprint/components.js';
import { kFpIdPattern } from '../../src/fingerprint/fp-id.js';
import { createKeyWithCli } from '../_helpers/fingerprint.js';
import { startServer, type TestServer } from '../_helpers/server.js';

const kChromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const kBrowserRequired = process.env.FRAUD_SCORER_REQUIRE_BROWSER === '1';
const kChromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const kWaitMs = 15_000;

interface Sighting {
  fp_id: string;
  first_seen: string;
  last_seen: string;
  seen_count: number;
}

/** What the page saw, recorded by its own listeners (see pageHtml). */
interface PageOutcome {
  result?: Sighting;
  error?: { message: string; code: string; status: number };
}

const state = {
  server: null as TestServer | null,
  shop: null as Server | null,
  elsewhere: null as Server | null,
  shopOrigin: '',
  elsewhereOrigin: '',
  publishableKey: '',
  context: null as BrowserContext | null,
  userDataDir: '',
  /** The fp_id of this browser, from the first collection. */
  fpId: '',
};

/**
 * A shop page. `tag`: the agent collects on load from its data-key; `call`: the agent is loaded
 * without a key and the test calls FraudScorer.collect itself. Listeners are registered before
 * the agent loads, as a shop page would.
 */
function pageHtml(mode: 'tag' | 'call' | 'webfonts'): string {
  const server = state.server!;
  const keyAttribute = mode !== 'call' ? ` data-key="${state.publishableKey}"` : '';
  // A page with web fonts under names the agent probes and draws with (a font service's Roboto,
  // a page's own "Arial"), used by the page's text.
  const webFonts = mode !== 'webfonts' ? '' : `<style>
  @font-face { font-family: "Roboto"; src: url(/font.ttf); }
  @font-face { font-family: "Arial"; src: url(/font.ttf); }
  body { font-family: "Roboto", "Arial", sans-serif; }
</style>`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>shop</title>${webFonts}
<script>
  window.__outcome = {};
  document.addEventListener('fraud-scorer:fp', (event) => { window.__outcome.result = event.detail; });
  document.addEventListener('fraud-scorer:fp-error', (event) => { window.__outcome.error = event.detail; });
</script>
<script src="${server.url}/v1/fp/agent.js"${keyAttribute}></script>
</head><body><p>checkout</p></body></html>`;
}

function startPageServer(): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url === '/font.ttf') {
      res.writeHead(200, { 'content-type': 'font/ttf', 'cache-control': 'max-age=3600' }).end(readFileSync(systemFontFile()));
      return;
    }
    const mode = req.url === '/tag.html' ? 'tag' : req.url === '/call.html' ? 'call' : req.url === '/webfonts.html' ? 'webfonts' : null;
    if (mode === null) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(pageHtml(mode));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  });
}

/** A TrueType font of this machine (Chromium's fonts), served to pages as their web font. */
function systemFontFile(): string {
  const found = readdirSync('/usr/share/fonts', { recursive: true, encoding: 'utf8' }).find((name) => name.endsWith('.ttf'));
  if (found === undefined) throw new Error('no .ttf under /usr/share/fonts to serve as a web font');
  return join('/usr/share/fonts', found);
}

async function outcomeOf(page: Page): Promise<PageOutcome> {
  await page.waitForFunction(() => {
    const outcome = (globalThis as unknown as { __outcome?: PageOutcome }).__outcome;
    return outcome !== undefined && (outcome.result !== undefined || outcome.error !== undefined);
  }, undefined, { timeout: kWaitMs });
  return page.evaluate(() => (globalThis as unknown as { __outcome: PageOutcome }).__outcome);
}

/** Opens a page of the shop (or of another origin) in the shared browser profile. */
async function open(origin: string, path: '/tag.html' | '/call.html' | '/webfonts.html'): Promise<Page> {
  const page = await state.context!.newPage();
  await page.goto(`${origin}${path}`);
  return page;
}

/** How many POST /v1/fp/collect the server has answered with `status`, from its /metrics. */
async function collectAnswers(status: number): Promise<number> {
  const text = await (await fetch(`${state.server!.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`fraud_scorer_http_requests_total{route="POST /v1/fp/collect",status="${status}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

if (!existsSync(kChromium) && !kBrowserRequired) {
  const banner = '!'.repeat(100);
  console.warn(`\n${banner}\n  SKIPPED: browser tests of the fingerprint agent. No Chromium at ${kChromium}.\n` +
    `  Install it (apt-get install -y chromium) or point CHROMIUM_PATH at one. CI sets\n` +
    `  FRAUD_SCORER_REQUIRE_BROWSER=1, which turns this skip into a failure.\n${banner}\n`);
  test.skip('fingerprint agent in Chromium (no Chromium on this machine)', () => {});
} else {
  test.before(async () => {
    if (!existsSync(kChromium)) {
      throw new Error(`FRAUD_SCORER_REQUIRE_BROWSER=1 but there is no Chromium at ${kChromium} (apt-get install -y chromium)`);
    }
    const [shop, elsewhere, server] = await Promise.all([startPageServer(), startPageServer(), startServer()]);
    Object.assign(state, { shop: shop.server, shopOrigin: shop.origin, elsewhere: elsewhere.server, elsewhereOrigin: elsewhere.origin, server });
    state.publishableKey = (await createKeyWithCli(server.dataDir, ['--project', 'live', '--kind', 'publishable', '--origins', shop.origin])).key;
    state.userDataDir = mkdtempSync(join(tmpdir(), 'fraud-scorer-chromium-'));
    state.context = await chromium.launchPersistentContext(state.userDataDir, {
      executablePath: kChromium,
      headless: true,
      args: kChromiumArgs,
    });
  });

  test.after.always(async () => {
    await state.context?.close();
    await state.server?.stop();
    state.shop?.close();
    state.elsewhere?.close();
    if (state.userDataDir !== '') rmSync(state.userDataDir, { recursive: true, force: true });
  });

  test.serial('the agent from a script tag collects and hands back an fp_id as a DOM event and a promise', async (t) => {
    const page = await state.context!.newPage();
    const posted = page.waitForRequest((request) => request.url().endsWith('/v1/fp/collect') && request.method() === 'POST', { timeout: kWaitMs });
    await page.goto(`${state.shopOrigin}/tag.html`);
    const outcome = await outcomeOf(page);
    t.is(outcome.error, undefined, JSON.stringify(outcome.error));
    t.regex(outcome.result!.fp_id, kFpIdPattern);
    t.is(outcome.result!.seen_count, 1);
    t.is(await page.evaluate(() => (globalThis as unknown as { FraudScorer: { ready: Promise<string> } }).FraudScorer.ready), outcome.result!.fp_id);

    // What a real browser sends: every stable component, and a canvas hash (Chromium does not
    // randomise canvas reads, so the agent must not have fallen back to null).
    const body = (await posted).postDataJSON() as { components: Record<string, unknown> };
    for (const name of kStableComponentNames) t.true(name in body.components, `components.${name} missing`);
    t.is(typeof body.components.canvas, 'string');
    t.true(Array.isArray(body.components.fonts) && (body.components.fonts as string[]).length > 0, 'no font found');
    state.fpId = outcome.result!.fp_id;
    await page.close();
  });

  test.serial('a second load in the same browser profile gets the same fp_id', async (t) => {
    const page = await open(state.shopOrigin, '/tag.html');
    const outcome = await outcomeOf(page);
    t.is(outcome.result?.fp_id, state.fpId, JSON.stringify(outcome));
    t.is(outcome.result?.seen_count, 2);
    await page.close();
  });

  test.serial('FraudScorer.collect({ key, endpoint }) resolves with the same fp_id', async (t) => {
    const page = await open(state.shopOrigin, '/call.html');
    const fpId = await page.evaluate(
      ([key, endpoint]) => (globalThis as unknown as { FraudScorer: { collect(o: object): Promise<string> } }).FraudScorer.collect({ key, endpoint }),
      [state.publishableKey, state.server!.url] as const,
    );
    t.is(fpId, state.fpId);
    t.is((await outcomeOf(page)).result?.seen_count, 3);
    await page.close();
  });

  test.serial('a page on an origin the key does not list is refused, and nothing is counted', async (t) => {
    const refusedBefore = await collectAnswers(403);
    const page = await open(state.elsewhereOrigin, '/tag.html');
    const outcome = await outcomeOf(page);
    t.is(outcome.result, undefined);
    // The refusal carries no Access-Control-Allow-Origin, so all the page learns is a failed
    // fetch (status 0); Chromium does not even report the response to playwright. The server's
    // own request counter shows that it answered 403.
    t.is(outcome.error?.status, 0, JSON.stringify(outcome.error));
    t.is(await collectAnswers(403), refusedBefore + 1);
    await page.close();

    // Back on the shop: the refused collection was not counted.
    const shop = await open(state.shopOrigin, '/tag.html');
    const after = await outcomeOf(shop);
    t.is(after.result?.fp_id, state.fpId);
    t.is(after.result?.seen_count, 4);
    await shop.close();
  });

  test.serial('the backend scores events with the collected fp_id, and two accounts sharing it are linked', async (t) => {
    const server = state.server!;
    const key = server.bootstrap.keys.live_secret.key;
    const score = async (account: string): Promise<{ account_public_id: string }> => {
      const response = await fetch(`${server.url}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event_id: crypto.randomUUID(), event_type: 'login', external_account_id: account, context: { fp_id: state.fpId } }),
      });
      const body = (await response.json()) as { data: { account_public_id: string } };
      t.is(response.status, 200);
      return body.data;
    };
    const first = await score('shopper-one');
    const second = await score('shopper-two');
    const response = await fetch(`${server.url}/v1/accounts/shopper-one/links`, { headers: { authorization: `Bearer ${key}` } });
    const links = ((await response.json()) as { data: { links: Array<{ signal_type: string; account_public_id: string }> } }).data.links;
    t.deepEqual(links.map((link) => [link.signal_type, link.account_public_id]), [['fp', second.account_public_id]]);
    t.not(first.account_public_id, second.account_public_id);
  });

  test.serial('a browser text cut at its limit inside a character beyond U+FFFF is sent whole-charactered, and accepted', async (t) => {
    const page = await state.context!.newPage();
    // user_agent is cut at 1,024 UTF-16 units: an emoji across the cut would leave half of it, a
    // lone surrogate the server refuses.
    await page.addInitScript(() => {
      // Runs in the page: its Navigator, which Node's types do not declare.
      const { Navigator } = globalThis as unknown as { Navigator: { prototype: object } };
      Object.defineProperty(Navigator.prototype, 'userAgent', { get: () => `${'a'.repeat(1023)}\u{1F600}` });
    });
    const posted = page.waitForRequest((request) => request.url().endsWith('/v1/fp/collect') && request.method() === 'POST', { timeout: kWaitMs });
    await page.goto(`${state.shopOrigin}/tag.html`);
    const outcome = await outcomeOf(page);
    t.is(outcome.error, undefined, JSON.stringify(outcome.error));
    t.regex(outcome.result?.fp_id ?? '', kFpIdPattern);
    t.is(((await posted).postDataJSON() as { components: { user_agent: string } }).components.user_agent, 'a'.repeat(1023));
    await page.close();
  });

  test.serial('a page with web fonts named as fonts the agent probes gets the same fp_id, on load and collected again once they loaded', async (t) => {
    const page = await state.context!.newPage();
    const fontRequests: string[] = [];
    page.on('request', (request) => { if (request.url().endsWith('/font.ttf')) fontRequests.push(request.url()); });
    await page.goto(`${state.shopOrigin}/webfonts.html`);
    const outcome = await outcomeOf(page);
    t.is(outcome.result?.fp_id, state.fpId, JSON.stringify(outcome));
    // The page's text uses them: once they loaded, a second collection (before checkout) is the same browser.
    await page.evaluate(() => (globalThis as unknown as { document: { fonts: { ready: Promise<unknown> } } }).document.fonts.ready);
    t.true(fontRequests.length > 0, 'the page loaded its web font');
    const again = await page.evaluate(
      ([key, endpoint]) => (globalThis as unknown as { FraudScorer: { collect(o: object): Promise<string> } }).FraudScorer.collect({ key, endpoint }),
      [state.publishableKey, state.server!.url] as const,
    );
    t.is(again, state.fpId);
    await page.close();
  });
}
