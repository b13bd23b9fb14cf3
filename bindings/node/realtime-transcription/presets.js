'use strict'
// whisper.rn's VAD_PRESETS: Silero VAD options for common situations (its names and values).
// RingBufferVad takes one; RealtimeTranscriber uses its threshold and minSilenceDurationMs.
const preset = (threshold, minSpeechDurationMs, minSilenceDurationMs, maxSpeechDurationS, speechPadMs, samplesOverlap) =>
  Object.freeze({ threshold, minSpeechDurationMs, minSilenceDurationMs, maxSpeechDurationS, speechPadMs, samplesOverlap })

const VAD_PRESETS = Object.freeze({
  default: preset(0.5, 250, 100, 30, 30, 0.1),
  sensitive: preset(0.3, 100, 50, 15, 50, 0.2),
  'very-sensitive': preset(0.2, 100, 50, 15, 100, 0.3),
  conservative: preset(0.7, 500, 200, 25, 20, 0.05),
  'very-conservative': preset(0.8, 750, 300, 20, 10, 0.05),
  continuous: preset(0.4, 200, 300, 60, 50, 0.15),
  meeting: preset(0.45, 300, 150, 45, 75, 0.2),
  noisy: preset(0.75, 400, 100, 25, 40, 0.1),
})

module.exports = { VAD_PRESETS }
