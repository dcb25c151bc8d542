// Scores use integer arithmetic only: weights are counted in hundredths ("units"), and rounding is
// done with an integer division. ClickHouse's round() rounds half to even on floats while JS's
// Math.round rounds half up, so floats would make the SQL and the JS scores disagree on ties.

/** Integer weight units of a normalized weight: `weightUnits(1.5) === 150`. */
export function weightUnits(weight: number): number {
  return Math.round(weight * 100)
}

/**
 * `round(100 * passed / total)` with halves rounded up, exactly: `groupScore(1, 8) === 13` (12.5 -> 13).
 * Inputs stay below 2^31, so the float division is exact enough for floor to be right.
 */
export function groupScore(passedUnits: number, totalUnits: number): number {
  return Math.floor((200 * passedUnits + totalUnits) / (2 * totalUnits))
}
