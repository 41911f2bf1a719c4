// Settings resolve flag, then environment, then default, and a value out of its range or choices
// is refused naming both ways to set it (DESIGN §5). Pure: loadConfig reads only what it is given.
import test from 'ava';
import { ConfigError, kSettings, loadConfig, settingWarnings } from '../../src/config/settings.js';

const refused = (flags: Record<string, string>, env: NodeJS.ProcessEnv, message: string) => (t: import('ava').ExecutionContext) => {
  const error = t.throws(() => loadConfig(flags, env), { instanceOf: ConfigError });
  t.is(error?.message, message);
};

test('the defaults pass, and a flag wins over the environment', (t) => {
  const config = loadConfig({}, {});
  t.is(config.port, kSettings.port.default);
  t.is(config.logLevel, 'info');
  t.is(loadConfig({ port: '9001' }, { PORT: '9002' }).port, 9001);
  t.is(loadConfig({}, { PORT: '9002' }).port, 9002);
  t.is(loadConfig({}, { PORT: '0' }).port, 0, 'the lowest value is in range');
  t.is(loadConfig({}, { PORT: '65535' }).port, 65535, 'and the highest');
  t.true(Object.isFrozen(loadConfig({}, {})));
});

test('an integer below its minimum is refused', refused({}, { MAX_EVENTS_IN_FLIGHT: '0' }, 'MAX_EVENTS_IN_FLIGHT / --max-events-in-flight: must be >= 1'));
test('an integer above its maximum is refused', refused({ port: '65536' }, {}, 'PORT / --port: must be <= 65535'));
test('a number too large to hold exactly is above the maximum', refused({}, { WORKERS: '99999999999999999999' }, 'WORKERS / --workers: must be <= 64'));
test('a word where an integer goes is refused', refused({}, { PORT: 'eighty' }, 'PORT: expected an integer, got "eighty"'));
test('a boolean that is not on or off is refused', refused({ 'access-log': 'maybe' }, {}, '--access-log: expected on or off, got "maybe"'));
test('a string outside its choices is refused', refused({}, { LOG_LEVEL: 'verbose' }, 'LOG_LEVEL / --log-level: must be one of debug, info, warn, error'));
test('an empty flag is refused, not taken as unset', refused({ 'data-dir': '' }, { DATA_DIR: '/srv/data' }, '--data-dir: empty value; give a value, or leave the flag out to use DATA_DIR or the default'));
test('a path with white space around it is refused, not a new data dir beside the real one', refused({}, { DATA_DIR: '/srv/data ' }, 'DATA_DIR: "/srv/data " has white space around it; remove it'));
test('an address with white space around it is refused', refused({ host: ' 127.0.0.1' }, {}, '--host: " 127.0.0.1" has white space around it; remove it'));
test('a header limit for uWebSockets.js that is not a number is refused', refused({}, { UWS_HTTP_MAX_HEADERS_SIZE: 'abc' }, 'UWS_HTTP_MAX_HEADERS_SIZE: expected a number of bytes, got "abc"'));
test('a header limit for uWebSockets.js out of range is refused', refused({}, { UWS_HTTP_MAX_HEADERS_SIZE: '0' }, 'UWS_HTTP_MAX_HEADERS_SIZE: must be between 1024 and 1048576 bytes'));
test('an empty header limit counts as unset; one in range passes', (t) => {
  t.notThrows(() => loadConfig({}, { UWS_HTTP_MAX_HEADERS_SIZE: '' }));
  t.notThrows(() => loadConfig({}, { UWS_HTTP_MAX_HEADERS_SIZE: '32768' }));
});
test('an unknown fault is refused', refused({}, { FAULT_INJECTION: 'gremlins' }, 'FAULT_INJECTION / --fault-injection: unknown fault "gremlins"; known: rate_limiter_unready, hold_points, rule_worker_oom, rule_worker_hang, derived_rows_fail, case_folds_fail, port_taken_after_check, erasure_read_fails, start_held'));

test('settings that contradict each other are named for the start to log; the defaults are silent', (t) => {
  t.deepEqual(settingWarnings(loadConfig({}, {})), []);
  const warnings = settingWarnings(loadConfig({}, { OVERLOAD_EVENTS_IN_FLIGHT: '600', MAX_EVENTS_IN_FLIGHT: '512', WEBHOOK_RETRY_BASE_MS: '100000', WEBHOOK_RETRY_MAX_DELAY_MS: '1000' }));
  t.is(warnings.length, 2);
  t.regex(warnings[0]!, /^OVERLOAD_EVENTS_IN_FLIGHT \(600\) is above MAX_EVENTS_IN_FLIGHT \(512\)/);
  t.regex(warnings[1]!, /^WEBHOOK_RETRY_BASE_MS \(100000\) is above WEBHOOK_RETRY_MAX_DELAY_MS \(1000\)/);
  t.deepEqual(settingWarnings(loadConfig({}, { OVERLOAD_EVENTS_IN_FLIGHT: '512', MAX_EVENTS_IN_FLIGHT: '512' })), [], 'equal is no contradiction');
});
