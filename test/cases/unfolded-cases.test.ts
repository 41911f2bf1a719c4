// The HTTP thread's cases not written yet (cases/unfolded-cases.ts): what a fold's reply and a
// change take away, and what stays.
import test from 'ava';
import { UnfoldedCases } from '../../src/cases/unfolded-cases.js';

const kOpened = { projectId: 'prj_a', accountId: 'acc_a', externalAccountId: 'a', createdAt: 1_000 };

test('a new case stays listed until a fold writes it; events committed after the fold stay on top of its row', (t) => {
  const cases = new UnfoldedCases();
  cases.opened('case_1', kOpened, 40, 10);
  cases.added('case_1', 55, 1_005, 11);
  cases.added('case_2', 30, 1_006, 12);
  t.deepEqual([...cases.openedCases()].map(([caseId]) => caseId), ['case_1']);
  t.like(cases.get('case_1'), { riskScore: 55, updatedAt: 1_005, seqs: [10, 11], opened: kOpened });
  // The fold took case_1 with seqs 10 and 11; seq 13 joined it after.
  cases.added('case_1', 20, 1_010, 13);
  cases.folded([['case_1', [10, 11]]]);
  t.deepEqual([...cases.openedCases()], [], 'written');
  t.like(cases.get('case_1'), { seqs: [13], opened: null });
  t.is(cases.size, 2);
  cases.folded([['case_1', [13]], ['case_2', [12]], ['case_9', [1]]]);
  t.is(cases.size, 0, 'every event folded: nothing left, and an unknown case changes nothing');
});

test('a change or an erasure that wrote a case forgets it', (t) => {
  const cases = new UnfoldedCases();
  cases.opened('case_1', kOpened, 40, 10);
  cases.forget('case_1');
  t.is(cases.get('case_1'), undefined);
  t.deepEqual([...cases.openedCases()], []);
});
