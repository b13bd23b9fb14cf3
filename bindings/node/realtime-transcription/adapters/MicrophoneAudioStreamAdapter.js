'use strict'
// The microphone as whisper.rn's AudioStreamInterface: hark's PulseAudio capture (PipeWire serves
// the same API). { device }: 'default' or a source name ('alsa_input...', 'sink.monitor').
// Live audio: when transcription falls behind, what finds the buffer full is dropped and reported
// through onError rather than held in memory without bound.
const { NativeSourceAdapter } = require('./NativeSourceAdapter')

class MicrophoneAudioStreamAdapter extends NativeSourceAdapter {
  constructor(options = {}) {
    super({ kind: 'microphone', device: (options && options.device) || 'default' })
    this.live = true
  }
}

module.exports = { MicrophoneAudioStreamAdapter }
