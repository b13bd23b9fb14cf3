'use strict'
// RingBuffer: the last `capacity` bytes of a stream of PCM, oldest dropped first (whisper.rn's
// name; RingBufferVad keeps the audio it judges in one).
class RingBuffer {
  constructor(capacity) {
    if (!Number.isInteger(capacity) || capacity <= 0)
      throw new TypeError(`RingBuffer: capacity must be a positive whole number of bytes, got ${capacity}`)
    this._buf = new Uint8Array(capacity)
    this._start = 0 // index of the oldest byte
    this._size = 0
  }

  get capacity() {
    return this._buf.length
  }

  get size() {
    return this._size
  }

  /** Appends bytes; what no longer fits pushes the oldest out. */
  write(data) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data.buffer || data, data.byteOffset || 0, data.byteLength)
    const cap = this._buf.length
    const src = bytes.length > cap ? bytes.subarray(bytes.length - cap) : bytes
    for (let i = 0; i < src.length; ) {
      const at = (this._start + this._size) % cap
      const n = Math.min(src.length - i, cap - at)
      this._buf.set(src.subarray(i, i + n), at)
      i += n
      const grow = Math.min(n, cap - this._size)
      this._size += grow
      this._start = (this._start + (n - grow)) % cap
    }
  }

  /** A copy of the contents, oldest first. */
  read() {
    const out = new Uint8Array(this._size)
    const cap = this._buf.length
    const first = Math.min(this._size, cap - this._start)
    out.set(this._buf.subarray(this._start, this._start + first), 0)
    out.set(this._buf.subarray(0, this._size - first), first)
    return out
  }

  clear() {
    this._start = 0
    this._size = 0
  }
}

// The bytes of several chunks, in order, in one array.
function joinBytes(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) out.set(p, at), (at += p.length)
  return out
}

module.exports = { RingBuffer, joinBytes }
