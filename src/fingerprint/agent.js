/*! fraud-scorer device agent. Served by GET /v1/fp/agent.js; see docs/fingerprint.md. */
// Gathers the components of this browser, posts them with a publishable key to
// POST /v1/fp/collect, and hands back the fp_id:
//
//   <script src="https://fraud.example/v1/fp/agent.js" data-key="pk_live_..."></script>
//     collects once on load; listen for the DOM event on document:
//     document.addEventListener('fraud-scorer:fp', (e) => send(e.detail.fp_id));
//     document.addEventListener('fraud-scorer:fp-error', (e) => log(e.detail.message));
//
//   FraudScorer.collect({ key: 'pk_live_...', endpoint: 'https://fraud.example' })
//     returns a promise of the fp_id (and fires the same events).
//
// Plain ES2017 with no dependencies: it runs in every current browser as it is, without a build.
// Each component is read defensively: a browser that lacks or blocks one sends null (or leaves a
// volatile one out), never an exception. Component names and bounds follow
// src/fingerprint/components.ts, which the server validates against.
(function () {
  'use strict';

  var kCollectPath = '/v1/fp/collect';
  var kAgentPath = '/v1/fp/agent.js';
  var kEventName = 'fraud-scorer:fp';
  var kErrorEventName = 'fraud-scorer:fp-error';
  var kBatteryTimeoutMs = 200;

  // Captured now: document.currentScript is set only while this script first runs.
  var script = document.currentScript;

  // ---- small helpers --------------------------------------------------------------------------

  function attempt(read, fallback) {
    try {
      var value = read();
      return value === undefined ? fallback : value;
    } catch (error) {
      return fallback;
    }
  }

  function text(value, maxLength) {
    if (typeof value !== 'string') return '';
    var cut = value.slice(0, maxLength);
    // A cut between the two halves of a character beyond U+FFFF (an emoji) would send half of it,
    // a lone surrogate the server refuses: the half goes too.
    var last = cut.charCodeAt(cut.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
  }

  function whole(value, min, max) {
    return typeof value === 'number' && isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : min;
  }

  // cyrb53 (public domain): a fast 53-bit string hash. Written in base 36 it is at most 11
  // characters, short enough that no digit run in it can look like a card number to the server.
  function hash53(input) {
    var h1 = 0xdeadbeef;
    var h2 = 0x41c6ce57;
    for (var i = 0; i < input.length; i++) {
      var ch = input.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
  }

  // ---- stable components ----------------------------------------------------------------------

  // The canvas reads (text drawn for the canvas hash, text measured for the fonts) are made in a
  // document of the agent's own, an empty frame removed at once. In the page's document the page's
  // web fonts (an @font-face "Roboto" from a font service) take part: one browser had one fp_id on
  // a page without them and another on a page with them, or before and after they loaded, and the
  // probes started the page's font downloads. Without a frame (none can be made), the page's.
  function inOwnDocument(read) {
    var frame = attempt(function () {
      var element = document.createElement('iframe');
      element.setAttribute('aria-hidden', 'true');
      element.tabIndex = -1;
      element.style.cssText = 'position:absolute;left:-9999px;top:0;width:0;height:0;border:0;visibility:hidden';
      (document.body || document.documentElement).appendChild(element);
      return element;
    }, null);
    try {
      var own = frame === null ? null : attempt(function () { return frame.contentDocument; }, null);
      return read(own || document);
    } finally {
      if (frame !== null && frame.parentNode) frame.parentNode.removeChild(frame);
    }
  }

  function drawCanvas(doc) {
    var canvas = doc.createElement('canvas');
    canvas.width = 240;
    canvas.height = 60;
    var ctx = canvas.getContext('2d');
    if (!ctx) return null;
    ctx.textBaseline = 'alphabetic';
    ctx.fillStyle = '#f60';
    ctx.fillRect(125, 1, 62, 20);
    ctx.fillStyle = '#069';
    ctx.font = '11pt "Times New Roman"';
    ctx.fillText('Cwm fjordbank gly \ud83d\ude03', 2, 15);
    ctx.fillStyle = 'rgba(102, 204, 0, 0.2)';
    ctx.font = '18pt Arial';
    ctx.fillText('Cwm fjordbank gly \ud83d\ude03', 4, 45);
    ctx.globalCompositeOperation = 'multiply';
    ctx.fillStyle = 'rgb(255,0,255)';
    ctx.beginPath();
    ctx.arc(50, 50, 50, 0, Math.PI * 2, true);
    ctx.closePath();
    ctx.fill();
    return canvas.toDataURL();
  }

  function canvasHash(doc) {
    return attempt(function () {
      var first = drawCanvas(doc);
      if (first === null) return null;
      // Some browsers add per-read noise against fingerprinting; such a hash would differ on
      // every visit, so send none instead.
      if (drawCanvas(doc) !== first) return null;
      return hash53(first);
    }, null);
  }

  function webgl() {
    return attempt(function () {
      var canvas = document.createElement('canvas');
      var gl = canvas.getContext('webgl') || canvas.getContext('experimental-webgl');
      if (!gl) return null;
      var info = gl.getExtension('WEBGL_debug_renderer_info');
      var vendor = gl.getParameter(info ? info.UNMASKED_VENDOR_WEBGL : gl.VENDOR);
      var renderer = gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER);
      var lose = gl.getExtension('WEBGL_lose_context');
      if (lose) lose.loseContext(); // browsers cap live contexts; give this one back
      return { vendor: text(vendor, 256), renderer: text(renderer, 512) };
    }, null);
  }

  function screenSize() {
    return {
      width: whole(attempt(function () { return screen.width; }, 0), 0, 100000),
      height: whole(attempt(function () { return screen.height; }, 0), 0, 100000),
      color_depth: whole(attempt(function () { return screen.colorDepth; }, 0), 0, 64),
    };
  }

  function timezone() {
    var zone = attempt(function () { return Intl.DateTimeFormat().resolvedOptions().timeZone; }, null);
    return typeof zone === 'string' && /^[A-Za-z0-9_+/-]{1,64}$/.test(zone) ? zone : null;
  }

  function languages() {
    var list = attempt(function () { return navigator.languages; }, null);
    if (!list || !list.length) list = [attempt(function () { return navigator.language; }, '')];
    var out = [];
    for (var i = 0; i < list.length && out.length < 32; i++) {
      if (typeof list[i] === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(list[i])) out.push(list[i]);
    }
    return out;
  }

  function optionalNumber(read, min, max, integer) {
    var value = attempt(read, null);
    if (typeof value !== 'number' || !isFinite(value) || value < min || value > max) return null;
    return integer ? Math.round(value) : value;
  }

  // Fonts are found by measuring: text set in "<font>, <fallback>" has the fallback's width unless
  // the font is installed. Canvas measureText does it without touching the page's layout.
  var kFontProbes = [
    'Arial', 'Arial Black', 'Arial Narrow', 'Bahnschrift', 'Book Antiqua', 'Bookman Old Style', 'Calibri',
    'Cambria', 'Candara', 'Century Gothic', 'Comic Sans MS', 'Consolas', 'Constantia', 'Corbel', 'Courier New',
    'DejaVu Sans', 'DejaVu Serif', 'Droid Sans', 'Franklin Gothic Medium', 'Garamond', 'Geneva', 'Georgia',
    'Gill Sans', 'Helvetica', 'Helvetica Neue', 'Impact', 'Liberation Mono', 'Liberation Sans',
    'Lucida Console', 'Lucida Grande', 'Lucida Sans Unicode', 'Menlo', 'Monaco', 'MS Gothic',
    'MS Sans Serif', 'Noto Color Emoji', 'Noto Sans', 'Optima', 'Palatino', 'Palatino Linotype', 'Roboto',
    'Segoe Print', 'Segoe UI', 'SF Pro Text', 'Tahoma', 'Times', 'Times New Roman', 'Trebuchet MS', 'Ubuntu',
    'Verdana', 'Wingdings',
  ];
  var kFallbacks = ['monospace', 'serif', 'sans-serif'];
  var kProbeText = 'mmmmmmmmmmlli1WQ@#';

  function fonts(doc) {
    return attempt(function () {
      var ctx = doc.createElement('canvas').getContext('2d');
      if (!ctx) return [];
      var base = kFallbacks.map(function (fallback) {
        ctx.font = '72px ' + fallback;
        return ctx.measureText(kProbeText).width;
      });
      return kFontProbes.filter(function (font) {
        return kFallbacks.some(function (fallback, i) {
          ctx.font = '72px "' + font + '", ' + fallback;
          return ctx.measureText(kProbeText).width !== base[i];
        });
      });
    }, []);
  }

  function touch() {
    return {
      max_touch_points: whole(attempt(function () { return navigator.maxTouchPoints; }, 0), 0, 1024),
      touch_event: attempt(function () { return 'ontouchstart' in window; }, false) === true,
    };
  }

  // ---- volatile components (never part of the fp_id) ------------------------------------------

  function windowSize() {
    var size = {
      inner_width: whole(window.innerWidth, 0, 100000),
      inner_height: whole(window.innerHeight, 0, 100000),
      outer_width: whole(window.outerWidth, 0, 100000),
      outer_height: whole(window.outerHeight, 0, 100000),
    };
    var ratio = optionalNumber(function () { return window.devicePixelRatio; }, 0.0001, 64, false);
    if (ratio !== null) size.device_pixel_ratio = ratio;
    return size;
  }

  function network() {
    var connection = attempt(function () { return navigator.connection; }, null);
    if (!connection) return null;
    var state = {
      downlink: optionalNumber(function () { return connection.downlink; }, 0, 100000, false),
      rtt: optionalNumber(function () { return connection.rtt; }, 0, 600000, true),
      save_data: typeof connection.saveData === 'boolean' ? connection.saveData : null,
    };
    var type = connection.effectiveType;
    if (['slow-2g', '2g', '3g', '4g'].indexOf(type) >= 0) state.effective_type = type;
    return state;
  }

  // getBattery is asynchronous and, in some browsers, slow to settle: wait briefly, then go on
  // without it.
  function battery() {
    var read = attempt(function () { return navigator.getBattery ? navigator.getBattery() : null; }, null);
    if (!read || typeof read.then !== 'function') return Promise.resolve(null);
    var timeout = new Promise(function (resolve) { setTimeout(resolve, kBatteryTimeoutMs, null); });
    var answer = read.then(
      function (state) {
        var level = state && typeof state.level === 'number' ? Math.min(1, Math.max(0, state.level)) : null;
        return level === null ? null : { level: level, charging: state.charging === true };
      },
      function () { return null; }
    );
    return Promise.race([answer, timeout]);
  }

  /** Every component, as POST /v1/fp/collect expects them. */
  function gather() {
    return battery().then(function (batteryState) {
      var drawn = inOwnDocument(function (doc) { return { canvas: canvasHash(doc), fonts: fonts(doc) }; });
      var components = {
        canvas: drawn.canvas,
        webgl: webgl(),
        screen: screenSize(),
        timezone: timezone(),
        languages: languages(),
        platform: text(attempt(function () { return navigator.platform; }, ''), 128),
        vendor: text(attempt(function () { return navigator.vendor; }, ''), 128),
        hardware_concurrency: optionalNumber(function () { return navigator.hardwareConcurrency; }, 1, 4096, true),
        device_memory: optionalNumber(function () { return navigator.deviceMemory; }, 0.0001, 4096, false),
        fonts: drawn.fonts,
        touch: touch(),
        timezone_offset: whole(attempt(function () { return new Date().getTimezoneOffset(); }, 0), -1440, 1440),
        window: windowSize(),
        battery: batteryState,
        network: network(),
        user_agent: text(attempt(function () { return navigator.userAgent; }, ''), 1024),
        collected_at: new Date().toISOString(),
      };
      return components;
    });
  }

  // ---- posting --------------------------------------------------------------------------------

  function defaultEndpoint() {
    // The server this script came from, including any path prefix a proxy puts in front of it.
    if (!script || !script.src) return '';
    var url = new URL(script.src, document.baseURI);
    var path = url.pathname;
    var base = path.slice(-kAgentPath.length) === kAgentPath ? path.slice(0, -kAgentPath.length) : '';
    return url.origin + base;
  }

  function emit(name, detail) {
    document.dispatchEvent(new CustomEvent(name, { detail: detail }));
  }

  function fail(message, code, status) {
    var error = new Error(message);
    error.code = code;
    error.status = status;
    return error;
  }

  function post(endpoint, key, components) {
    return fetch(endpoint.replace(/\/+$/, '') + kCollectPath, {
      method: 'POST',
      mode: 'cors',
      credentials: 'omit',
      cache: 'no-store',
      headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ components: components }),
    }).then(function (response) {
      return response.json().then(
        function (envelope) {
          if (envelope && envelope.status === 1 && envelope.data && envelope.data.fp_id) return envelope.data;
          var first = envelope && envelope.errors && envelope.errors[0];
          throw fail(first ? first.message : 'unexpected answer (HTTP ' + response.status + ')', first ? first.code : '', response.status);
        },
        function () {
          throw fail('unexpected answer (HTTP ' + response.status + ')', '', response.status);
        }
      );
    });
  }

  /**
   * Gathers the components and posts them. Resolves with the fp_id; fires fraud-scorer:fp (detail:
   * fp_id, first_seen, last_seen, seen_count) or fraud-scorer:fp-error (detail: message, code,
   * status) on document.
   */
  function collect(options) {
    var key = options && options.key;
    var endpoint = (options && options.endpoint) || defaultEndpoint();
    var run = !key
      ? Promise.reject(fail('FraudScorer.collect needs a publishable key ({ key: "pk_..." })', 'AUTH_ERROR', 0))
      : !endpoint
        ? Promise.reject(fail('FraudScorer.collect needs an endpoint ({ endpoint: "https://..." })', 'VALIDATION_ERROR', 0))
        : gather().then(function (components) { return post(endpoint, key, components); });
    return run.then(
      function (result) {
        emit(kEventName, result);
        return result.fp_id;
      },
      function (error) {
        // A refusal without CORS headers (an origin the key does not allow) reaches here as a
        // network TypeError: the browser hides the answer from the page.
        emit(kErrorEventName, { message: String(error && error.message), code: (error && error.code) || '', status: (error && error.status) || 0 });
        throw error;
      }
    );
  }

  var api = { collect: collect, version: '1' };
  window.FraudScorer = api;

  // Script-tag mode: data-key (and optionally data-endpoint) collect once, on load. The promise is
  // kept as FraudScorer.ready; its failure is reported through the error event only.
  var tagKey = script && script.getAttribute('data-key');
  if (tagKey) {
    api.ready = collect({ key: tagKey, endpoint: script.getAttribute('data-endpoint') || undefined });
    api.ready.catch(function () {});
  }
})();
