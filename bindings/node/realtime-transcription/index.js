'use strict'
// hark-whisper/realtime-transcription: whisper.rn 0.7's realtime-transcription entry point
// (RealtimeTranscriber, VAD_PRESETS, SliceManager, RingBuffer, RingBufferVad) on hark's engine,
// with audio stream adapters for Node: the microphone (PulseAudio / PipeWire), a file played in
// real time, and audio the app pushes.
const { RealtimeTranscriber } = require('./RealtimeTranscriber')
const { SliceManager } = require('./SliceManager')
const { RingBuffer } = require('./RingBuffer')
const { RingBufferVad } = require('./RingBufferVad')
const { VAD_PRESETS } = require('./presets')
const { MicrophoneAudioStreamAdapter } = require('./adapters/MicrophoneAudioStreamAdapter')
const { SimulateFileAudioStreamAdapter } = require('./adapters/SimulateFileAudioStreamAdapter')
const { PushAudioStreamAdapter } = require('./adapters/PushAudioStreamAdapter')

module.exports = {
  RealtimeTranscriber,
  SliceManager,
  RingBuffer,
  RingBufferVad,
  VAD_PRESETS,
  MicrophoneAudioStreamAdapter,
  SimulateFileAudioStreamAdapter,
  PushAudioStreamAdapter,
}
