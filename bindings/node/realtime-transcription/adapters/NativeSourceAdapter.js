'use strict'
// What the microphone and file adapters share: an AudioStreamInterface (whisper.rn's) over one of
// hark's native audio sources, which delivers 16 kHz mono 16-bit PCM on the JS thread.
const native = require('../../native')

class NativeSourceAdapter {
  constructor(spec) {
    this._spec = spec
    this._source = null
    this._recording = false
    this._cb = { data: [], error: [], status: [], end: [] }
    this.config = { sampleRate: 16000, channels: 1, bitsPerSample: 16 }
  }

  /** hark's sources deliver 16 kHz mono 16-bit PCM whatever the device or file is. */
  async initialize(config = {}) {
    for (const [k, want] of [['sampleRate', 16000], ['channels', 1], ['bitsPerSample', 16]])
      if (config[k] !== undefined && config[k] !== want)
        throw new Error(`${this.constructor.name}: ${k} ${config[k]} is not offered; it delivers ${want}`)
  }

  async start() {
    if (this._source) return
    const source = native.openAudioSource(
      this._spec,
      (bytes) => {
        if (this._source !== source) return
        const chunk = { data: bytes, sampleRate: 16000, channels: 1, timestamp: Date.now() }
        for (const cb of this._cb.data) cb(chunk)
      },
      (error) => {
        if (this._source !== source) return
        this._source = null
        this._setRecording(false)
        if (error) for (const cb of this._cb.error) cb(error)
        else for (const cb of this._cb.end) cb()
      },
    )
    this._source = source
    this._setRecording(true)
  }

  /** Ends capture (no end-of-stream call: the caller stopped it). */
  async stop() {
    const source = this._source
    this._source = null
    if (source) source.stop()
    this._setRecording(false)
  }

  isRecording() {
    return this._recording
  }

  onData(cb) { this._cb.data.push(cb) }
  onError(cb) { this._cb.error.push(cb) }
  onStatusChange(cb) { this._cb.status.push(cb) }
  /** hark: the source has delivered all it has (the end of a file). */
  onEnd(cb) { this._cb.end.push(cb) }

  async release() {
    await this.stop()
    this._cb = { data: [], error: [], status: [], end: [] }
  }

  _setRecording(on) {
    if (this._recording === on) return
    this._recording = on
    for (const cb of this._cb.status) cb(on)
  }
}

module.exports = { NativeSourceAdapter }
