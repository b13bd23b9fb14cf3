'use strict'
// A 16-bit PCM WAV written through whisper.rn's WavFileWriterFs interface ({ writeFile,
// appendFile, readFile, exists, unlink }, data as base64 strings), for an app that passes
// RealtimeTranscriber an `fs` (React Native's file systems have no streams). Without one, hark
// writes the file natively.
class WavFileWriter {
  constructor(fs, filePath, { sampleRate = 16000, channels = 1 } = {}) {
    for (const m of ['writeFile', 'appendFile', 'readFile', 'exists', 'unlink'])
      if (!fs || typeof fs[m] !== 'function') throw new TypeError(`fs must have ${m}() (whisper.rn's WavFileWriterFs)`)
    this._fs = fs
    this.filePath = filePath
    this._rate = sampleRate
    this._channels = channels
    this._bytes = 0
    this._chain = Promise.resolve()
  }

  _header(dataBytes) {
    const h = Buffer.alloc(44)
    h.write('RIFF', 0, 'ascii')
    h.writeUInt32LE(36 + dataBytes, 4)
    h.write('WAVEfmt ', 8, 'ascii')
    h.writeUInt32LE(16, 16)
    h.writeUInt16LE(1, 20) // PCM
    h.writeUInt16LE(this._channels, 22)
    h.writeUInt32LE(this._rate, 24)
    h.writeUInt32LE(this._rate * this._channels * 2, 28)
    h.writeUInt16LE(this._channels * 2, 32)
    h.writeUInt16LE(16, 34)
    h.write('data', 36, 'ascii')
    h.writeUInt32LE(dataBytes, 40)
    return h
  }

  initialize() {
    return (this._chain = this._chain.then(() => this._fs.writeFile(this.filePath, this._header(0).toString('base64'), 'base64')))
  }

  /** 16-bit PCM bytes, appended in the order given. */
  appendAudioData(bytes) {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
    this._bytes += bytes.byteLength
    return (this._chain = this._chain.then(() => this._fs.appendFile(this.filePath, b, 'base64')))
  }

  /** Writes the header's sizes. */
  finalize() {
    return (this._chain = this._chain.then(async () => {
      const all = Buffer.from(await this._fs.readFile(this.filePath, 'base64'), 'base64')
      this._header(all.length - 44).copy(all, 0)
      await this._fs.writeFile(this.filePath, all.toString('base64'), 'base64')
    }))
  }

  cancel() {
    return (this._chain = this._chain.then(async () => {
      if (await this._fs.exists(this.filePath)) await this._fs.unlink(this.filePath)
    }))
  }
}

module.exports = { WavFileWriter }
