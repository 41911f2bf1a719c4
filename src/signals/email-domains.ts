// Domain lists for the `email` signal. Small on purpose: the best-known services only. A project
// that needs more reads its own list through `extras` or a rule on `email.domain`.

/** Disposable (throw-away) mailbox services. */
export const kDisposableDomains: ReadonlySet<string> = new Set([
  '10minutemail.com', '20minutemail.com', 'dispostable.com', 'emailondeck.com', 'fakeinbox.com', 'getairmail.com',
  'getnada.com', 'guerrillamail.com', 'guerrillamail.net', 'guerrillamail.org', 'guerrillamailblock.com',
  'harakirimail.com', 'maildrop.cc', 'mailinator.com', 'mailinator.net', 'mailnesia.com', 'mintemail.com',
  'mohmal.com', 'mytemp.email', 'sharklasers.com', 'spamgourmet.com', 'temp-mail.org', 'tempail.com',
  'tempmail.com', 'tempmail.net', 'tempmailo.com', 'tempr.email', 'throwawaymail.com', 'trashmail.com',
  'trashmail.de', 'yopmail.com', 'yopmail.fr', 'yopmail.net',
]);

/** Free consumer mailbox providers. */
export const kFreeProviderDomains: ReadonlySet<string> = new Set([
  'aol.com', 'gmail.com', 'googlemail.com', 'gmx.com', 'gmx.de', 'gmx.net', 'hotmail.com', 'hotmail.co.uk',
  'hotmail.fr', 'icloud.com', 'live.com', 'mail.com', 'mail.ru', 'me.com', 'msn.com', 'outlook.com',
  'proton.me', 'protonmail.com', 'qq.com', 'web.de', 'yahoo.com', 'yahoo.co.uk', 'yahoo.fr', 'yandex.ru',
  'zoho.com',
]);
