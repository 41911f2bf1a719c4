// A write that only checks that the database can be written: /healthz asks for one while the
// writer's last transaction was refused (store/writer.ts storageFailure), so that a node that
// failed while idle is seen to have recovered without waiting for traffic a load balancer keeps
// away from it. It rewrites one row of meta: a page of WAL, which a full disk refuses.
import type { Db } from './database.js';

export function probeWrite(db: Db, at: number): void {
  db.prepare(`INSERT INTO meta (name, value) VALUES ('write_probe', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`).run(String(at));
}
