// What card numbers are issued: the schemes' first digits and lengths, and the Luhn check digit
// (ISO/IEC 7812). Pure; the body scan (body-scan.ts) asks both of every candidate.

const k16or19: readonly number[] = [16, 19];

/**
 * The first digits and lengths of the numbers card schemes issue (ISO/IEC 7812 issuer ranges as
 * the schemes publish them): [lowest prefix, highest prefix, lengths]. Issued cards have 16 or 19
 * digits, but Amex (15) and Diners (14); 17 and 18 digits are issued rarely enough that taking them
 * would refuse far more other numbers (national ids, timestamps in ticks) than cards. Left out:
 * Visa's 13-digit numbers, no longer issued (13 digits starting with 4 are GTINs of Germany),
 * UATP's 15 starting with 1 (social network ids, ACH trace numbers), Maestro's 12 to 15, rare.
 * ICCIDs (89…), IMEIs of 15 digits, and most national ids and references start as no card does.
 */
const kIssuedNumbers: ReadonlyArray<readonly [string, string, readonly number[]]> = [
  ['2200', '2205', k16or19], // Mir, BORICA
  ['2221', '2720', [16]], // Mastercard
  ['300', '305', [14, 16, 19]], // Diners Club
  ['3095', '3095', [14, 16, 19]],
  ['34', '34', [15]], // American Express
  ['3528', '3589', k16or19], // JCB, RuPay, LankaPay
  ['36', '36', [14, 16, 19]], // Diners Club
  ['37', '37', [15]], // American Express
  ['38', '39', k16or19], // Diners Club
  ['4', '4', k16or19], // Visa
  ['50', '50', k16or19], // Maestro, Verve, RuPay, Dankort, GPN
  ['51', '55', [16]], // Mastercard
  ['56', '59', k16or19], // Maestro, GPN, UzCard
  ['6', '6', k16or19], // Discover, UnionPay, RuPay, Troy, Maestro, InstaPayment, Verve
  ['81', '82', k16or19], // UnionPay, RuPay
  ['8600', '8600', k16or19], // UzCard
  ['9704', '9704', k16or19], // Napas
  ['9792', '9792', k16or19], // Troy
  ['9860', '9860', k16or19], // Humo
];

/** Whether some scheme issues numbers of these first digits and this length. */
export function isIssuedNumber(digits: string): boolean {
  const length = digits.length;
  // Amounts in the smallest unit (wei) end in many zeros; no issuer numbers accounts so.
  if (digits.endsWith('00000000')) return false;
  for (const [low, high, lengths] of kIssuedNumbers) {
    if (!lengths.includes(length)) continue;
    const prefix = digits.slice(0, low.length);
    if (prefix >= low && prefix <= high) return true;
  }
  return false;
}

/** The Luhn (mod 10) check digit test of ISO/IEC 7812. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 0x30;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}
