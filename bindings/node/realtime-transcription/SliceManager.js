'use strict'
// SliceManager: 16-bit PCM cut into slices of a fixed length, the last few kept in memory
// (whisper.rn's name and methods). RealtimeTranscriber does not need it (hark's engine slices
// natively, at pauses too); it is here for apps that build their own pipeline on it.
//
// An AudioSlice: { index, data (Uint8Array of 16-bit PCM), sampleCount (samples), startTime,
// endTime (Date.now() ms), isProcessed, isReleased }.
const { joinBytes } = require('./RingBuffer')

class SliceManager {
  constructor(sliceDurationSec = 30, maxSlicesInMemory = 1, sampleRate = 16000) {
    for (const [name, v] of [['sliceDurationSec', sliceDurationSec], ['maxSlicesInMemory', maxSlicesInMemory], ['sampleRate', sampleRate]])
      if (typeof v !== 'number' || !(v > 0)) throw new TypeError(`SliceManager: ${name} must be a positive number, got ${v}`)
    this._capacity = Math.max(2, Math.floor(sliceDurationSec * sampleRate) * 2) // bytes
    this._maxSlices = Math.max(1, Math.floor(maxSlicesInMemory))
    this._sampleRate = sampleRate
    this.reset()
  }

  reset() {
    this._slices = [] // in memory, oldest first
    this._current = 0
    this._transcribe = 0
  }

  _open() {
    let s = this._slices[this._slices.length - 1]
    if (!s || s.index !== this._current) {
      const now = Date.now()
      s = { index: this._current, data: new Uint8Array(0), sampleCount: 0, startTime: now, endTime: now,
            isProcessed: false, isReleased: false }
      Object.defineProperty(s, '_parts', { value: [], writable: true }) // chunks not yet joined into data
      this._slices.push(s)
      this._release()
    }
    return s
  }

  _seal(s) {
    if (s._parts.length) {
      s.data = joinBytes([s.data, ...s._parts])
      s._parts = []
    }
    return s
  }

  _release() {
    while (this._slices.length > this._maxSlices) {
      const old = this._slices.shift()
      old.data = new Uint8Array(0)
      old._parts = []
      old.isReleased = true
    }
  }

  /** Adds 16-bit PCM bytes; returns { slice } when a slice filled up (and the next began). */
  addAudioData(data) {
    let bytes = data instanceof Uint8Array ? data : new Uint8Array(data)
    let filled
    while (bytes.length > 0) {
      const s = this._open()
      const room = this._capacity - s.sampleCount * 2
      const part = bytes.subarray(0, room)
      s._parts.push(part.slice())
      s.sampleCount += part.length >> 1
      s.endTime = Date.now()
      bytes = bytes.subarray(part.length)
      if (s.sampleCount * 2 >= this._capacity) {
        filled = this._seal(s)
        this._current++
      }
    }
    return filled ? { slice: filled } : {}
  }

  /** Closes the open slice (when it holds audio) and begins the next. */
  forceNextSlice() {
    const s = this._slices[this._slices.length - 1]
    const had = s && s.index === this._current && s.sampleCount > 0
    this._current++
    return had ? { slice: this._seal(s) } : {}
  }

  getSliceByIndex(index) {
    const s = this._slices.find((x) => x.index === index)
    return s ? this._seal(s) : undefined
  }

  /** The slice's audio (16-bit PCM bytes), or null once it has left memory. */
  getAudioDataForTranscription(index) {
    const s = this.getSliceByIndex(index)
    return s && !s.isReleased ? s.data : null
  }

  getCurrentSliceInfo() {
    return { currentSliceIndex: this._current, transcribeSliceIndex: this._transcribe, totalSlices: this._slices.length,
             memoryUsage: this.getMemoryUsage() }
  }

  getSliceForTranscription() {
    return this.getSliceByIndex(this._transcribe)
  }

  markSliceAsProcessed(index) {
    const s = this._slices.find((x) => x.index === index)
    if (s) s.isProcessed = true
  }

  moveToNextTranscribeSlice() {
    this._transcribe++
  }

  getMemoryUsage() {
    const totalSamples = this._slices.reduce((n, s) => n + (s.isReleased ? 0 : s.sampleCount), 0)
    return { slicesInMemory: this._slices.length, totalSamples,
             estimatedMB: Math.round(((totalSamples * 2) / (1024 * 1024)) * 100) / 100 }
  }
}

module.exports = { SliceManager }
