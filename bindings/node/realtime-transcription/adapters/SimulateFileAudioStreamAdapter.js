'use strict'
// An audio file played as if it were being recorded (whisper.rn's SimulateFileAudioStreamAdapter):
// any format hark reads, at any rate, delivered as 16 kHz mono 16-bit PCM in chunks of
// chunkDurationMs at playbackSpeed x real time (0: as fast as it is taken). loop: start over at
// the end; otherwise onEndOfFile / onEnd callbacks run at the end. whisper.rn's `fs` option (a
// React Native file system) is accepted and not needed: hark reads the file itself.
const { NativeSourceAdapter } = require('./NativeSourceAdapter')

class SimulateFileAudioStreamAdapter extends NativeSourceAdapter {
  constructor(options = {}) {
    const o = options || {}
    if (typeof o.filePath !== 'string' || o.filePath === '')
      throw new TypeError('SimulateFileAudioStreamAdapter: filePath must be a non-empty string')
    const speed = o.playbackSpeed ?? 1
    const chunkMs = o.chunkDurationMs ?? 100
    if (typeof speed !== 'number' || !(speed >= 0)) throw new RangeError(`playbackSpeed must be >= 0, got ${speed}`)
    if (typeof chunkMs !== 'number' || !(chunkMs >= 10)) throw new RangeError(`chunkDurationMs must be >= 10, got ${chunkMs}`)
    const filePath = o.filePath.startsWith('file://') ? o.filePath.slice(7) : o.filePath
    super({ kind: 'file', path: filePath, speed, chunkMs })
    this.options = { ...o, filePath, playbackSpeed: speed, chunkDurationMs: chunkMs, loop: !!o.loop }
    this.live = false
    this._log = o.logger || (() => {})
    super.onEnd(() => {
      if (this.options.loop) {
        this._log('[SimulateFileAudioStreamAdapter] end of file; looping')
        this.start().catch((e) => this._cb.error.forEach((cb) => cb(String(e && e.message))))
      } else if (this._endOfFile) {
        this._endOfFile()
      }
    })
    this._endOfFile = o.onEndOfFile
  }

  /** The end of the file (when not looping); replaces options.onEndOfFile, as whisper.rn's does. */
  onEnd(cb) {
    this._endOfFile = cb
  }

  setPlaybackSpeed(speed) {
    if (typeof speed !== 'number' || !(speed >= 0)) throw new RangeError(`playbackSpeed must be >= 0, got ${speed}`)
    this.options.playbackSpeed = speed
    this._spec = { ...this._spec, speed } // from the next start()
  }
}

module.exports = { SimulateFileAudioStreamAdapter }
