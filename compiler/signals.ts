// The computed signals the service passes in RulesetInput.signals, typed from
// schema.ts so the two cannot drift apart. Every member may be missing.

import type { FieldType } from './schema.js';

interface FieldTypeMap {
  string: string;
  bool: boolean;
  int: number;
  double: number;
  timestamp: string;
}

type Fields<T extends Record<string, FieldType>> = { [K in keyof T]?: FieldTypeMap[T[K]] | null };

export interface Signals {
  velocity: Fields<{
    card_1h: 'int'; card_24h: 'int'; ip_1h: 'int'; ip_24h: 'int'; account_1h: 'int'; account_24h: 'int';
    email_1h: 'int'; email_24h: 'int'; fp_1h: 'int'; fp_24h: 'int'; account_amount_24h: 'int'; card_amount_24h: 'int';
  }>;
  links: Fields<{ email: 'int'; phone: 'int'; fp: 'int'; ip_24h: 'int'; card: 'int'; total: 'int'; fraud: 'int' }>;
  account: Fields<{ known: 'bool'; age_days: 'double'; events: 'int'; blocks: 'int'; reviews: 'int'; fraud_confirmed: 'bool'; labelled_fraud: 'int' }>;
  phone: Fields<{ present: 'bool'; valid: 'bool'; parseable: 'bool'; country: 'string'; type: 'string' }>;
  email: Fields<{ present: 'bool'; valid: 'bool'; disposable: 'bool'; free_provider: 'bool'; domain: 'string' }>;
}
