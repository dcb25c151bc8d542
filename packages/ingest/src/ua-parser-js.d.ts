// The part of ua-parser-js 1.x (MIT) we use. Its package ships no types, and @types/ua-parser-js
// describes other versions; this is smaller than pinning one.
declare module 'ua-parser-js' {
  interface UAResult {
    browser: { name?: string; version?: string; major?: string }
    os: { name?: string; version?: string }
    device: { type?: string; vendor?: string; model?: string }
  }
  export class UAParser {
    constructor(userAgent?: string)
    getResult(): UAResult
  }
}
