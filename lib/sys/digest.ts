// Hashes, HMACs, random bytes and constant-time comparison without node:crypto: importing it costs
// a process ~6M instructions (its stream classes), a third of mam's whole start-up, so mam uses
// Bun.CryptoHasher and the global Web Crypto, which cost nothing until called. (The team's sealed
// messages, lib/team/seal.ts, need node:crypto's ciphers and HKDF and keep it.)

/** SHA-256 of text (UTF-8) or bytes, as hex */
export const sha256Hex = (data: string | Uint8Array): string => new Bun.CryptoHasher("sha256").update(data).digest("hex");

/** HMAC-SHA-256 of text (UTF-8) under a key (UTF-8), as hex */
export const hmacSha256Hex = (key: string, data: string): string => new Bun.CryptoHasher("sha256", Buffer.from(key, "utf8")).update(data).digest("hex");

/** n random bytes */
export const randomBytes = (n: number): Buffer => Buffer.from(crypto.getRandomValues(new Uint8Array(n)));

/** equal bytes, compared in constant time (a length mismatch is a plain no) */
export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && crypto.timingSafeEqual(a, b);
