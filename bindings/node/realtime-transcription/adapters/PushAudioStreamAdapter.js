'use strict'
// Audio the app has itself (a socket, a child process, a Readable) as whisper.rn's
// AudioStreamInterface: push(chunk) delivers 16-bit PCM bytes (Buffer, Uint8Array, Int16Array,
// ArrayBuffer) at the sampleRate and channels given; end() says there is no more.
class PushAudioStreamAdapter {
  constructor(options = {}) {
    const o = options || {}
    this.config = { sampleRate: o.sampleRate || 16000, channels: o.channels || 1, bitsPerSample: 16 }
    this.live = !!o.live
    this._recording = false
    this._cb = { data: [], error: [], status: [], end: [] }
  }

  async initialize(config = {}) {
    if (config.sampleRate) this.config.sampleRate = config.sampleRate
    if (config.channels) this.config.channels = config.channels
    if (config.bitsPerSample !== undefined && config.bitsPerSample !== 16)
      throw new Error(`PushAudioStreamAdapter: bitsPerSample ${config.bitsPerSample} is not offered; push 16-bit PCM`)
  }

  async start() { this._setRecording(true) }
  async stop() { this._setRecording(false) }
  isRecording() { return this._recording }
  onData(cb) { this._cb.data.push(cb) }
  onError(cb) { this._cb.error.push(cb) }
  onStatusChange(cb) { this._cb.status.push(cb) }
  onEnd(cb) { this._cb.end.push(cb) }

  async release() {
    this._setRecording(false)
    this._cb = { data: [], error: [], status: [], end: [] }
  }

  /** Delivers a chunk (ignored unless started). */
  push(chunk) {
    if (!this._recording) return
    const data =
      chunk instanceof Uint8Array ? chunk
        : ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
          : new Uint8Array(chunk)
    const event = { data, sampleRate: this.config.sampleRate, channels: this.config.channels, timestamp: Date.now() }
    for (const cb of this._cb.data) cb(event)
  }

  /** No more audio: the stream ends (the transcriber finishes its last slice). */
  end() {
    if (!this._recording) return
    this._setRecording(false)
    for (const cb of this._cb.end) cb()
  }

  _setRecording(on) {
    if (this._recording === on) return
    this._recording = on
    for (const cb of this._cb.status) cb(on)
  }
}

module.exports = { PushAudioStreamAdapter }
