// Epoch milliseconds → "2026-11-20T10:00:00.000Z", the same text as Date#toISOString, about ten
// times faster: listing a thousand account links formats two thousand times, and toISOString
// alone would take most of the route's time. Pure.

const kMsPerDay = 86_400_000;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

function pad3(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`;
}

/** For years 0000–9999 (epoch ms from -62167219200000 to 253402300799999); Date outside them. */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < -62_167_219_200_000 || ms > 253_402_300_799_999) return new Date(ms).toISOString();
  const days = Math.floor(ms / kMsPerDay);
  let rest = ms - days * kMsPerDay;
  // Civil date from days since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  const yearText = year < 1000 ? `${year}`.padStart(4, '0') : `${year}`;
  return `${yearText}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(millis)}Z`;
}
