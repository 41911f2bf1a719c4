// Standard Webhooks signing with several secrets (rotation overlap), and which secrets sign when.
import test from 'ava';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret, signingSecrets, signWebhook } from '../../src/webhooks/signature.js';

test('one signature per secret, space-separated, each verifying on its own', (t) => {
  const current = generateWebhookSecret();
  const previous = generateWebhookSecret();
  const body = '{"type":"event.scored"}';
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = signWebhook([current, previous], 'msg_test', timestamp, body);
  t.regex(headers['webhook-signature'], /^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
  t.notThrows(() => new Webhook(current).verify(body, { ...headers }));
  t.notThrows(() => new Webhook(previous).verify(body, { ...headers }));
  t.throws(() => new Webhook(generateWebhookSecret()).verify(body, { ...headers }));
  t.is(signWebhook([current], 'msg_test', timestamp, body)['webhook-signature'].split(' ').length, 1);
});

test('the previous secret signs only until the end of its overlap', (t) => {
  const config = { secret: 'whsec_current', previous_secret: 'whsec_previous', previous_secret_until: 1_000_000 };
  t.deepEqual(signingSecrets(config, 999_999), ['whsec_current', 'whsec_previous']);
  t.deepEqual(signingSecrets(config, 1_000_000), ['whsec_current']);
  t.deepEqual(signingSecrets({ ...config, previous_secret: null, previous_secret_until: null }, 0), ['whsec_current']);
});
